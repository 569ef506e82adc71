/** The informers the manager runs: one per watched kind, shared by every reconciler that reads it. */
import type { Logger } from 'pino';
import type { ObjectCache } from '../../kube/cache.js';
import type { KubeClient } from '../../kube/client.js';
import { Informer } from '../../kube/informer.js';
import type { ControllerMetrics } from './metrics.js';
import type { Reconciler } from './reconciler.js';

/** What the informers need of the controller they feed. */
export interface InformerParts {
  readonly client: KubeClient;
  readonly cache: ObjectCache;
  readonly logger: Logger;
  readonly metrics: ControllerMetrics;
  readonly watchTimeoutSeconds: number;
}

/**
 * One informer per kind the reconcilers watch, by kind id, not started; the cache gets every index and trim
 * the watches declare. Two reconcilers must watch a kind with the same scope.
 */
export function createInformers(reconcilers: readonly Reconciler[], parts: InformerParts): Map<string, Informer> {
  const { cache } = parts;
  const informers = new Map<string, { informer: Informer; scopeText: string }>();
  for (const reconciler of reconcilers) {
    for (const watch of reconciler.watches) {
      for (const [indexName, fn] of Object.entries(watch.indexes ?? {})) cache.addIndex(watch.kind.id, indexName, fn);
      if (watch.trim) cache.setTrim(watch.kind.id, watch.trim);
      const scopeText = JSON.stringify(watch.scope ?? {});
      const existing = informers.get(watch.kind.id);
      if (existing) {
        if (existing.scopeText !== scopeText)
          throw new Error(
            `${reconciler.name} watches ${watch.kind.kind} with scope ${scopeText}, another reconciler with ${existing.scopeText}`,
          );
        continue;
      }
      const informer = new Informer({
        kind: watch.kind,
        ...(watch.scope ? { scope: watch.scope } : {}),
        client: parts.client,
        cache,
        logger: parts.logger,
        watchTimeoutSeconds: parts.watchTimeoutSeconds,
        onRelist: () => parts.metrics.relists.inc({ resource: watch.kind.plural }),
      });
      informers.set(watch.kind.id, { informer, scopeText });
    }
  }
  return new Map([...informers].map(([id, { informer }]) => [id, informer]));
}
