/**
 * Which reconciles end terminal (a failure retrying cannot fix, that only a change of the objects can):
 * an app whose delivery is refused, an agent-model app that also carries the pull label, a rollout whose
 * policy ConfigMap cannot be read. Each says why in the result, besides its condition.
 */
import { beforeEach, describe, expect, test } from '@jest/globals';
import { createApplicationReconciler } from '../../../src/controller/reconcilers/application.js';
import { createRolloutReconciler } from '../../../src/controller/reconcilers/rollout.js';
import type { Reconciler } from '../../../src/controller/runtime/reconciler.js';
import { PULL_LABEL } from '../../../src/model/core/keys.js';
import type { Application } from '../../../src/model/core/types.js';
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';
import { ROLLOUT_APP_LABEL, ROLLOUT_KIND_LABEL } from '../../../src/model/rollout/policy.js';
import { rolloutPolicyName } from '../../../src/model/rollout/state.js';
import { DELIVERY_ERROR_CONDITION, DELIVERY_MODEL_CONFLICT_CONDITION } from '../../../src/model/reconcile/status.js';
import { pullApplication, World } from '../../support/world.js';

const NS = 'argocd';
const KEY = `${NS}/guestbook`;
const info = () => ({ enqueuedAt: Date.now() });

describe('terminal reconcile results', () => {
  let world: World;
  let apps: Reconciler;
  beforeEach(() => {
    world = World.hub({ clusters: ['spoke1'], namespace: NS });
    apps = world.reconciler(createApplicationReconciler);
  });

  const condition = (type: string) =>
    world.get<Application>('Application', KEY)!.status?.conditions?.find((c) => c.type === type);

  test('GIVEN a pull app delivered as it should be WHEN reconciled THEN the result is not terminal', async () => {
    world.put('Application', pullApplication({ namespace: NS }));
    await world.settle(apps, KEY);
    expect(await apps.reconcile(KEY, info())).toBeUndefined();
  });

  test('GIVEN a pull app targeting a cluster the hub does not have WHEN reconciled THEN it ends terminal with the reason its condition shows', async () => {
    world.put('Application', pullApplication({ namespace: NS, cluster: 'ghost' }));
    const first = await apps.reconcile(KEY, info());
    const message = condition(DELIVERY_ERROR_CONDITION)?.message;
    expect(message).toContain('ManagedCluster "ghost" does not exist on this hub');
    expect(first).toStrictEqual({ terminal: message });
    // Nothing more to write, and still terminal.
    await world.settle(apps, KEY);
    expect(await apps.reconcile(KEY, info())).toStrictEqual({ terminal: message });
    expect(world.cache.list('ManifestWork')).toHaveLength(0);
  });

  test('GIVEN an agent-model app with the pull label WHEN reconciled THEN it ends terminal with the conflict its condition shows', async () => {
    const app = pullApplication({ namespace: NS });
    world.put('Application', {
      ...app,
      metadata: { ...app.metadata, labels: { [PULL_LABEL]: 'true', [DELIVERY_MODEL_LABEL]: 'agent-managed' } },
    });
    const result = await apps.reconcile(KEY, info());
    const message = condition(DELIVERY_MODEL_CONFLICT_CONDITION)?.message;
    expect(message).toContain(`${DELIVERY_MODEL_LABEL}=agent-managed and also ${PULL_LABEL}`);
    expect(result).toStrictEqual({ terminal: message });
  });

  test('GIVEN a rollout whose policy ConfigMap is not JSON WHEN reconciled THEN it ends terminal naming the ConfigMap, and writes nothing', async () => {
    const rollouts = world.reconciler(createRolloutReconciler, { argoNamespace: NS });
    world.put('ConfigMap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: rolloutPolicyName('web'),
        namespace: NS,
        labels: { [ROLLOUT_APP_LABEL]: 'web', [ROLLOUT_KIND_LABEL]: 'policy' },
      },
      data: { 'policy.json': '{not json' },
    } as never);
    const result = await rollouts.reconcile(`${NS}/web`, info());
    expect(result).toStrictEqual({ terminal: expect.stringContaining(`ConfigMap ${NS}/${rolloutPolicyName('web')}`) });
    expect((result as { terminal: string }).terminal).toMatch(/^rollout policy unreadable/);
    expect(world.writes).toStrictEqual([]);
  });
});
