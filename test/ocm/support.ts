/**
 * Shared pieces of the real OCM agent suites: the ManifestWorks pullfleet renders, an Argo CD-shaped
 * status for the spoke Application, and readers of what the agent reports (conditions, feedback values).
 */
import { parseAllDocuments } from 'yaml';
import { ARGOCD_API_VERSION, SPEC_HASH_ANNOTATION, WORK_API_VERSION } from '../../src/model/core/keys.js';
import type { Application, ManifestWork } from '../../src/model/core/types.js';
import { buildFleet } from '../fixtures/example-fleet.js';
import type { RawClient, RawObject } from '../support/raw-client.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

/** The static guestbook work of the example fleet, as synth writes it to dist/ (`hub/hub/works/prod-east.yaml`). */
export function renderedGuestbookWork(): ManifestWork {
  const text = buildFleet().renderFiles().get('hub/hub/works/prod-east.yaml');
  if (!text) throw new Error('the example fleet renders no hub/hub/works/prod-east.yaml');
  const work = parseAllDocuments(text)
    .map((d) => d.toJSON() as ManifestWork | null)
    .find((o) => o?.kind === 'ManifestWork' && o.spec.workload.manifests.some((m) => m.kind === 'Application'));
  if (!work) throw new Error('hub/hub/works/prod-east.yaml holds no ManifestWork delivering an Application');
  return work;
}

/** The payload Application of a work. */
export function payloadOf(work: ManifestWork): Application {
  const payload = work.spec.workload.manifests.find((m) => m.kind === 'Application');
  if (!payload) throw new Error(`ManifestWork ${work.metadata.name} delivers no Application`);
  return payload as unknown as Application;
}

/** Second-precision RFC 3339, as Kubernetes writes times. */
function kubeNow(offsetMs = 0): string {
  return new Date(Date.now() + offsetMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A status as Argo CD writes it on an Application that ran a forwarded sync (`forwardId` in its info). */
export function argoStatus(opts: {
  sync: string;
  health: string;
  phase: string;
  revision?: string;
  forwardId?: string;
  message?: string;
}): Obj {
  const revision = opts.revision ?? '53e28ff20cc530b9ada2173fbbd64d48338583ba';
  return {
    sync: {
      status: opts.sync,
      revision,
      comparedTo: {
        source: { repoURL: 'https://git.example/x.git' },
        destination: { server: 'https://kubernetes.default.svc' },
      },
    },
    health: { status: opts.health },
    reconciledAt: kubeNow(),
    operationState: {
      phase: opts.phase,
      message: opts.message ?? 'successfully synced (all tasks run)',
      startedAt: kubeNow(-2000),
      ...(opts.phase === 'Running' ? {} : { finishedAt: kubeNow() }),
      operation: {
        sync: { revision },
        ...(opts.forwardId ? { info: [{ name: 'pullfleet.io/forwarded', value: opts.forwardId }] } : {}),
      },
    },
    resources: [
      {
        group: 'apps',
        version: 'v1',
        kind: 'Deployment',
        namespace: 'guestbook',
        name: 'guestbook-ui',
        status: opts.sync,
        health: { status: opts.health, ...(opts.health === 'Healthy' ? {} : { message: 'rollout in progress' }) },
      },
      {
        version: 'v1',
        kind: 'Service',
        namespace: 'guestbook',
        name: 'guestbook-ui',
        status: 'Synced',
        health: { status: 'Healthy' },
      },
    ],
    summary: { images: ['gcr.io/heptio-images/ks-guestbook-demo:0.2'] },
  };
}

/** The feedback values the work's FEEDBACK_PATHS select from `app` (what a correct agent reports), by name. */
export function expectedFeedback(app: Obj): Record<string, string> {
  const s = app.status ?? {};
  const forward = (s.operationState?.operation?.info as Obj[] | undefined)?.find(
    (i) => i.name === 'pullfleet.io/forwarded',
  )?.value;
  const all: Record<string, unknown> = {
    healthStatus: s.health?.status,
    syncStatus: s.sync?.status,
    syncRevision: s.sync?.revision,
    operationStatePhase: s.operationState?.phase,
    operationStateStartedAt: s.operationState?.startedAt,
    operationStateMessage: s.operationState?.message,
    reconciledAt: s.reconciledAt,
    specHash: app.metadata?.annotations?.[SPEC_HASH_ANNOTATION],
    operationForwardId: forward,
    operationStateSyncRevision: s.operationState?.syncResult?.revision,
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => typeof v === 'string')) as Record<string, string>;
}

/** One manifest's status entry of a work, found by resourceMeta (kind/namespace/name). */
export function manifestStatus(work: Obj | undefined, kind: string, namespace: string, name: string): Obj | undefined {
  return (work?.status?.resourceStatus?.manifests as Obj[] | undefined)?.find(
    (m) =>
      m.resourceMeta?.kind === kind && m.resourceMeta?.name === name && (m.resourceMeta?.namespace ?? '') === namespace,
  );
}

/** Feedback values of one manifest as `{name: value}` (each value's type kept apart in `types`). */
export function feedbackValues(manifest: Obj | undefined): {
  values: Record<string, unknown>;
  types: Record<string, string>;
} {
  const values: Record<string, unknown> = {};
  const types: Record<string, string> = {};
  for (const v of (manifest?.statusFeedback?.values as Obj[] | undefined) ?? []) {
    const fv = v.fieldValue ?? {};
    types[v.name] = fv.type;
    values[v.name] = fv.string ?? fv.integer ?? fv.boolean ?? fv.jsonRaw;
  }
  return { values, types };
}

/** A condition by type. */
export function conditionOf(conditions: Obj[] | undefined, type: string): Obj | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Conditions reduced to what both agents are compared on (times left out). */
export function conditionShape(conditions: Obj[] | undefined): Obj[] {
  return (conditions ?? [])
    .map((c) => ({
      type: c.type,
      status: c.status,
      reason: c.reason,
      ...(c.message !== undefined ? { message: c.message } : {}),
    }))
    .sort((a, b) => String(a.type).localeCompare(String(b.type)));
}

export const APP_API = ARGOCD_API_VERSION;
export const WORK_API = WORK_API_VERSION;

/** Reads a ManifestWork from the hub. */
export function readWork(hub: RawClient, namespace: string, name: string): Promise<Obj | undefined> {
  return hub.get<Obj>(WORK_API, 'ManifestWork', namespace, name);
}

/** Reads an Application. */
export function readApp(client: RawClient, namespace: string, name: string): Promise<Obj | undefined> {
  return client.get<Obj>(APP_API, 'Application', namespace, name);
}

/** A copy of `o` as a RawObject (what the clients send). */
export function raw(o: unknown): RawObject {
  return JSON.parse(JSON.stringify(o)) as RawObject;
}

/** Writes one line to stderr (measurements), visible in the jest output. */
export function report(line: string): void {
  process.stderr.write(`ocm: ${line}\n`);
}
