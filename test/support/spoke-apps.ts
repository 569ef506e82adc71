/**
 * Spoke Applications with many resources, as the spoke's Argo CD reports them in `status.resources` (for the
 * resource summary tests and benchmark): a repeating mix of Deployments, Services, ConfigMaps and
 * ServiceAccounts in namespace `shop`, named `component-<i>`; the first Deployments are Degraded, then Missing
 * (and so OutOfSync), the first Services OutOfSync; everything else Healthy and Synced.
 */

/** One entry of the spoke Application's `status.resources`. */
export interface SpokeResource {
  group?: string;
  version: string;
  kind: string;
  namespace?: string;
  name: string;
  sync?: string;
  health?: string;
  message?: string;
}

export interface SpokeAppOptions {
  readonly resources: number;
  readonly degraded?: number;
  readonly missing?: number;
  readonly outOfSync?: number;
  readonly images?: readonly string[];
  /** The spoke's Argo CD keeps no per-resource health (Argo CD 3 default): no `health` on any resource. */
  readonly appTree?: boolean;
}

const KINDS = [
  { group: 'apps', kind: 'Deployment' },
  { group: '', kind: 'Service' },
  { group: '', kind: 'ConfigMap' },
  { group: '', kind: 'ServiceAccount' },
] as const;

/** The spoke Application (`object`, as the work agent sees it) and its resource entries. */
export function spokeApplication(options: SpokeAppOptions): {
  object: Record<string, unknown>;
  resources: SpokeResource[];
} {
  let degraded = options.degraded ?? 0;
  let missing = options.missing ?? 0;
  let outOfSync = options.outOfSync ?? 0;
  const resources: SpokeResource[] = [];
  for (let i = 0; i < options.resources; i++) {
    const { group, kind } = KINDS[i % KINDS.length];
    const name = `component-${i}`;
    const resource: SpokeResource = {
      ...(group ? { group } : {}),
      version: 'v1',
      kind,
      namespace: 'shop',
      name,
      sync: 'Synced',
      health: 'Healthy',
    };
    if (kind === 'Deployment' && degraded > 0) {
      degraded--;
      resource.health = 'Degraded';
      resource.message = `Deployment "${name}" exceeded its progress deadline`;
    } else if (kind === 'Deployment' && missing > 0) {
      missing--;
      resource.health = 'Missing';
      resource.sync = 'OutOfSync';
    } else if (kind === 'Service' && outOfSync > 0) {
      outOfSync--;
      resource.sync = 'OutOfSync';
    }
    if (options.appTree) {
      delete resource.health;
      delete resource.message;
    }
    resources.push(resource);
  }
  const status: Record<string, unknown> = {
    sync: { status: resources.some((r) => r.sync === 'OutOfSync') ? 'OutOfSync' : 'Synced' },
    health: {
      status: (options.degraded ?? 0) > 0 ? 'Degraded' : (options.missing ?? 0) > 0 ? 'Missing' : 'Healthy',
    },
    // Argo CD's ResourceStatus: `status` is the sync status, `health` an object.
    resources: resources.map(({ sync, health, message, ...id }) => ({
      ...id,
      ...(sync ? { status: sync } : {}),
      ...(health ? { health: { status: health, ...(message ? { message } : {}) } } : {}),
    })),
    summary: { images: [...(options.images ?? [])] },
    ...(options.appTree ? { resourceHealthSource: 'appTree' } : {}),
  };
  return {
    object: {
      apiVersion: 'argoproj.io/v1alpha1',
      kind: 'Application',
      metadata: { name: 'shop', namespace: 'argocd' },
      status,
    },
    resources,
  };
}
