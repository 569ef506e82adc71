/** Builders for agent-model report inputs: agent-managed ApplicationSets and the hub Applications the principal keeps. */
import { DELIVERY_MODEL_LABEL } from '../../../src/model/delivery/delivery-model.js';
import type { ApplicationSet } from '../../../src/model/report/report.js';
import type { Application, ApplicationStatus } from '../../../src/model/core/types.js';
import { placementApplicationSet } from '../../support/appsets.js';

export const NS = 'argocd';

/** An ApplicationSet with the agent-managed template: delivery-model label and destination.name '{{name}}'. */
export function agentAppSet(name = 'guestbook', placement = 'edge'): ApplicationSet {
  return placementApplicationSet({
    name,
    namespace: NS,
    placement,
    metadata: { uid: `${name}-uid`, generation: 1 },
    requeueAfterSeconds: 180,
    template: {
      metadata: { name: `{{name}}-${name}`, labels: { [DELIVERY_MODEL_LABEL]: 'agent-managed' } },
      spec: { project: 'default', destination: { name: '{{name}}', namespace: name } },
    },
  });
}

/** The hub Application an agent-managed ApplicationSet generates for `cluster`, with the status the principal mirrored. */
export function agentApp(
  cluster: string,
  status: ApplicationStatus | undefined,
  options: { appSet?: string; created?: string; model?: string; namespace?: string; owned?: boolean } = {},
): Application {
  const appSet = options.appSet ?? 'guestbook';
  const model = options.model ?? 'agent-managed';
  return {
    apiVersion: 'argoproj.io/v1alpha1',
    kind: 'Application',
    metadata: {
      name: `${cluster}-${appSet}`,
      namespace: options.namespace ?? NS,
      uid: `${cluster}-agent-uid`,
      creationTimestamp: options.created ?? '2026-01-01T00:00:00Z',
      labels: { [DELIVERY_MODEL_LABEL]: model },
      ...(options.owned === false
        ? {}
        : {
            ownerReferences: [
              {
                apiVersion: 'argoproj.io/v1alpha1',
                kind: 'ApplicationSet',
                name: appSet,
                uid: `${appSet}-uid`,
                controller: true,
              },
            ],
          }),
    },
    spec: {
      project: 'default',
      destination:
        model === 'agent-autonomous'
          ? { server: 'https://kubernetes.default.svc', namespace: appSet }
          : { name: cluster, namespace: appSet },
    },
    ...(status ? { status } : {}),
  };
}

/** A status as the principal mirrors it from the agent. */
export function mirrored(options: {
  sync?: string;
  health?: string;
  revision?: string;
  phase?: string;
  message?: string;
  reconciledAt?: string;
}): ApplicationStatus {
  return {
    ...(options.sync
      ? { sync: { status: options.sync, ...(options.revision ? { revision: options.revision } : {}) } }
      : {}),
    ...(options.health ? { health: { status: options.health } } : {}),
    ...(options.phase
      ? {
          operationState: {
            operation: {},
            phase: options.phase,
            startedAt: '2026-01-01T00:55:00Z',
            ...(options.message ? { message: options.message } : {}),
          },
        }
      : {}),
    ...(options.reconciledAt ? { reconciledAt: options.reconciledAt } : {}),
  };
}
