/**
 * Which delivery model an object uses, read from what synth and the user put on it: the pull label of an
 * ApplicationSet's template, and the delivery-model label ({@link DELIVERY_MODEL_LABEL}) of an Application or
 * ApplicationSet. The report, plan, propagation, the Application reconciler and `pullfleet status` all classify
 * through these functions.
 */
import { PULL_LABEL } from '../core/keys.js';
import { parseBool } from '../core/names.js';
import type { Application, KubeObject } from '../core/types.js';
import { DELIVERY_MODEL_LABEL, DeliveryModel } from './delivery-model.js';

/** The part of an ApplicationSet the classification reads: its template's labels and destination. */
export interface ApplicationSetTemplateView {
  readonly spec?: {
    readonly template?: {
      readonly metadata?: { readonly labels?: Readonly<Record<string, string>> };
      readonly spec?: unknown;
    };
  };
}

/** The ApplicationSet template destination that routes each generated Application to its agent. */
const AGENT_DESTINATION_TEMPLATES: readonly string[] = ['{{name}}', '{{ name }}', '{{.name}}', '{{ .name }}'];

/** Whether an ApplicationSet delivers through the pull model (its template carries the pull label). */
export function isPullApplicationSet(appSet: ApplicationSetTemplateView): boolean {
  return parseBool(appSet.spec?.template?.metadata?.labels?.[PULL_LABEL]);
}

/** Whether an object's delivery-model label names an argocd-agent model (`agent-…`). */
export function isAgentModel(
  object: Pick<KubeObject, 'metadata'> | { metadata?: { labels?: Record<string, string> } } | undefined,
): boolean {
  const value = object?.metadata?.labels?.[DELIVERY_MODEL_LABEL]?.trim();
  return value !== undefined && value.startsWith('agent-');
}

/**
 * Whether an ApplicationSet delivers through argocd-agent in managed mode: its template carries the
 * delivery-model label `agent-managed` and routes by `destination.name: '{{name}}'`.
 */
export function isAgentApplicationSet(appSet: ApplicationSetTemplateView): boolean {
  const template = appSet.spec?.template;
  if (template?.metadata?.labels?.[DELIVERY_MODEL_LABEL]?.trim() !== DeliveryModel.AGENT_MANAGED) return false;
  const name = (template.spec as { destination?: { name?: unknown } } | undefined)?.destination?.name;
  return typeof name === 'string' && AGENT_DESTINATION_TEMPLATES.includes(name.trim());
}

/**
 * The cluster (agent) an agent-model hub Application belongs to: `spec.destination.name` when set
 * (destination-based mapping, and what pullfleet renders for managed agents), else the Application's
 * namespace (the principal keeps each agent's Applications, and mirrors an autonomous agent's, in a
 * namespace named after the agent).
 */
export function agentCluster(app: Pick<Application, 'metadata' | 'spec'>): string | undefined {
  const destination = app.spec?.destination?.name?.trim();
  if (destination && destination !== 'in-cluster') return destination;
  if (app.metadata.labels?.[DELIVERY_MODEL_LABEL]?.trim() === DeliveryModel.AGENT_AUTONOMOUS)
    return app.metadata.namespace || undefined;
  return destination ? undefined : app.metadata.namespace || undefined;
}
