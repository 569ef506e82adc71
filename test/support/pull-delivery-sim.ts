/**
 * The actors around pullfleet's committed output, played against a real API server for the move
 * end-to-end suites (test/envtest/managed-handover.test.ts, test/envtest/model-moves.test.ts). Each
 * behaves as its source code does, as far as a move can tell:
 *
 * - the hub Argo CD applying dist/: creates and updates the hub Applications, ManifestWorks and
 *   ApplicationSets of `hub/<hub>/` (only those rendered differently: it syncs what is out of sync),
 *   and prunes what a later commit drops;
 * - the applicationset-controller: one Application per spoke the placement decides (`decisions`), with
 *   `{{name}}` filled in; deletes the generated apps a set no longer wants;
 * - the pullfleet controller: a work (`buildManifestWork`) for every basic generated app with the pull
 *   label, written when the live one is not up to date (`workUpToDate`); the work of an app that is gone, deleted or no longer basic is deleted; a deleted basic hub
 *   app (static or generated) keeps its Argo CD finalizers until no work of it is left;
 * - the klusterlet work agent (OCM v1.3.1's appliers, played by `WorkAgent.applyManifest` of
 *   test/support/work-agent.ts): applies each work's Applications server-side (force, its own field
 *   manager; `CreateOnly` only when the Application is missing), with the
 *   `open-cluster-management.io/config-spec-hash` annotation, and skips the apply while the spoke
 *   Application carries the hash of the manifest (so a spoke edit, or an operation the spoke cleared, stays
 *   until the work changes); makes each Application it applies owned by the work's AppliedManifestWork
 *   (`<sha256 of the hub URL>-<work>`, a uid of its own for each life of the work, kept in memory: nothing
 *   serves that kind here) unless the work orphans it; reports `Applied` at the work's generation, holds the
 *   work with its cleanup finalizer; when the work is deleted, or an Application is dropped from a work
 *   that stays, it deletes what it applied and still owns (Foreground: the work goes only once those are
 *   gone; an Application another work owns too only loses this owner);
 * - the spoke Argo CD: an Application deleted while it carries the resources finalizer prunes its
 *   workload (recorded as a cascade), then its finalizers go; an agent-autonomous spoke's
 *   `pullfleet-spoke-apps` (delivered by the bootstrap work) applies the spoke folder of the current
 *   commit with its own field manager and never prunes;
 * - the argocd-agent principal (argoproj-labs/argocd-agent principal/callbacks.go): a hub Application
 *   first seen routed to an agent (`spec.destination.name`) is sent as a Create, an existing one that
 *   starts (or keeps) being routed as a SpecUpdate, one that stops naming the agent as a Delete to it;
 *   an event for an agent that has left its spoke reaches nothing (recorded in `dropped`);
 * - a managed agent (agent/inbound.go, internal/manager/application/application.go): an existing spoke
 *   Application without `argocd.argoproj.io/source-uid` makes it refuse every event; a missing one is
 *   created with the source UID, `destination.name: in-cluster` and the incoming finalizers; a Delete
 *   deletes its own copy with its finalizers;
 * - an autonomous agent: mirrors each Application of its spoke to the hub, in the namespace named after
 *   the agent, carrying the spoke copy's UID as its source UID; it never writes the spoke copy.
 *
 * One API server plays hub and spokes: each spoke's Applications live in a namespace of their own
 * (every namespace a payload names maps there); its works live in the namespace named after it, as on
 * a hub.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { Fleet } from '../../src/constructs/index.js';
import {
  CLEANUP_FINALIZER,
  ARGOCD_API_VERSION,
  ARGOCD_RESOURCES_FINALIZERS,
  MANAGED_CLUSTER_ANNOTATION,
  PULL_LABEL,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { type Application, type ManifestWork } from '../../src/model/core/types.js';
import { buildManifestWork } from '../../src/model/delivery/manifestwork.js';
import { isAgentModel } from '../../src/model/delivery/classification.js';
import { workUpToDate } from '../../src/model/reconcile/propagation.js';
import type { TestCluster } from './cluster.js';
import {
  newAppliedManifestWork,
  WORK_AGENT_FIELD_MANAGER,
  WorkAgent,
  type AppliedManifestWorkRef,
  type AppliedResource,
} from './work-agent.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export const WORK_AGENT_MANAGER = WORK_AGENT_FIELD_MANAGER;
export const SPOKE_FOLDER_MANAGER = 'argocd-pullfleet-spoke-apps';
export const WORK_CLEANUP_FINALIZER = 'cluster.open-cluster-management.io/manifest-work-cleanup';
export const SOURCE_UID = 'argocd.argoproj.io/source-uid';
const BOOTSTRAP_WORK = 'pullfleet-bootstrap';
const SPOKE_FOLDER_APP = 'pullfleet-spoke-apps';
const APPSET_LABEL = 'test.pullfleet.io/appset';

/** One step's committed dist/: its folder, its files, the hub objects the hub Argo CD applies, the spoke folders. */
export interface Commit {
  readonly dir: string;
  readonly files: Map<string, string>;
  readonly objects: Obj[];
  /** Applications listed in `<hub>/spokes/<spoke>/applications.yaml`, by spoke. */
  readonly folders: Map<string, Obj[]>;
}

const parse = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map((d) => d.toJSON() as Obj | null)
    .filter((o): o is Obj => !!o);
const refOf = (o: Obj) => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  namespace: o.metadata.namespace,
  name: o.metadata.name,
});

/** Renders `fleet` to a fresh folder (the committed dist/ of that step) and reads what the actors see. */
export function commitStep(fleet: Fleet, dirs: string[], hubName = 'hub'): Commit {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-move-'));
  dirs.push(dir);
  const files = fleet.renderFiles();
  const objects: Obj[] = [];
  const folders = new Map<string, Obj[]>();
  for (const [file, text] of files) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), text);
    if (!file.endsWith('.yaml')) continue;
    const folder = new RegExp(`^${hubName}/spokes/([^/]+)/`).exec(file);
    if (folder)
      folders.set(folder[1], [
        ...(folders.get(folder[1]) ?? []),
        ...parse(text).filter((o) => o.kind === 'Application'),
      ]);
    if (!file.startsWith(`${hubName}/${hubName}/`)) continue;
    objects.push(
      ...parse(text).filter(
        (o) => o.kind === 'Application' || o.kind === 'ManifestWork' || o.kind === 'ApplicationSet',
      ),
    );
  }
  return { dir, files, objects, folders };
}

export class PullDeliverySim {
  /** `<spoke>/<app>` of every spoke Application deleted with the resources finalizer (its workload pruned). */
  readonly cascades: string[] = [];
  /** Events a managed agent refused. */
  readonly refusals: string[] = [];
  /** Events the principal sent to a running managed agent: `<type> <spoke>/<app>`. */
  readonly events: string[] = [];
  /** Events the principal sent to an agent that is no longer on its spoke. */
  readonly dropped: string[] = [];
  /** `<spoke>/<app>` whose workload runs: added when an Application is created on a spoke, removed by a cascade. */
  readonly workload = new Set<string>();
  /** The argocd-agent running on each spoke, if any (the test installs and removes them). */
  readonly agents = new Map<string, 'managed' | 'autonomous'>();
  /** The applicationset-controller's placement decisions: the spokes a placement selects. */
  decisions: (placement: string) => readonly string[] = () => [];

  private readonly dirs: string[] = [];
  private appSets: Obj[] = [];
  private applied: Obj[] = [];
  private folders = new Map<string, Obj[]>();
  private readonly controllerWorks = new Set<string>(); // `<spoke>/<work>`
  /** `<spoke>/<work>` → its AppliedManifestWork and the Applications it applied (its `status.appliedResources`). */
  private readonly appliedWorks = new Map<string, { owner: AppliedManifestWorkRef; resources: AppliedResource[] }>();
  private agent?: WorkAgent;
  private hubServer?: string;
  private readonly seen = new Map<string, { routed?: string; resourceVersion: string; name: string }>(); // by hub app uid

  constructor(
    readonly cluster: TestCluster,
    readonly hubNs: string,
    readonly spokes: readonly string[],
  ) {}

  /** Where spoke `spoke`'s Applications live. */
  appNs(spoke: string): string {
    return `${spoke}-apps`;
  }

  spokeRef(spoke: string, name: string) {
    return { apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace: this.appNs(spoke), name };
  }

  readSpokeApp(spoke: string, name: string): Promise<Application | undefined> {
    return this.cluster.get<Application>(this.spokeRef(spoke, name));
  }

  readHubApp(name: string, namespace = this.hubNs): Promise<Application | undefined> {
    return this.cluster.get<Application>({ apiVersion: ARGOCD_API_VERSION, kind: 'Application', namespace, name });
  }

  namespaces(): string[] {
    return [this.hubNs, ...this.spokes.flatMap((s) => [s, this.appNs(s)])];
  }

  async createNamespaces(): Promise<void> {
    for (const ns of this.namespaces())
      await this.cluster.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }

  /** Renders `fleet` as the committed dist/ of one step (removed by `cleanup`). */
  commit(fleet: Fleet): Commit {
    return commitStep(fleet, this.dirs);
  }

  /** Deletes the namespaces and the committed folders. */
  async cleanup(): Promise<void> {
    for (const ns of this.namespaces())
      await this.cluster.delete({ apiVersion: 'v1', kind: 'Namespace', name: ns }).catch(() => undefined);
    for (const dir of this.dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  }

  /** The works of `spoke` that deliver its apps (the bootstrap work, Orphan, stays throughout). */
  async works(spoke: string): Promise<ManifestWork[]> {
    return (await this.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', { namespace: spoke })).filter(
      (w) => w.metadata.name !== BOOTSTRAP_WORK && w.spec.workload.manifests.some((m) => m.kind === 'Application'),
    );
  }

  /** The hub Argo CD applies `commit` (create, update, prune); the spoke folders become those of the commit. */
  async hubArgoApply(commit: Commit): Promise<void> {
    this.appSets = commit.objects.filter((o) => o.kind === 'ApplicationSet');
    this.folders = commit.folders;
    const next = commit.objects.filter((o) => o.kind !== 'ApplicationSet');
    const key = (o: Obj) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`;
    // Argo CD syncs only what is out of sync: an object rendered as before is not written again
    const before = new Map(this.applied.map((o) => [key(o), JSON.stringify(o)]));
    for (const o of next)
      if (before.get(key(o)) !== JSON.stringify(o))
        await this.cluster.apply({ ...o, metadata: { ...o.metadata } }, 'argocd-controller');
    const kept = new Set(next.map(key));
    for (const o of this.applied) if (!kept.has(key(o))) await this.cluster.delete(refOf(o)); // prune
    this.applied = next;
  }

  /** The resource version of every Application and ManifestWork the actors read or write. */
  private async fingerprint(): Promise<string> {
    const versions: string[] = [];
    for (const namespace of this.namespaces()) {
      for (const kind of [
        [ARGOCD_API_VERSION, 'Application'],
        [WORK_API_VERSION, 'ManifestWork'],
      ] as const) {
        for (const o of await this.cluster.list<Obj>(kind[0], kind[1], { namespace }))
          versions.push(`${kind[1]}/${namespace}/${o.metadata.name}@${o.metadata.resourceVersion}`);
      }
    }
    return versions.sort().join(',');
  }

  /**
   * Lets every actor run until a round changes nothing on the server (at most `rounds` rounds): each
   * acts on what the server holds, so the next round would do the same.
   */
  async settle(rounds = 10): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      const before = await this.fingerprint();
      await this.appSetController();
      await this.pullfleetController();
      await this.workAgent();
      await this.spokeArgo();
      await this.principal();
      await this.autonomousAgents();
      if ((await this.fingerprint()) === before) return;
    }
    throw new Error(`the actors still change objects after ${rounds} rounds`);
  }

  /** Applies `commit` as the hub Argo CD does and lets everything settle. */
  async step(commit: Commit): Promise<void> {
    await this.hubArgoApply(commit);
    await this.settle();
  }

  private async appSetController(): Promise<void> {
    const wanted = new Set<string>();
    for (const set of this.appSets) {
      const placement = set.spec.generators?.[0]?.clusterDecisionResource?.labelSelector?.matchLabels?.[
        'cluster.open-cluster-management.io/placement'
      ] as string;
      for (const spoke of this.decisions(placement)) {
        const template = JSON.parse(JSON.stringify(set.spec.template).replaceAll('{{name}}', spoke)) as Obj;
        const app = {
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          metadata: {
            ...template.metadata,
            namespace: this.hubNs,
            labels: { ...template.metadata.labels, [APPSET_LABEL]: set.metadata.name },
          },
          spec: template.spec,
        };
        wanted.add(app.metadata.name);
        // An Application being deleted is not updated: the API server refuses the finalizers the template would
        // add back (upstream's update fails and is retried until the Application is gone).
        const live = await this.cluster.get<Application>({
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          namespace: this.hubNs,
          name: app.metadata.name as string,
        });
        if (live?.metadata.deletionTimestamp) continue;
        await this.cluster.apply(app, 'applicationset-controller');
      }
    }
    for (const app of await this.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
      namespace: this.hubNs,
      labelSelector: APPSET_LABEL,
    })) {
      if (!wanted.has(app.metadata.name) && !app.metadata.deletionTimestamp) await this.cluster.delete(refOf(app));
    }
  }

  private async pullfleetController(): Promise<void> {
    const writing = new Set<string>();
    for (const app of await this.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
      namespace: this.hubNs,
    })) {
      const spoke = app.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION];
      if (app.metadata.deletionTimestamp) {
        // works first (the sweep below deletes a generated app's), then its Argo CD finalizers
        const work = spoke
          ? await this.cluster.get<ManifestWork>({
              apiVersion: WORK_API_VERSION,
              kind: 'ManifestWork',
              namespace: spoke,
              name: manifestWorkName(this.hubNs, app.metadata.name),
            })
          : undefined;
        // (and its own cleanup finalizer, which ApplicationSet templates carry)
        if (
          !work &&
          app.metadata.finalizers?.some((f) => ARGOCD_RESOURCES_FINALIZERS.includes(f) || f === CLEANUP_FINALIZER)
        )
          await this.cluster.mergePatch(refOf(app as Obj), { metadata: { finalizers: null } });
        continue;
      }
      if (!app.metadata.labels?.[APPSET_LABEL] || app.metadata.labels?.[PULL_LABEL] !== 'true' || isAgentModel(app))
        continue;
      const work = buildManifestWork(app);
      const key = `${work.metadata.namespace}/${work.metadata.name}`;
      writing.add(key);
      this.controllerWorks.add(key);
      // as the controller: written only when the live work differs from the one it builds
      const live = await this.cluster.get<ManifestWork>({
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        namespace: work.metadata.namespace!,
        name: work.metadata.name,
      });
      if (!live || !workUpToDate(live, work)) await this.cluster.apply(work, 'pullfleet-controller');
    }
    for (const key of [...this.controllerWorks]) {
      if (writing.has(key)) continue;
      const [namespace, name] = key.split('/') as [string, string];
      await this.cluster.delete({ apiVersion: WORK_API_VERSION, kind: 'ManifestWork', namespace, name });
      this.controllerWorks.delete(key);
    }
  }

  /** The spoke's record of what `work` applied (its AppliedManifestWork), made when the agent first applies it. */
  private appliedWork(spoke: string, work: ManifestWork) {
    const key = `${spoke}/${work.metadata.name}`;
    let applied = this.appliedWorks.get(key);
    if (!applied) {
      this.hubServer ??= this.cluster.kubeConfig().getCurrentCluster()?.server ?? this.cluster.description;
      applied = { owner: newAppliedManifestWork(this.hubServer, work.metadata.name), resources: [] };
      this.appliedWorks.set(key, applied);
    }
    return applied;
  }

  private async workAgent(): Promise<void> {
    this.agent ??= new WorkAgent(this.cluster);
    for (const spoke of this.spokes) {
      for (const work of await this.cluster.list<ManifestWork>(WORK_API_VERSION, 'ManifestWork', {
        namespace: spoke,
      })) {
        const ref = refOf(work);
        const key = `${spoke}/${work.metadata.name}`;
        const apps = (work.spec.workload.manifests as Obj[]).filter((m) => m.kind === 'Application');
        if (work.metadata.deletionTimestamp) {
          // what it applied and still owns goes (nothing, when the work orphans it); the work stays until it is gone
          const applied = this.appliedWorks.get(key);
          if (applied) {
            applied.resources = await this.agent.deleteApplied(applied.resources, applied.owner);
            if (applied.resources.length) continue;
          }
          await this.cluster.mergePatch(ref, { metadata: { finalizers: null } });
          this.appliedWorks.delete(key);
          continue;
        }
        if (!work.metadata.finalizers?.includes(WORK_CLEANUP_FINALIZER))
          await this.cluster.mergePatch(ref, { metadata: { finalizers: [WORK_CLEANUP_FINALIZER] } });
        const applied = this.appliedWork(spoke, work);
        const results: AppliedResource[] = [];
        for (const m of apps) {
          const { object, created } = await this.agent.applyManifest(work, m, applied.owner, this.appNs(spoke));
          results.push({ ...this.spokeRef(spoke, m.metadata.name as string), uid: object.metadata.uid as string });
          if (created && m.metadata.name !== SPOKE_FOLDER_APP) this.workload.add(`${spoke}/${m.metadata.name}`);
        }
        // dropped from the work: deleted unless orphaned (or owned by another work too)
        const dropped = applied.resources.filter((r) => !results.some((n) => n.name === r.name));
        applied.resources = [...results, ...(await this.agent.deleteApplied(dropped, applied.owner))];
        const current = await this.cluster.get<ManifestWork>(ref);
        const condition = current?.status?.conditions?.find((c) => c.type === 'Applied');
        if (current && condition?.observedGeneration !== current.metadata.generation) {
          await this.cluster.replaceStatus({
            ...(current as Obj),
            status: {
              conditions: [
                {
                  type: 'Applied',
                  status: 'True',
                  reason: 'AppliedManifestWorkComplete',
                  message: 'applied',
                  lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
                  observedGeneration: current.metadata.generation,
                },
              ],
            },
          });
        }
      }
    }
  }

  private async spokeArgo(): Promise<void> {
    for (const spoke of this.spokes) {
      const apps = await this.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
        namespace: this.appNs(spoke),
      });
      for (const app of apps) {
        if (!app.metadata.deletionTimestamp) continue;
        const finalizers = app.metadata.finalizers ?? [];
        if (finalizers.some((f) => ARGOCD_RESOURCES_FINALIZERS.includes(f))) {
          this.cascades.push(`${spoke}/${app.metadata.name}`);
          this.workload.delete(`${spoke}/${app.metadata.name}`);
        }
        if (finalizers.length)
          await this.cluster.mergePatch(this.spokeRef(spoke, app.metadata.name), { metadata: { finalizers: null } });
      }
      // pullfleet-spoke-apps: syncs the spoke folder (automated, prune: false)
      const folderApp = apps.find((a) => a.metadata.name === SPOKE_FOLDER_APP && !a.metadata.deletionTimestamp);
      if (!folderApp) continue;
      for (const m of this.folders.get(spoke) ?? []) {
        const existing = await this.readSpokeApp(spoke, m.metadata.name);
        await this.cluster.apply(
          { ...m, metadata: { ...m.metadata, namespace: this.appNs(spoke) } },
          SPOKE_FOLDER_MANAGER,
        );
        if (!existing) this.workload.add(`${spoke}/${m.metadata.name}`);
      }
    }
  }

  private async agentHandle(
    spoke: string,
    type: 'Create' | 'SpecUpdate' | 'Delete',
    incoming: Application,
  ): Promise<void> {
    const event = `${type} ${spoke}/${incoming.metadata.name}`;
    if (this.agents.get(spoke) !== 'managed') {
      this.dropped.push(event);
      return;
    }
    this.events.push(event);
    const ref = this.spokeRef(spoke, incoming.metadata.name);
    const existing = await this.readSpokeApp(spoke, incoming.metadata.name);
    if (existing && !existing.metadata.annotations?.[SOURCE_UID]) {
      this.refusals.push(`${event}: source UID Annotation is not found`);
      return;
    }
    if (type === 'Delete') {
      if (existing) await this.cluster.delete(ref); // with its finalizers
      return;
    }
    const body = {
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      metadata: {
        name: incoming.metadata.name,
        namespace: this.appNs(spoke),
        labels: incoming.metadata.labels,
        annotations: {
          ...incoming.metadata.annotations,
          [SOURCE_UID]: existing?.metadata.annotations?.[SOURCE_UID] ?? incoming.metadata.uid!,
        },
        ...(incoming.metadata.finalizers?.length ? { finalizers: incoming.metadata.finalizers } : {}),
      },
      spec: { ...incoming.spec, destination: { name: 'in-cluster', namespace: incoming.spec.destination?.namespace } },
    };
    if (!existing) {
      await this.cluster.create(body);
      this.workload.add(`${spoke}/${incoming.metadata.name}`);
    } else if (existing.metadata.annotations?.[SOURCE_UID] === incoming.metadata.uid) {
      await this.cluster.mergePatch(ref, {
        metadata: { labels: body.metadata.labels, annotations: body.metadata.annotations },
        spec: body.spec,
      });
    } else {
      await this.cluster.delete(ref); // recreate policy: deleted with its finalizers
    }
  }

  private async principal(): Promise<void> {
    const apps = await this.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', { namespace: this.hubNs });
    const present = new Set<string>();
    for (const app of apps) {
      const uid = app.metadata.uid!;
      present.add(uid);
      const name = app.spec.destination?.name;
      const routed = name && this.spokes.includes(name) && !app.metadata.deletionTimestamp ? name : undefined;
      const before = this.seen.get(uid);
      this.seen.set(uid, { routed, resourceVersion: app.metadata.resourceVersion!, name: app.metadata.name });
      if (!before) {
        if (routed) await this.agentHandle(routed, 'Create', app);
        continue;
      }
      if (before.routed && before.routed !== routed) await this.agentHandle(before.routed, 'Delete', app);
      if (routed && (before.routed !== routed || before.resourceVersion !== app.metadata.resourceVersion))
        await this.agentHandle(routed, 'SpecUpdate', app);
    }
    for (const [uid, state] of [...this.seen]) {
      if (present.has(uid)) continue;
      this.seen.delete(uid);
      if (state.routed)
        await this.agentHandle(state.routed, 'Delete', { metadata: { name: state.name } } as Application);
    }
  }

  private async autonomousAgents(): Promise<void> {
    for (const [spoke, mode] of this.agents) {
      if (mode !== 'autonomous') continue;
      for (const app of await this.cluster.list<Application>(ARGOCD_API_VERSION, 'Application', {
        namespace: this.appNs(spoke),
      })) {
        if (app.metadata.name === SPOKE_FOLDER_APP || app.metadata.deletionTimestamp) continue;
        await this.cluster.apply(
          {
            apiVersion: ARGOCD_API_VERSION,
            kind: 'Application',
            metadata: { name: app.metadata.name, namespace: spoke, annotations: { [SOURCE_UID]: app.metadata.uid! } },
            spec: app.spec,
          },
          'argocd-agent-principal',
        );
      }
    }
  }
}
