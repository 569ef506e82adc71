/**
 * Shard assignment: which of `count` shards each cluster, hub Application, ManifestWork and reconcile key
 * belongs to, how many shards there may be, and the Lease each shard is held through. Pure; the controller
 * applies it (src/controller/runtime/shards.ts), the install construct and the configuration check the
 * shard count with it.
 *
 * A cluster belongs to shard `fnv1a32(cluster name) % count`: pullfleet's own assignment, stable because a
 * ManagedCluster's name never changes. (Argo CD's legacy distribution uses the same hash on another input,
 * the cluster Secret's UID, so its shard numbers differ from these and change when the Secret is
 * re-created; docs/reference/upstream-contract.md.) With one shard everything is shard 0.
 */
import { targetCluster } from '../delivery/manifestwork.js';
import type { KubeObject } from '../core/types.js';
import type { PropagationPlan } from './propagation.js';

/** Most shards an install may have (`--shards`, `ControllerInstall` `shards`). */
export const MAX_SHARDS = 64;

/** Whether `count` is a valid number of shards: a whole number from 1 to {@link MAX_SHARDS}. */
export function isShardCount(count: number): boolean {
  return Number.isInteger(count) && count >= 1 && count <= MAX_SHARDS;
}

/** 32-bit FNV-1a of the UTF-8 bytes of `text`. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** The shard of a value (a cluster name, a reconcile key) among `count` shards. */
export function shardOf(value: string, count: number): number {
  return count <= 1 ? 0 : fnv1a32(value) % count;
}

/** The shard of a ManifestWork: the shard of its cluster, which is its namespace. */
export function workShard(namespace: string | undefined, count: number): number {
  return shardOf(namespace ?? '', count);
}

/**
 * The shard of a hub Application: the shard of the cluster it targets, so an app and its ManifestWork are
 * handled by one shard; an app that names no cluster goes by its own `<namespace>/<name>`.
 */
export function applicationShard(app: Pick<KubeObject, 'metadata'>, count: number): number {
  const cluster = targetCluster(app);
  return shardOf(cluster ?? `${app.metadata.namespace ?? ''}/${app.metadata.name}`, count);
}

/** Name of the Lease of `shard` (one shard: the plain Lease name, as without sharding). */
export function shardLeaseName(leaseName: string, shard: number, count: number): string {
  return count <= 1 ? leaseName : `${leaseName}-shard-${shard}`;
}

/**
 * The part of a propagation plan a replica may carry out: writes to ManifestWorks of clusters of other
 * shards are left out (their shard's replica carries them out from the same plan).
 */
export function writablePlan(
  plan: PropagationPlan,
  mayWrite: (ref: { readonly namespace: string; readonly name: string }) => boolean,
): PropagationPlan {
  const apply = plan.apply?.metadata.namespace
    ? mayWrite({ namespace: plan.apply.metadata.namespace, name: plan.apply.metadata.name })
    : true;
  const { apply: _apply, adopt, orphan, ...rest } = plan;
  return {
    ...rest,
    ...(plan.apply && apply ? { apply: plan.apply } : {}),
    ...(adopt && mayWrite(adopt) ? { adopt } : {}),
    ...(orphan ? { orphan: orphan.filter(mayWrite) } : {}),
    deletes: plan.deletes.filter(mayWrite),
  };
}
