/**
 * The real world the plan oracle holds `pullfleet plan` to (test/oracle/, `npm run test:oracle`):
 *
 * - the hub: the envtest API server the runner started (scripts/test-envtest.ts);
 * - one spoke API server with OCM's real work agent (v1.3.1) for each of the 8 spoke slots of
 *   {@link ORACLE_POOL} (test/support/real-ocm.ts): works in the hub's cluster namespaces become Applications
 *   on the spoke server, in the seed's Argo CD namespace (their names carry the cluster, so the slots share
 *   one server without collisions);
 * - per case, the controller as it ships (test/support/shipped-controller.ts: its own process, as its
 *   ServiceAccount, only the RBAC its install grants), with the case's flags, in namespaces of the case's own.
 *
 * Played here, as the upstream programs do it:
 * - the hub's Argo CD: applies what changed in `<hub>/hub/` (server-side apply; Applications in a seeded
 *   order, one at a time, as Argo CD creates them) and prunes what left it (not what carries Prune=false);
 * - the registration agent and the placement controller: ManagedClusters get the labels, cluster-set label
 *   and taints of the plan state, and PlacementDecisions the offline evaluation of each Placement (held to
 *   the real placement controller by a differential test of its own);
 * - the applicationset-controller: one hub Application per decision from each ApplicationSet's template,
 *   owned by it; generated apps no longer decided (or of a removed ApplicationSet: the garbage collector)
 *   deleted; an ApplicationSet with RollingSync steps rolled out by Argo CD 3.5.1's progressive sync
 *   (test/support/progressive-sync-sim.ts), and deleted in reverse step order with `deletionOrder: Reverse`;
 * - each spoke's Argo CD: an Application with an enabled automated policy syncs a new revision by itself,
 *   one without it only when it carries `operation` (else it reports OutOfSync); every one reports Synced
 *   and Healthy at the revision it synced, and one being deleted has its finalizers removed (its workload
 *   pruned);
 * - each agent-autonomous spoke's Argo CD syncing its own folder (`<hub>/spokes/<cluster>/`): applies what
 *   the folder lists, prunes nothing;
 * - the argocd-agent principal and its managed agents (level-based): an agent runs on every cluster an
 *   agent GitOpsCluster's Placement decides; a hub Application routed to a running agent
 *   (`spec.destination.name`) gets a copy on the spoke carrying `argocd.argoproj.io/source-uid` (created,
 *   updated, replaced on another source UID unless the mismatch policy says upsert); a copy whose hub
 *   Application is gone or routed elsewhere is deleted with its finalizers; a spoke Application without the
 *   source UID is refused, as released agents do (the move then never settles).
 *
 * Invariants held besides the plan's deletions: the controller's waves (no cluster of wave N+1 gets a
 * revision before every cluster of waves up to N runs it), and RollingSync's steps (no generated app of step
 * N+1 synced to a revision before every app of steps up to N runs it Healthy; what released Argo CD does
 * out of order by itself is noted apart, see `rollingSyncOrder`).
 *
 * Observation: one watch of every ManifestWork on the hub and one of the spoke Applications on the spoke,
 * both cut per step by a marker object the watch must deliver (one watch delivers in server order, so every
 * event stored before the marker is in).
 */
import { createHash } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { FLEET_APP_LABEL } from '../../src/model/delivery/hub-application.js';
import { isAgentModel } from '../../src/model/delivery/classification.js';
import {
  AGENT_SPOKE_DESTINATION,
  ARGOCD_API_VERSION,
  ARGOCD_RESOURCES_FINALIZER,
  ARGOCD_SYNC_OPTIONS_ANNOTATION,
  CLUSTER_API_VERSION,
  CLUSTERSET_LABEL,
  HUB_APP_NAME_ANNOTATION,
  MANAGED_CLUSTER_ANNOTATION,
  PLACEMENT_API_VERSION,
  PLACEMENT_LABEL,
  PULL_LABEL,
  SOURCE_UID_ANNOTATION,
  SOURCE_UID_MISMATCH_POLICY_ANNOTATION,
  SPEC_HASH_ANNOTATION,
  WORK_API_VERSION,
} from '../../src/model/core/keys.js';
import { manifestWorkName } from '../../src/model/core/names.js';
import { evaluatePlacement, type PlacementSpec } from '../../src/model/placement/placement.js';
import type { PlannedObject } from '../../src/model/plan/controller-deletions.js';
import type { PlanState } from '../../src/model/plan/state.js';
import { ROLLOUT_CLUSTER_LABEL, ROLLOUT_KIND_LABEL, ROLLOUT_PROGRESS_KEY } from '../../src/model/rollout/policy.js';
import { rolloutStateName } from '../../src/model/rollout/state.js';
import { isStaticApplication } from '../../src/model/reconcile/propagation.js';
import type { Application } from '../../src/model/core/types.js';
import { realCluster, type ListQuery, type TestCluster } from './cluster.js';
import { streamObjects, type ObjectStream } from './object-watch.js';
import { ORACLE_HUB, ORACLE_POOL, type OracleController } from './oracle-fleet.js';
import { ProgressiveSyncSim } from './progressive-sync-sim.js';
import { RawApiError, RawClient, type RawObject } from './raw-client.js';
import { startOcmSpoke, type OcmSpoke } from './real-ocm.js';
import { shippedControllerStarter, type ControllerProcess } from './shipped-controller.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const MARKER = 'oracle-marker-';
const ARGO_MANAGER = 'argocd-controller';
const APPSET_MANAGER = 'argocd-applicationset-controller';
const REGISTRATION_MANAGER = 'registration-controller';
/** The field manager of a spoke Argo CD syncing its own folder (agent-autonomous). */
const SPOKE_FOLDER_MANAGER = 'argocd-controller-spoke-folder';
const DECISION_SUFFIX = '-decision-1';
/** On an agent's copy of a hub Application: the cluster (agent) it belongs to (the played agent's own record). */
const AGENT_OF_COPY = 'oracle.pullfleet.io/agent';

/** The managed agent a hub Application is routed to (`spec.destination.name`), if any. */
function routedTo(app: Obj): string | undefined {
  const name = app.spec?.destination?.name;
  return typeof name === 'string' && name !== '' && name !== AGENT_SPOKE_DESTINATION ? name : undefined;
}

/** An ApplicationSet whose RollingSync steps the applicationset-controller plays (progressive syncs enabled). */
function isRollingSync(set: Obj): boolean {
  return set.spec?.strategy?.type === 'RollingSync' && (set.spec?.strategy?.rollingSync?.steps?.length ?? 0) > 0;
}

/** `deletionOrder: Reverse` on a RollingSync ApplicationSet (case-insensitive, as upstream compares it). */
function isReverseDeletion(set: Obj): boolean {
  return isRollingSync(set) && String(set.spec?.strategy?.deletionOrder ?? '').toLowerCase() === 'reverse';
}

type MatchExpression = { key: string; operator: string; values?: string[] };

/** The match expressions of each RollingSync step of an ApplicationSet. */
function rollingStepsOf(set: Obj): MatchExpression[][] {
  return ((set.spec?.strategy?.rollingSync?.steps as Obj[] | undefined) ?? []).map(
    (step) => (step.matchExpressions as MatchExpression[] | undefined) ?? [],
  );
}

/**
 * The step (0-based) of a generated app labelled with `cluster` (label pullfleet.io/rollout-cluster), -1 when
 * no step selects it: the first step whose expressions all match, `In` needing the label and `NotIn` taking
 * an app without it (argo-cd v3.5.1 applicationset/progressivesync/progressive_sync.go:280-346; v2.14.0
 * applicationset/controllers/applicationset_controller.go `buildAppDependencyList`, `labelMatchedExpression`).
 * Pullfleet's steps name only the rollout-cluster label.
 */
function stepOf(steps: readonly MatchExpression[][], cluster: string | undefined): number {
  return steps.findIndex((expressions) =>
    expressions.every((e) => {
      if (e.key !== ROLLOUT_CLUSTER_LABEL) return false;
      if (cluster === undefined) return e.operator !== 'In';
      const listed = (e.values ?? []).includes(cluster);
      return e.operator === 'In' ? listed : e.operator === 'NotIn' ? !listed : false;
    }),
  );
}

/** The revision a spoke's Argo CD reports for a target revision (a commit SHA of its own making). */
export function spokeRevision(targetRevision: string): string {
  return createHash('sha1').update(`oracle/${targetRevision}`).digest('hex');
}

/** The spoke server and its agents, for every case of a test file. */
export interface OracleWorld {
  readonly run: string;
  readonly hubConfig: KubeConfig;
  readonly hub: RawClient;
  readonly ocm: OcmSpoke;
  /** The ManagedCluster name of a spoke slot. */
  cluster(id: string): string;
  stop(): Promise<void>;
}

/** Starts the spoke server with one real work agent per slot of {@link ORACLE_POOL}. */
export async function startOracleWorld(hubKubeconfig: string): Promise<OracleWorld> {
  const run = `o${Date.now().toString(36).slice(-4)}`;
  const cluster = (id: string) => `${run}-${id}`;
  const ocm = await startOcmSpoke(hubKubeconfig, { clusters: ORACLE_POOL.map(cluster), spokeNamespaces: [] });
  const hubConfig = new KubeConfig();
  hubConfig.loadFromFile(hubKubeconfig);
  return { run, hubConfig, hub: ocm.hub, ocm, cluster, stop: () => ocm.stop() };
}

/** An object of a watched collection, as one event delivered it. */
interface Seen {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: Obj;
}

const key = (o: Obj) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;
const refOf = (o: Obj) => ({
  apiVersion: o.apiVersion as string,
  kind: o.kind as string,
  namespace: o.metadata?.namespace as string | undefined,
  name: o.metadata?.name as string,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The payload Applications of a work. */
function payloads(work: Obj | undefined): Obj[] {
  return ((work?.spec?.workload?.manifests as Obj[] | undefined) ?? []).filter(
    (m) => m.kind === 'Application' && String(m.apiVersion ?? '').startsWith('argoproj.io/'),
  );
}

function feedback(work: Obj, app: Obj): Record<string, string> {
  const entry = ((work.status?.resourceStatus?.manifests as Obj[] | undefined) ?? []).find(
    (m) =>
      m.resourceMeta?.kind === 'Application' &&
      m.resourceMeta?.name === app.metadata?.name &&
      (m.resourceMeta?.namespace ?? '') === (app.metadata?.namespace ?? ''),
  );
  const out: Record<string, string> = {};
  for (const v of (entry?.statusFeedback?.values as Obj[] | undefined) ?? [])
    if (typeof v.fieldValue?.string === 'string') out[v.name] = v.fieldValue.string;
  return out;
}

const applied = (o: Obj) =>
  ((o.status?.conditions as Obj[] | undefined) ?? []).some(
    (c) => c.type === 'Applied' && c.status === 'True' && c.observedGeneration === o.metadata?.generation,
  );

/** Faults a played program can be given, for the oracle's own tests (the invariants must catch them). */
export interface OracleFaults {
  /**
   * The spokes' Argo CD syncs every Application by itself, automated policy or not (what a payload that kept
   * an enabled automated policy under RollingSync would make it do).
   * @default false
   */
  readonly spokeSyncsEverything?: boolean;
}

/** What one step did on the servers, as the watches saw it. */
export interface StepObservation {
  /** Deletion ids in plan's form (`hub/<cluster>/<work>`, or `…/<group>/<Kind>/<ns>/<name>` for a dropped manifest). */
  readonly deletions: string[];
  /** Works deleted whose spoke Applications stayed (`<cluster>/<work>`). */
  readonly orphaned: string[];
  /** Spoke Applications whose workload the spoke Argo CD pruned (resources finalizer). */
  readonly pruned: string[];
  /** Invariant violations seen during the step. */
  readonly violations: string[];
  /** Works written (created or changed) during the step, `<cluster>/<work>`. */
  readonly written: string[];
  /**
   * Syncs of a RollingSync app before an app of an earlier step ran the revision, which released Argo CD
   * makes by itself (its hub Application still showed the previous revision): noted, not held against
   * pullfleet.
   */
  readonly upstreamOrder: string[];
}

/** The hub and spoke of one case: its namespaces, its controller, the played programs and the watches. */
export class OracleSession {
  readonly argoNamespace: string;
  readonly controllerNamespace: string;
  private readonly hub: RawClient;
  private readonly spoke: RawClient;
  private readonly pool: Set<string>;
  private controllers?: ReturnType<typeof shippedControllerStarter>;
  private controller?: ControllerProcess;
  private controllerFlags?: string;
  private readonly streams: ObjectStream[] = [];
  private readonly workEvents: Seen[] = [];
  private readonly appEvents: Seen[] = [];
  private workCursor = 0;
  private appCursor = 0;
  private markers = 0;
  /** Latest version of every work seen (in the hub's order), up to the cursor. */
  private readonly works = new Map<string, Obj>();
  /** Spoke Application `<ns>/<name>` → the work `<cluster>/<work>` that last carried it. */
  private readonly carrier = new Map<string, string>();
  private readonly deleting = new Set<string>();
  /** What the hub's Argo CD applied last (its live view of git). */
  private appliedObjects: Obj[] = [];
  private appliedJson = new Map<string, string>();
  private hubObjects: Obj[] = [];
  private generated = new Map<string, string>();
  private pruned: string[] = [];
  /** Waves of each waved app in the output applied last: app → cluster lists. */
  private waves = new Map<string, string[][]>();
  /** Clusters an agent GitOpsCluster decides in the output applied last: a managed agent runs there. */
  private agents = new Set<string>();
  /** The objects of each spoke's folder (agent-autonomous) in the output applied last, by cluster. */
  private folders = new Map<string, Obj[]>();
  /** What each spoke's folder sync applied last (`<ns>/<name>` → JSON). */
  private readonly folderApplied = new Map<string, string>();
  /** Clusters in no cluster set the output applied last binds to the Argo CD namespace (OCM's tenancy rule). */
  private outsideBound = new Set<string>();
  /** Clusters whose pull hub Application the controller refused by the tenancy rule, at the last check. */
  private tenancyRefused = new Set<string>();
  private refusals = new Set<string>();
  /** Spoke Applications the played agents deleted (`<ns>/<name>` → the agent), not yet observed. */
  private agentDeleted = new Map<string, string>();
  /** The played progressive sync of each RollingSync ApplicationSet (`<name>/<uid>`), and its generator's clusters. */
  private readonly sims = new Map<string, ProgressiveSyncSim>();
  private readonly simClusters = new Map<string, string[]>();
  /** The hub Applications each sim's last pass read. */
  private readonly simViews = new Map<string, Obj[]>();
  /** The RollingSync steps of each live ApplicationSet that has them, by name. */
  private rollingSteps = new Map<string, MatchExpression[][]>();
  /**
   * `<app>|<revision>` → when RollingSync made the app Pending for that revision: the apps of earlier steps
   * there were (`seen`) and those whose hub Application showed another revision (`stale`).
   */
  private readonly stepStarts = new Map<string, { seen: Set<string>; stale: Set<string>; shown: string[] }>();
  /** RollingSync step-order violations the spokes' syncs showed, not yet observed. */
  private rollingViolations: string[] = [];
  /** Syncs out of step order that released Argo CD makes by itself (see {@link noteStepStarts}), not yet observed. */
  private upstreamOrder: string[] = [];

  constructor(
    private readonly world: OracleWorld,
    readonly id: string,
    private readonly random: () => number,
    private readonly faults: OracleFaults = {},
  ) {
    this.argoNamespace = `${world.run}-${id}`;
    this.controllerNamespace = `${world.run}-${id}-sys`;
    this.hub = world.hub;
    this.spoke = world.ocm.spoke;
    this.pool = new Set(ORACLE_POOL.map((p) => world.cluster(p)));
  }

  /** Namespaces on both servers, the watches, and the controller's install. */
  async setUp(): Promise<void> {
    for (const ns of [this.argoNamespace, this.controllerNamespace])
      await this.hub.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    await this.spoke.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.argoNamespace } });
    this.streams.push(
      await streamObjects<Obj & { metadata: { name: string; namespace?: string } }>(
        this.world.hubConfig,
        '/apis/work.open-cluster-management.io/v1/manifestworks',
        {},
        (type, object) => {
          const ns = object.metadata?.namespace ?? '';
          if (this.pool.has(ns) || (ns === this.argoNamespace && object.metadata.name.startsWith(MARKER)))
            this.workEvents.push({ type, object });
        },
      ),
    );
    this.streams.push(
      await streamObjects<Obj & { metadata: { name: string; namespace?: string } }>(
        this.world.ocm.spokeConfig,
        `/apis/argoproj.io/v1alpha1/namespaces/${this.argoNamespace}/applications`,
        {},
        (type, object) => void this.appEvents.push({ type, object }),
      ),
    );
    this.controllers = shippedControllerStarter(this.world.hubConfig, {
      namespace: this.controllerNamespace,
      argoNamespace: this.argoNamespace,
    });
  }

  /** (Re)starts the controller when its flags differ from the running one's. */
  async controllerWith(settings: OracleController): Promise<void> {
    const flags = JSON.stringify(settings);
    if (this.controller && this.controllerFlags === flags) return;
    await this.controller?.stop();
    this.controller = await this.controllers!.start({
      resourceSummaries: settings.resourceSummaries,
      workers: settings.workers,
    });
    this.controllerFlags = flags;
  }

  /** Requests the controller made that the shipped RBAC refused. */
  forbidden(): string[] {
    return this.controllers?.forbidden() ?? [];
  }

  controllerOutput(lines = 30): string {
    return this.controller?.output(lines) ?? '(no controller)';
  }

  /**
   * Plays the registration agent and placement controller for the new output: ManagedClusters take the plan
   * state's labels and taints (slots outside the fleet lose theirs), PlacementDecisions the offline decisions.
   */
  async inventory(objects: readonly PlannedObject[], state: PlanState | undefined): Promise<void> {
    const spokes = new Map((state?.spokes ?? []).map((s) => [s.name, s]));
    for (const name of this.pool) {
      const s = spokes.get(name);
      const live = await this.hub.get<Obj>(CLUSTER_API_VERSION, 'ManagedCluster', undefined, name);
      const labels = s ? { ...s.labels, ...(s.clusterSets[0] ? { [CLUSTERSET_LABEL]: s.clusterSets[0] } : {}) } : {};
      const taints = (s?.taints ?? []).map((t) => ({
        key: t.key,
        ...(t.value !== undefined ? { value: t.value } : {}),
        effect: t.effect,
        timeAdded: '2026-01-01T00:00:00Z',
      }));
      if (
        live &&
        JSON.stringify(live.metadata?.labels ?? {}) === JSON.stringify(labels) &&
        JSON.stringify(live.spec?.taints ?? []) === JSON.stringify(taints)
      )
        continue;
      if (live) {
        await this.hub.replace({
          ...live,
          apiVersion: CLUSTER_API_VERSION,
          kind: 'ManagedCluster',
          metadata: { ...live.metadata, labels },
          spec: { ...live.spec, taints },
        });
      } else {
        await this.hub.create({
          apiVersion: CLUSTER_API_VERSION,
          kind: 'ManagedCluster',
          metadata: { name, labels },
          spec: { hubAcceptsClient: true, taints },
        });
      }
    }
    this.hubObjects = objects.filter((o) => o.file.split('/')[1] === 'hub').map((o) => o.object as Obj);
    const bound = this.hubObjects
      .filter((o) => o.kind === 'ManagedClusterSetBinding' && o.metadata?.namespace === this.argoNamespace)
      .map((o) => (o.spec?.clusterSet ?? o.metadata?.name) as string);
    this.outsideBound = new Set(
      (state?.spokes ?? []).filter((s) => !s.clusterSets.some((set) => bound.includes(set))).map((s) => s.name),
    );
    const placements = this.hubObjects.filter((o) => o.kind === 'Placement');
    const wanted = new Set<string>();
    for (const p of placements) {
      const name = `${p.metadata.name}${DECISION_SUFFIX}`;
      wanted.add(name);
      const ref = { ns: p.metadata.namespace ?? this.argoNamespace, name };
      // As OCM's scheduler: the clusters decided now keep a NoSelectIfNew taint and rank first (Steady).
      const current = await this.hub.get<Obj>(PLACEMENT_API_VERSION, 'PlacementDecision', ref.ns, name);
      const decided = evaluatePlacement((p.spec ?? {}) as PlacementSpec, state?.spokes ?? [], bound, {
        ...(current
          ? {
              currentDecisions: ((current.status?.decisions as Obj[] | undefined) ?? []).map(
                (d) => d.clusterName as string,
              ),
            }
          : {}),
      });
      const body = {
        apiVersion: PLACEMENT_API_VERSION,
        kind: 'PlacementDecision',
        metadata: {
          name,
          namespace: ref.ns,
          labels: {
            [PLACEMENT_LABEL]: p.metadata.name,
            'cluster.open-cluster-management.io/decision-group-index': '0',
          },
        },
      };
      await this.hub.apply(body, REGISTRATION_MANAGER);
      const decisions = decided.map((clusterName) => ({ clusterName, reason: '' }));
      const live = await this.hub.get<Obj>(PLACEMENT_API_VERSION, 'PlacementDecision', ref.ns, name);
      if (JSON.stringify(live?.status?.decisions ?? []) !== JSON.stringify(decisions))
        await this.hub.mergePatch(
          PLACEMENT_API_VERSION,
          'PlacementDecision',
          ref.ns,
          name,
          { status: { decisions } },
          'status',
        );
    }
    for (const d of await this.hub.list<Obj>(PLACEMENT_API_VERSION, 'PlacementDecision', this.argoNamespace))
      if (!wanted.has(d.metadata.name))
        await this.hub.delete(PLACEMENT_API_VERSION, 'PlacementDecision', this.argoNamespace, d.metadata.name);
    // Spoke folders (agent-autonomous): `<hub>/spokes/<cluster>/…`, what each spoke's own Argo CD syncs.
    this.folders = new Map();
    for (const o of objects) {
      const [, folder, cluster] = o.file.split('/');
      if (folder !== 'spokes' || !cluster) continue;
      this.folders.set(cluster, [...(this.folders.get(cluster) ?? []), o.object]);
    }
    // An agent-autonomous GitOpsCluster runs no managed agent: its spokes sync their folders (played below).
    const agentPlacements = new Set(
      this.hubObjects
        .filter((o) => o.kind === 'GitOpsCluster' && !JSON.stringify(o.spec ?? {}).includes('"mode":"autonomous"'))
        .map((o) => o.spec?.placementRef?.name as string | undefined)
        .filter((n): n is string => !!n),
    );
    this.agents = new Set(
      placements
        .filter((p) => agentPlacements.has(p.metadata.name))
        .flatMap((p) => evaluatePlacement((p.spec ?? {}) as PlacementSpec, state?.spokes ?? [], bound)),
    );
    this.waves = new Map();
    for (const o of this.hubObjects) {
      if (o.kind !== 'ConfigMap' || o.metadata?.labels?.[ROLLOUT_KIND_LABEL] !== 'policy') continue;
      const data = (o.data ?? {}) as Record<string, string>;
      const app = (JSON.parse(data['policy.json'] ?? '{}') as { app?: string }).app;
      if (!app) continue;
      const waves = Object.keys(data)
        .filter((k) => k.startsWith('wave-'))
        .sort()
        .map((k) => {
          // a spoke out of the waves (moving, or on an agent model) is not held to them
          const wave = JSON.parse(data[k]) as { clusters?: string[]; outside?: Record<string, unknown> };
          return (wave.clusters ?? []).filter((c) => !wave.outside?.[c]);
        });
      this.waves.set(app, waves);
    }
  }

  /**
   * The hub's Argo CD syncs the new output: what changed is applied (Applications last, one at a time, in
   * `order`), then what left git is pruned (except objects carrying Prune=false).
   */
  async argoSync(order: 'shuffle' | 'reverse' | 'forward'): Promise<void> {
    const next = this.hubObjects;
    const id = (o: Obj) => `${o.apiVersion}|${o.kind}|${o.metadata?.namespace ?? ''}|${o.metadata?.name}`;
    const changed = next.filter((o) => this.appliedJson.get(id(o)) !== JSON.stringify(o));
    const apps = changed.filter((o) => o.kind === 'Application');
    if (order === 'reverse') apps.reverse();
    if (order === 'shuffle')
      for (let i = apps.length - 1; i > 0; i--) {
        const j = Math.floor(this.random() * (i + 1));
        [apps[i], apps[j]] = [apps[j], apps[i]];
      }
    for (const o of [...changed.filter((o) => o.kind !== 'Application'), ...apps]) {
      // The stage's hub serves the ACM (v1beta1) GitOpsCluster CRD only; nothing here acts on an OCM one.
      if (o.kind === 'GitOpsCluster' && o.apiVersion === 'apps.open-cluster-management.io/v1alpha1') continue;
      await this.hub.apply(o as RawObject, ARGO_MANAGER);
    }
    const kept = new Set(next.map(id));
    for (const o of [...this.appliedObjects].reverse()) {
      if (kept.has(id(o))) continue;
      const options = String(o.metadata?.annotations?.[ARGOCD_SYNC_OPTIONS_ANNOTATION] ?? '');
      if (options.split(',').some((x) => x.trim() === 'Prune=false')) continue;
      if (o.kind === 'GitOpsCluster' && o.apiVersion === 'apps.open-cluster-management.io/v1alpha1') continue;
      const r = refOf(o);
      await this.hub.delete(r.apiVersion, r.kind, r.namespace, r.name);
    }
    this.appliedObjects = next;
    this.appliedJson = new Map(next.map((o) => [id(o), JSON.stringify(o)]));
  }

  /**
   * The applicationset-controller (and the garbage collector for removed ApplicationSets); returns the writes
   * made. An ApplicationSet without a strategy: one hub Application per decision from its template. One with
   * RollingSync steps: Argo CD 3.5.1's progressive sync, played by {@link ProgressiveSyncSim} (its file
   * comment cites the state machine: which generated apps keep `automated` disabled, steps matched by
   * labels, Waiting/Pending/Progressing/Healthy in `status.applicationStatus`, the next step once every app
   * of the steps before is Healthy, a sync triggered by writing `operation` on the hub Application), one pass
   * per round, the decisions it reads given as the generator's cluster list. Upstream passes run on watch
   * events and on the generator's requeue (180 s here); a pass that finds nothing to do writes nothing, so
   * running one every round only stands for time passing.
   *
   * Deletion order Reverse, as 3.5.1 does it: the finalizer `resources-finalizer.argocd.argoproj.io` is added
   * to a RollingSync ApplicationSet with `deletionOrder: Reverse` (argo-cd v3.5.1
   * applicationset/controllers/applicationset_controller.go:186-193; v3.2.0 never adds it, :139-168), so its
   * deletion waits while the generated apps are deleted one at a time, last step first, each one gone before
   * the next is deleted (v3.5.1 applicationset/progressivesync/progressive_sync.go:131-277, the same in
   * v3.2.0 applicationset_controller.go:398-445); then the finalizer goes (v3.5.1 :174), and with it the
   * ApplicationSet. An app no step selects is left to the garbage collector.
   */
  private async appSetController(): Promise<number> {
    let writes = 0;
    const wanted = new Map<string, Obj>();
    /** Generated apps of ApplicationSets without RollingSync: applied here. */
    const plain = new Map<string, Obj>();
    const active = new Set<string>();
    const appSets = this.hubObjects.filter((o) => o.kind === 'ApplicationSet');
    const liveSets = await this.hub.list<Obj>(ARGOCD_API_VERSION, 'ApplicationSet', this.argoNamespace);
    this.rollingSteps = new Map(
      liveSets.filter(isRollingSync).map((set) => [set.metadata.name as string, rollingStepsOf(set)]),
    );
    for (const set of appSets) {
      const live = liveSets.find((l) => l.metadata.name === set.metadata.name);
      if (!live || live.metadata.deletionTimestamp) continue;
      const clusters: string[] = [];
      for (const g of (set.spec?.generators as Obj[] | undefined) ?? []) {
        const placement = g.clusterDecisionResource?.labelSelector?.matchLabels?.[PLACEMENT_LABEL];
        if (typeof placement !== 'string') continue;
        const decisions = await this.hub.list<Obj>(
          PLACEMENT_API_VERSION,
          'PlacementDecision',
          set.metadata.namespace,
          `${PLACEMENT_LABEL}=${placement}`,
        );
        for (const d of decisions)
          for (const { clusterName } of (d.status?.decisions as Obj[] | undefined) ?? []) {
            clusters.push(clusterName as string);
            const text = JSON.stringify(set.spec.template).replace(
              /\{\{\s*\.?(name|clusterName)\s*\}\}/g,
              clusterName as string,
            );
            const template = JSON.parse(text) as Obj;
            const app = {
              apiVersion: ARGOCD_API_VERSION,
              kind: 'Application',
              metadata: {
                ...template.metadata,
                namespace: template.metadata?.namespace || set.metadata.namespace,
                ownerReferences: [
                  {
                    apiVersion: ARGOCD_API_VERSION,
                    kind: 'ApplicationSet',
                    name: set.metadata.name,
                    uid: live.metadata.uid,
                    controller: true,
                    blockOwnerDeletion: true,
                  },
                ],
              },
              spec: template.spec,
            };
            wanted.set(key(app), app);
            if (!isRollingSync(live)) plain.set(key(app), app);
            else this.generated.delete(key(app)); // written by the progressive sync; applied afresh without it
          }
      }
      if (!isRollingSync(live)) continue;
      const finalizers = (live.metadata.finalizers as string[] | undefined) ?? [];
      if (isReverseDeletion(live) && !finalizers.includes(ARGOCD_RESOURCES_FINALIZER)) {
        await this.hub.mergePatch(ARGOCD_API_VERSION, 'ApplicationSet', this.argoNamespace, live.metadata.name, {
          metadata: { finalizers: [...finalizers, ARGOCD_RESOURCES_FINALIZER] },
        });
        writes++;
      }
      const simKey = `${live.metadata.name}/${live.metadata.uid}`;
      active.add(simKey);
      this.simClusters.set(simKey, clusters);
      let sim = this.sims.get(simKey);
      if (!sim) {
        const simClusters = this.simClusters;
        const views = this.simViews;
        const cluster = realCluster(this.world.hubConfig);
        // the hub as the pass read it: what RollingSync decided on
        const viewing: TestCluster = {
          ...cluster,
          list: async <T>(apiVersion: string, kind: string, query?: ListQuery): Promise<T[]> => {
            const items = await cluster.list<T>(apiVersion, kind, query);
            if (kind === 'Application') views.set(simKey, items as Obj[]);
            return items;
          },
        };
        sim = new ProgressiveSyncSim(viewing, this.world.hubConfig, {
          namespace: this.argoNamespace,
          name: live.metadata.name as string,
          get clusters() {
            return simClusters.get(simKey) ?? [];
          },
        });
        this.sims.set(simKey, sim);
      }
      const before = { writes: sim.writes, status: JSON.stringify(sim.applicationStatus), seq: sim.transitions.length };
      await sim.pass();
      if (JSON.stringify(sim.applicationStatus) !== before.status) writes++;
      writes += sim.writes - before.writes;
      const started = sim.transitions.slice(before.seq).filter((t) => t.to === 'Pending');
      if (started.length)
        this.noteStepStarts(
          live,
          started.map((t) => t.application),
          this.simViews.get(simKey) ?? [],
        );
    }
    // A sim whose ApplicationSet went, or dropped its strategy, goes: upstream clears `status.applicationStatus`.
    for (const k of [...this.sims.keys()])
      if (!active.has(k)) {
        this.sims.delete(k);
        this.simClusters.delete(k);
        this.simViews.delete(k);
      }
    for (const [k, app] of plain) {
      const json = JSON.stringify(app);
      const live = await this.hub.get<Obj>(
        ARGOCD_API_VERSION,
        'Application',
        app.metadata.namespace,
        app.metadata.name,
      );
      if (live?.metadata?.deletionTimestamp) continue; // upstream's update fails until it is gone
      if (live && this.generated.get(k) === json) continue;
      await this.hub.apply(app as RawObject, APPSET_MANAGER);
      this.generated.set(k, json);
      writes++;
    }
    const hubApps = await this.hub.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace);
    const ownerOf = (app: Obj) =>
      ((app.metadata?.ownerReferences as Obj[] | undefined) ?? []).find((r) => r.kind === 'ApplicationSet');
    for (const set of liveSets) {
      if (!set.metadata.deletionTimestamp) continue;
      const finalizers = (set.metadata.finalizers as string[] | undefined) ?? [];
      if (!finalizers.includes(ARGOCD_RESOURCES_FINALIZER)) continue;
      if (isReverseDeletion(set)) {
        const steps = rollingStepsOf(set);
        const next = hubApps
          .filter((a) => ownerOf(a)?.name === set.metadata.name)
          .map((a) => ({ app: a, step: stepOf(steps, a.metadata.labels?.[ROLLOUT_CLUSTER_LABEL]) }))
          .filter((a) => a.step >= 0)
          .sort((a, b) => b.step - a.step || String(a.app.metadata.name).localeCompare(b.app.metadata.name))[0];
        if (next) {
          // one at a time: the next is deleted once this one is gone
          if (!next.app.metadata.deletionTimestamp) {
            await this.hub.delete(ARGOCD_API_VERSION, 'Application', this.argoNamespace, next.app.metadata.name);
            writes++;
          }
          continue;
        }
      }
      await this.hub.mergePatch(ARGOCD_API_VERSION, 'ApplicationSet', this.argoNamespace, set.metadata.name, {
        metadata: { finalizers: finalizers.filter((f) => f !== ARGOCD_RESOURCES_FINALIZER) },
      });
      writes++;
    }
    for (const app of hubApps) {
      const owner = ownerOf(app);
      if (!owner || wanted.has(key(app)) || app.metadata.deletionTimestamp) continue;
      // an ApplicationSet being deleted in reverse order deletes its apps itself (above)
      const set = liveSets.find((l) => l.metadata.name === owner.name && l.metadata.uid === owner.uid);
      if (set?.metadata?.deletionTimestamp && (set.metadata.finalizers as string[] | undefined)?.length) continue;
      await this.hub.delete(ARGOCD_API_VERSION, 'Application', app.metadata.namespace, app.metadata.name);
      this.generated.delete(key(app));
      writes++;
    }
    return writes;
  }

  /**
   * Records, for each generated app RollingSync just made Pending (its step may sync), which apps of the
   * steps before it existed and which of those showed, in the hub Applications the pass read (`view`), a
   * revision other than the one it is about to get: RollingSync took such an app's step as done on a status
   * its spoke had not yet updated (released Argo CD's known limit, argo-cd #22852; docs/concepts/rollouts.md
   * "Known limits").
   */
  private noteStepStarts(appSet: Obj, apps: readonly string[], view: readonly Obj[]): void {
    const steps = rollingStepsOf(appSet);
    const owned = view.filter((a) =>
      ((a.metadata?.ownerReferences as Obj[] | undefined) ?? []).some(
        (r) => r.kind === 'ApplicationSet' && r.name === appSet.metadata.name,
      ),
    );
    // the oracle's templates take no per-cluster revision: every generated app gets the template's
    const revision = spokeRevision(String(appSet.spec?.template?.spec?.source?.targetRevision ?? 'HEAD'));
    for (const name of apps) {
      const app = owned.find((a) => a.metadata.name === name);
      if (!app) continue;
      const step = stepOf(steps, app.metadata.labels?.[ROLLOUT_CLUSTER_LABEL]);
      const k = `${name}|${revision}`;
      const decision = this.stepStarts.get(k) ?? { seen: new Set<string>(), stale: new Set<string>(), shown: [] };
      for (const other of owned) {
        const s = stepOf(steps, other.metadata.labels?.[ROLLOUT_CLUSTER_LABEL]);
        if (s < 0 || s >= step) continue;
        decision.seen.add(other.metadata.name);
        if (other.status?.sync?.revision !== revision) decision.stale.add(other.metadata.name);
        decision.shown.push(
          `${other.metadata.name} ${other.status?.sync?.status ?? '?'} at ${other.status?.sync?.revision === revision ? 'the new revision' : 'another revision'}, ${other.status?.health?.status ?? '?'}`,
        );
      }
      this.stepStarts.set(k, decision);
    }
  }

  /** Whether a managed agent runs on `cluster` (an agent GitOpsCluster decides it in the output applied last). */
  agentRuns(cluster: string): boolean {
    return this.agents.has(cluster);
  }

  /**
   * The Argo CD of each agent-autonomous spoke syncing its own folder (`<hub>/spokes/<cluster>/`, the
   * Application the spoke's bootstrap renders: automated, `prune: false`, `selfHeal: true`,
   * src/model/delivery/delivery-model.ts `buildSpokeFolderApplication`): every object the folder lists is
   * applied on the spoke (over one a work delivered before, which it adopts by name), and one deleted
   * there is applied again; what leaves the folder stays (no prune). Returns the writes made.
   */
  private async spokeFolders(): Promise<number> {
    let writes = 0;
    for (const objects of this.folders.values())
      for (const o of objects) {
        const k = key(o);
        const json = JSON.stringify(o);
        const live = await this.spoke.get<Obj>(
          o.apiVersion as string,
          o.kind as string,
          o.metadata?.namespace,
          o.metadata.name,
        );
        if (live?.metadata?.deletionTimestamp) continue; // applied again once it is gone
        if (live && this.folderApplied.get(k) === json) continue;
        await this.spoke.apply(o as RawObject, SPOKE_FOLDER_MANAGER);
        this.folderApplied.set(k, json);
        writes++;
      }
    return writes;
  }

  /** The principal and the managed agents (see the file's comment); returns the writes made. */
  private async principal(): Promise<number> {
    let writes = 0;
    const hubApps = await this.hub.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace);
    const wanted = new Map<string, { app: Obj; agent: string }>();
    for (const app of hubApps) {
      const agent = routedTo(app);
      if (agent && this.agents.has(agent) && !app.metadata.deletionTimestamp)
        wanted.set(app.metadata.name as string, { app, agent });
    }
    const copies = await this.spoke.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace);
    const byName = new Map(copies.map((c) => [c.metadata.name as string, c]));
    for (const [name, { app, agent }] of wanted) {
      const existing = byName.get(name);
      const annotations: Record<string, string> = {
        ...((app.metadata.annotations as Record<string, string> | undefined) ?? {}),
        [SOURCE_UID_ANNOTATION]: app.metadata.uid as string,
        [AGENT_OF_COPY]: agent,
      };
      const spec = {
        ...app.spec,
        destination: { name: AGENT_SPOKE_DESTINATION, namespace: app.spec?.destination?.namespace },
      };
      if (existing?.metadata?.deletionTimestamp) continue;
      if (!existing) {
        await this.spoke.create({
          apiVersion: ARGOCD_API_VERSION,
          kind: 'Application',
          metadata: {
            name,
            namespace: this.argoNamespace,
            ...(app.metadata.labels ? { labels: app.metadata.labels } : {}),
            annotations,
            ...((app.metadata.finalizers as string[] | undefined)?.length
              ? { finalizers: app.metadata.finalizers }
              : {}),
          },
          spec,
        });
        writes++;
        continue;
      }
      const uid = existing.metadata.annotations?.[SOURCE_UID_ANNOTATION];
      if (!uid) {
        this.refusals.add(`${agent}: ${name}: source UID Annotation is not found`);
        continue;
      }
      const upsert = app.metadata.annotations?.[SOURCE_UID_MISMATCH_POLICY_ANNOTATION] === 'upsert';
      if (uid !== app.metadata.uid && !upsert) {
        this.agentDeleted.set(`${this.argoNamespace}/${name}`, agent);
        await this.spoke.delete(ARGOCD_API_VERSION, 'Application', this.argoNamespace, name); // recreated next round
        writes++;
        continue;
      }
      if (uid === app.metadata.uid && JSON.stringify(existing.spec) === JSON.stringify(spec)) continue;
      await this.spoke.mergePatch(ARGOCD_API_VERSION, 'Application', this.argoNamespace, name, {
        metadata: { labels: app.metadata.labels ?? null, annotations },
        spec,
      });
      writes++;
    }
    for (const copy of copies) {
      const agent = copy.metadata.annotations?.[AGENT_OF_COPY];
      if (!agent || copy.metadata.deletionTimestamp || !this.agents.has(agent)) continue;
      if (wanted.get(copy.metadata.name)?.agent === agent) continue;
      this.agentDeleted.set(`${this.argoNamespace}/${copy.metadata.name}`, agent);
      await this.spoke.delete(ARGOCD_API_VERSION, 'Application', this.argoNamespace, copy.metadata.name);
      writes++;
    }
    return writes;
  }

  /**
   * Each spoke's Argo CD (and each agent's): prunes deleted Applications (their finalizers removed), and for
   * the others, as argo-cd's application controller does it:
   * - an Application carrying `operation` is synced (the spec's revision, or the operation's), reported
   *   Synced and Healthy with the operation in `operationState`, and its `operation` removed once the sync
   *   completed (argo-cd v3.5.1 controller/appcontroller.go:1512-1535, :1668-1686; v2.14.0 :1515);
   * - an Application whose automated policy is enabled syncs a new revision by itself (v3.5.1 :2322-2336:
   *   `autoSync` returns at once without `syncPolicy.automated` or with `enabled: false`);
   * - one without it only compares: OutOfSync at the new revision (health Missing before its first sync),
   *   until an operation comes.
   * A sync of a generated app of a RollingSync ApplicationSet to a revision it did not run is checked against
   * the steps before it (see {@link rollingSyncOrder}).
   */
  private async spokeArgo(): Promise<number> {
    let writes = 0;
    const spokeApps = new Map(
      (await this.spoke.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace)).map(
        (a) => [a.metadata.name as string, a] as const,
      ),
    );
    let hubApps: Obj[] | undefined;
    for (const app of spokeApps.values()) {
      const name = app.metadata.name as string;
      if (name.startsWith(MARKER)) continue;
      if (app.metadata.deletionTimestamp) {
        const finalizers = (app.metadata.finalizers as string[] | undefined) ?? [];
        if (finalizers.length) {
          if (finalizers.some((f) => f.startsWith('resources-finalizer.argocd.argoproj.io')))
            this.pruned.push(`${this.argoNamespace}/${name}`);
          await this.spoke
            .mergePatch(ARGOCD_API_VERSION, 'Application', this.argoNamespace, name, { metadata: { finalizers: null } })
            .catch(ignoreGone);
          writes++;
        }
        continue;
      }
      const operation = app.operation as Obj | undefined;
      const target = String(operation?.sync?.revision ?? app.spec?.source?.targetRevision ?? 'HEAD');
      const revision = spokeRevision(target);
      const s = app.status ?? {};
      const last = s.operationState?.syncResult?.revision as string | undefined;
      const automated = app.spec?.syncPolicy?.automated as Obj | undefined;
      const auto = this.faults.spokeSyncsEverything === true || (!!automated && automated.enabled !== false);
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      const done = s.sync?.status === 'Synced' && s.sync?.revision === revision && s.health?.status === 'Healthy';
      let status: Obj | undefined;
      if (operation || (auto && (!done || last !== revision))) {
        if (last !== revision) {
          hubApps ??= await this.hub.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace);
          this.rollingSyncOrder(app, revision, !!operation, spokeApps, hubApps);
        }
        status = {
          sync: { status: 'Synced', revision },
          health: { status: 'Healthy' },
          reconciledAt: now,
          operationState: {
            phase: 'Succeeded',
            message: 'successfully synced (all tasks run)',
            startedAt: now,
            finishedAt: now,
            operation: operation ?? { sync: { revision } },
            syncResult: { revision },
          },
        };
      } else if (!auto) {
        const sync = last === revision ? 'Synced' : 'OutOfSync';
        const health = last === undefined ? 'Missing' : 'Healthy';
        if (s.sync?.status !== sync || s.sync?.revision !== revision || s.health?.status !== health)
          status = { sync: { status: sync, revision }, health: { status: health }, reconciledAt: now };
      }
      if (!status) continue;
      const patched = await this.spoke
        .mergePatch<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace, name, {
          ...(operation ? { operation: null } : {}),
          status,
        })
        .catch(ignoreGone);
      if (patched) spokeApps.set(name, patched);
      writes++;
    }
    return writes;
  }

  /**
   * The waves invariant of a RollingSync ApplicationSet, held when a spoke syncs one of its generated apps to
   * a revision that app did not run: every app of the steps before it runs that revision Healthy and Synced.
   * Not held against pullfleet: an earlier app whose hub Application still showed its previous revision when
   * RollingSync started the step (released Argo CD takes the step as done then: argo-cd #22852, #29347;
   * noted, see {@link noteStepStarts}), and one that joined after the step started. A RollingSync app synced
   * without an operation (its payload kept an enabled automated policy) is a violation of its own.
   */
  private rollingSyncOrder(
    app: Obj,
    revision: string,
    byOperation: boolean,
    spokeApps: ReadonlyMap<string, Obj>,
    hubApps: readonly Obj[],
  ): void {
    const name = app.metadata.name as string;
    const hubApp = hubApps.find((h) => h.metadata.name === name);
    const appSet = ((hubApp?.metadata?.ownerReferences as Obj[] | undefined) ?? []).find(
      (r) => r.kind === 'ApplicationSet',
    )?.name as string | undefined;
    const steps = appSet ? this.rollingSteps.get(appSet) : undefined;
    if (!appSet || !steps) return;
    const step = stepOf(steps, hubApp?.metadata?.labels?.[ROLLOUT_CLUSTER_LABEL]);
    if (step < 0) return;
    const target = app.spec?.source?.targetRevision;
    if (!byOperation) {
      this.rollingViolations.push(
        `RollingSync ${appSet}: the spoke synced ${name} (step ${step + 1}) to ${target} by itself, without its step's operation (the payload kept an enabled automated policy?)`,
      );
      return;
    }
    const started = this.stepStarts.get(`${name}|${revision}`);
    for (const other of hubApps) {
      if (other.metadata.name === name || other.metadata.deletionTimestamp) continue;
      const owner = ((other.metadata?.ownerReferences as Obj[] | undefined) ?? []).find(
        (r) => r.kind === 'ApplicationSet',
      );
      if (owner?.name !== appSet) continue;
      const earlier = stepOf(steps, other.metadata.labels?.[ROLLOUT_CLUSTER_LABEL]);
      if (earlier < 0 || earlier >= step) continue;
      const spokeApp = spokeApps.get(other.metadata.name as string);
      const st = spokeApp?.status ?? {};
      if (
        st.operationState?.syncResult?.revision === revision &&
        st.sync?.status === 'Synced' &&
        st.sync?.revision === revision &&
        st.health?.status === 'Healthy'
      )
        continue;
      const what = `RollingSync ${appSet}: ${name} (step ${step + 1}) synced ${target} while ${other.metadata.name} (step ${earlier + 1}) ${
        spokeApp
          ? `ran ${st.operationState?.syncResult?.revision === revision ? target : 'an earlier revision'} (sync ${st.sync?.status ?? '?'}, health ${st.health?.status ?? '?'})`
          : 'had no spoke Application'
      }`;
      if (started?.stale.has(other.metadata.name as string))
        this.upstreamOrder.push(
          `${what}: RollingSync started step ${step + 1} while ${other.metadata.name}'s hub Application still showed an earlier revision (released Argo CD's known limit, argo-cd #22852)`,
        );
      else if (started && !started.seen.has(other.metadata.name as string)) continue;
      else
        this.rollingViolations.push(
          `${what}${started ? `; its hub Application showed ${target} when RollingSync started step ${step + 1} (the hub showed: ${started.shown.join('; ')})` : '; RollingSync never made it Pending at this revision'}; RollingSync's transitions of ${other.metadata.name}: ${this.transitionsOf(appSet, other.metadata.name as string)}; of ${name}: ${this.transitionsOf(appSet, name)}`,
        );
    }
  }

  /** What is not settled yet (empty: the controller, the agents and the played programs have caught up). */
  private async unsettled(): Promise<string[]> {
    const out: string[] = [];
    const hubApps = await this.hub.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace);
    const works = new Map<string, Obj>();
    for (const ns of this.pool)
      for (const w of await this.hub.list<Obj>(WORK_API_VERSION, 'ManifestWork', ns)) works.set(key(w), w);
    const spokeApps = new Map(
      (await this.spoke.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace))
        .filter((a) => !String(a.metadata.name).startsWith(MARKER))
        .map((a) => [key(a), a]),
    );
    const renderedWorks = new Set(this.hubObjects.filter((o) => o.kind === 'ManifestWork').map(key));
    const liveApps = new Set<string>();
    const refused = new Set<string>();
    for (const set of await this.hub.list<Obj>(ARGOCD_API_VERSION, 'ApplicationSet', this.argoNamespace))
      if (set.metadata.deletionTimestamp)
        out.push(
          `ApplicationSet ${set.metadata.name} is being deleted (finalizers ${JSON.stringify(set.metadata.finalizers ?? [])})`,
        );
    for (const app of hubApps) {
      if (app.metadata.deletionTimestamp) {
        // An agent-managed hub Application keeps Argo CD's resources finalizer until the hub's Argo CD (or the
        // principal) releases it; neither is played here, so it may stay: its agent's copy goes regardless.
        if (isAgentModel(app)) continue;
        out.push(
          `hub Application ${app.metadata.name} is being deleted (finalizers ${JSON.stringify(app.metadata.finalizers ?? [])})${conditionsOf(app)}`,
        );
        continue;
      }
      liveApps.add(app.metadata.name);
      const agent = routedTo(app);
      if (isAgentModel(app)) {
        if (!agent || !this.agents.has(agent)) continue; // no agent there: nothing happens on the spoke
        const copy = spokeApps.get(`${this.argoNamespace}/${app.metadata.name}`);
        if (copy?.metadata?.annotations?.[SOURCE_UID_ANNOTATION] !== app.metadata.uid)
          out.push(
            `hub Application ${app.metadata.name} routed to the agent on ${agent} has no copy there${[...this.refusals].some((r) => r.includes(`: ${app.metadata.name}:`)) ? ' (the agent refuses: the spoke Application has no source UID)' : ''}`,
          );
        continue;
      }
      if (app.metadata.labels?.[PULL_LABEL] !== 'true') continue;
      const cluster = app.metadata.annotations?.[MANAGED_CLUSTER_ANNOTATION];
      // Only the hub Applications whose works the controller writes: synth writes a static app's work itself.
      if (cluster && this.outsideBound.has(cluster) && !isStaticApplication(app as Pick<Application, 'metadata'>)) {
        // OCM's tenancy rule: the controller must refuse it and say so (what the spoke runs stays as it was).
        if (!conditionsOf(app).includes('DeliveryError'))
          out.push(
            `hub Application ${app.metadata.name} targets ${cluster}, in no cluster set bound to ${this.argoNamespace}, and carries no DeliveryError${conditionsOf(app)}`,
          );
        refused.add(cluster);
        continue;
      }
      const work = works.get(`${cluster}/${manifestWorkName(this.argoNamespace, app.metadata.name)}`);
      if (!work) {
        out.push(`hub Application ${app.metadata.name} has no work in ${cluster}${conditionsOf(app)}`);
        continue;
      }
      const target = app.spec?.source?.targetRevision;
      const payload = payloads(work)[0];
      if (payload && payload.spec?.source?.targetRevision !== target)
        out.push(
          `work ${key(work)} carries ${payload.spec?.source?.targetRevision}, the hub Application ${target}${conditionsOf(app)}`,
        );
      // routed to an agent (a move's step 1 back to basic): the principal owns its status, not the controller
      if (agent) continue;
      if (
        app.status?.sync?.revision !== spokeRevision(String(target ?? 'HEAD')) ||
        app.status?.health?.status !== 'Healthy'
      )
        out.push(`hub Application ${app.metadata.name} does not report the spoke's status yet`);
      // a RollingSync app is done once its step came and its spoke synced it
      const owner = ((app.metadata.ownerReferences as Obj[] | undefined) ?? []).find(
        (r) => r.kind === 'ApplicationSet',
      );
      const spokeApp = spokeApps.get(`${this.argoNamespace}/${app.metadata.name}`);
      if (owner && this.rollingSteps.has(owner.name) && spokeApp?.status?.sync?.status !== 'Synced')
        out.push(
          `RollingSync ${owner.name}: ${app.metadata.name} is not synced on its spoke (${spokeApp?.status?.sync?.status ?? 'no spoke Application'}); its progressive sync entry: ${JSON.stringify(this.progressOf(owner.name, app.metadata.name))}`,
        );
    }
    // A RollingSync rollout is done once every app of its steps is Healthy and no operation waits on the
    // hub: an app left Pending gets its operation written again on the next pass (a settled step must not
    // leave one in flight for the next edit).
    for (const [k, sim] of this.sims) {
      const appSet = k.slice(0, k.lastIndexOf('/'));
      for (const entry of sim.applicationStatus)
        if (entry.step !== '-1' && entry.status !== 'Healthy')
          out.push(`RollingSync ${appSet}: ${entry.application} is ${entry.status} (${entry.message})`);
    }
    for (const app of hubApps) {
      const owner = ((app.metadata.ownerReferences as Obj[] | undefined) ?? []).find(
        (r) => r.kind === 'ApplicationSet',
      );
      if (owner && this.rollingSteps.has(owner.name) && app.operation && !app.metadata.deletionTimestamp)
        out.push(`RollingSync ${owner.name}: hub Application ${app.metadata.name} still carries an operation`);
    }
    for (const [cluster, objects] of this.folders)
      for (const o of objects) {
        if (o.kind !== 'Application') continue;
        const live = spokeApps.get(key(o));
        if (!live) out.push(`Application ${key(o)} of the spoke folder of ${cluster} is not on the spoke`);
        else if (live.metadata.deletionTimestamp)
          out.push(`Application ${key(o)} of the spoke folder of ${cluster} is being deleted`);
      }
    for (const [k, w] of works) {
      const mine = w.metadata.name.startsWith(`${this.argoNamespace}-`) || renderedWorks.has(k);
      if (!mine) continue;
      if (w.metadata.deletionTimestamp) {
        out.push(`work ${k} is being deleted`);
        continue;
      }
      const owner = w.metadata.annotations?.[HUB_APP_NAME_ANNOTATION];
      if (!renderedWorks.has(k) && (!owner || !liveApps.has(owner)))
        out.push(`work ${k} belongs to no hub Application (${owner ?? 'none'}) and is not rendered`);
      if (!applied(w)) {
        const condition = ((w.status?.conditions as Obj[] | undefined) ?? []).find((c) => c.type === 'Applied');
        const failed = ((w.status?.resourceStatus?.manifests as Obj[] | undefined) ?? []).flatMap((m) =>
          ((m.conditions as Obj[] | undefined) ?? [])
            .filter((c) => c.type === 'Applied' && c.status === 'False')
            .map((c) => `${m.resourceMeta?.kind} ${m.resourceMeta?.name}: ${c.message}`),
        );
        out.push(
          `work ${k} is not Applied at generation ${w.metadata.generation}${condition ? ` (Applied ${condition.status} at ${condition.observedGeneration}: ${condition.message}${failed.length ? `; ${failed.join('; ')}` : ''})` : ''}`,
        );
      }
      for (const p of payloads(w)) {
        const s = spokeApps.get(key(p));
        if (!s) out.push(`spoke Application ${key(p)} of work ${k} is missing`);
        else if (s.metadata.deletionTimestamp) out.push(`spoke Application ${key(p)} is being deleted`);
      }
    }
    this.tenancyRefused = refused;
    for (const [app, waves] of this.waves) {
      // A rollout with a refused cluster stops at its wave (synth warns): not held to finish.
      if (waves.some((wave) => wave.some((cluster) => refused.has(cluster)))) continue;
      const state = await this.hub.get<Obj>('v1', 'ConfigMap', this.argoNamespace, rolloutStateName(app));
      const phase = state?.data?.[ROLLOUT_PROGRESS_KEY]
        ? (JSON.parse(state.data[ROLLOUT_PROGRESS_KEY]) as { phase?: string }).phase
        : undefined;
      // idle: no waved hub Application to observe (every spoke of the app is moving or on an agent model)
      if (phase !== 'complete' && phase !== 'idle') out.push(`rollout of ${app} is ${phase ?? 'not started'}`);
    }
    return out;
  }

  /** The last progressive sync transitions of a generated app, for a message. */
  private transitionsOf(appSet: string, app: string): string {
    const sim = [...this.sims.entries()].find(([k]) => k.startsWith(`${appSet}/`))?.[1];
    return (sim?.transitions ?? [])
      .filter((t) => t.application === app)
      .slice(-6)
      .map((t) => `${t.from ?? '-'}→${t.to} (${t.message})`)
      .join('; ');
  }

  /** The progressive sync entry of a generated app, for a message. */
  private progressOf(appSet: string, app: string): unknown {
    const sim = [...this.sims.entries()].find(([k]) => k.startsWith(`${appSet}/`))?.[1];
    return sim?.statusOf(app) ?? 'none';
  }

  /** Clusters whose pull hub Application the controller refused by OCM's tenancy rule when the world settled. */
  refusedByTenancy(): string[] {
    return [...this.tenancyRefused].sort();
  }

  /**
   * Runs the played programs until the controller, the agents and they have caught up: two checks in a row
   * find nothing unsettled and no played program wrote anything. Throws (naming what is unsettled) after
   * `timeoutMs`.
   */
  async settle(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quiet = 0;
    let last: string[] = [];
    for (;;) {
      const writes =
        (await this.appSetController()) +
        (await this.principal()) +
        (await this.spokeFolders()) +
        (await this.spokeArgo());
      last = writes ? ['the played programs still write'] : await this.unsettled();
      quiet = last.length === 0 ? quiet + 1 : 0;
      if (quiet >= 2) return;
      if (Date.now() > deadline)
        throw new Error(
          `the world did not settle within ${timeoutMs} ms:\n  ${last.slice(0, 12).join('\n  ')}\n--- controller:\n${this.controllerOutput(15)}`,
        );
      await sleep(200);
    }
  }

  /** Creates a marker in each watched collection and waits until both watches delivered it. */
  private async markWatches(): Promise<{ works: number; apps: number }> {
    const name = `${MARKER}${++this.markers}`;
    await this.hub.create({
      apiVersion: WORK_API_VERSION,
      kind: 'ManifestWork',
      metadata: { name, namespace: this.argoNamespace },
      spec: {
        workload: { manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } }] },
      },
    });
    await this.spoke.create({
      apiVersion: ARGOCD_API_VERSION,
      kind: 'Application',
      metadata: { name, namespace: this.argoNamespace },
      spec: {
        project: 'default',
        destination: { server: 'https://kubernetes.default.svc' },
        source: { repoURL: 'https://x' },
      },
    });
    const found = (events: Seen[]) => events.findIndex((e) => e.type === 'ADDED' && e.object.metadata?.name === name);
    const deadline = Date.now() + 60_000;
    for (;;) {
      const works = found(this.workEvents);
      const apps = found(this.appEvents);
      if (works >= 0 && apps >= 0) {
        await this.hub.delete(WORK_API_VERSION, 'ManifestWork', this.argoNamespace, name);
        await this.spoke.delete(ARGOCD_API_VERSION, 'Application', this.argoNamespace, name);
        return { works, apps };
      }
      const broken = this.streams.map((s) => s.error()).find(Boolean);
      if (broken) throw new Error(`a watch failed, the history has a hole: ${String(broken)}`);
      if (Date.now() > deadline) throw new Error(`the watches did not deliver marker ${name} within 60 s`);
      await sleep(50);
    }
  }

  /**
   * Ends a step: waits until both watches delivered a marker, then judges every event since the last step:
   * deletions (as plan ids), orphaned works, pruned workloads, written works, and the waves invariant (no
   * cluster of wave N+1 gets a revision before every cluster of waves up to N runs it Healthy and Synced).
   */
  async observe(): Promise<StepObservation> {
    const { works: workEnd, apps: appEnd } = await this.markWatches();
    const deletedWorks = new Set<string>();
    const written = new Set<string>();
    const violations: string[] = [];
    const workDeletedPayloads = new Map<string, string[]>();
    for (const e of this.workEvents.slice(this.workCursor, workEnd)) {
      const w = e.object;
      const k = key(w);
      if (String(w.metadata?.name).startsWith(MARKER)) continue;
      const before = this.works.get(k);
      if (e.type === 'DELETED') {
        this.works.delete(k);
        this.doneAt.delete(k);
        if (!w.metadata.name.startsWith(`${this.argoNamespace}-`)) continue;
        deletedWorks.add(k);
        workDeletedPayloads.set(k, payloads(before ?? w).map(key));
        continue;
      }
      this.works.set(k, w);
      this.trail(k, w);
      this.noteDone(k, w);
      for (const p of payloads(w)) this.carrier.set(key(p), k);
      if (!w.metadata.name.startsWith(`${this.argoNamespace}-`)) continue;
      if (JSON.stringify(before?.spec) !== JSON.stringify(w.spec)) written.add(k);
      const violation = this.wavesViolation(w, before);
      if (violation) violations.push(violation);
    }
    this.workCursor = workEnd + 1;
    const deletedApps = new Set<string>();
    const deletions = new Set<string>();
    for (const e of this.appEvents.slice(this.appCursor, appEnd)) {
      const a = e.object;
      if (String(a.metadata?.name).startsWith(MARKER)) continue;
      const uid = a.metadata?.uid as string;
      if (e.type === 'DELETED' || a.metadata?.deletionTimestamp) {
        if (this.deleting.has(uid)) continue;
        this.deleting.add(uid);
        // deleted by a played agent (the principal told it to), else by the work agent (found by its work)
        const agent = this.agentDeleted.get(key(a));
        this.agentDeleted.delete(key(a));
        if (agent) deletions.add(`${ORACLE_HUB}/${agent}/argocd-agent/${key(a)}`);
        else deletedApps.add(key(a));
      }
    }
    this.appCursor = appEnd + 1;
    for (const app of deletedApps) {
      const work = this.carrier.get(app);
      if (!work) {
        deletions.add(`unattributed/${app}`);
        continue;
      }
      const [cluster, name] = work.split('/');
      if (deletedWorks.has(work)) deletions.add(`${ORACLE_HUB}/${cluster}/${name}`);
      else deletions.add(`${ORACLE_HUB}/${cluster}/${name}/argoproj.io/Application/${app}`);
    }
    const orphaned = [...deletedWorks].filter((w) =>
      (workDeletedPayloads.get(w) ?? []).every((p) => !deletedApps.has(p)),
    );
    const pruned = this.pruned.splice(0);
    violations.push(...this.rollingViolations.splice(0));
    return {
      upstreamOrder: this.upstreamOrder.splice(0),
      deletions: [...deletions].sort(),
      orphaned: orphaned.sort(),
      pruned,
      violations,
      written: [...written].sort(),
    };
  }

  /** The versions of each work seen, in short (for the waves invariant's message). */
  private readonly trails = new Map<string, string[]>();

  private trail(k: string, w: Obj): void {
    const p = payloads(w)[0];
    const f = p ? feedback(w, p) : {};
    const list = this.trails.get(k) ?? [];
    list.push(
      `rv ${w.metadata.resourceVersion} gen ${w.metadata.generation} ${p?.spec?.source?.targetRevision ?? '-'} applied=${applied(w)} health=${f.healthStatus ?? '?'} sync=${f.syncStatus ?? '?'} specHash=${f.specHash === p?.metadata?.annotations?.[SPEC_HASH_ANNOTATION] ? 'delivered' : (f.specHash ?? '?')}`,
    );
    this.trails.set(k, list.slice(-6));
  }

  /**
   * The revision each work's cluster has been seen done at: its work carries the revision and the feedback
   * says the spoke runs that payload (spec hash) Healthy and Synced. Done stays done until the work carries
   * another revision (a later status update without feedback, while the agent re-applies, does not undo it).
   */
  private readonly doneAt = new Map<string, string>();

  private noteDone(k: string, w: Obj): void {
    const p = payloads(w)[0];
    const revision = p?.spec?.source?.targetRevision as string | undefined;
    if (!p || revision === undefined) return;
    if (this.doneAt.has(k) && this.doneAt.get(k) !== revision) this.doneAt.delete(k);
    const f = feedback(w, p);
    if (
      f.healthStatus === 'Healthy' &&
      f.syncStatus === 'Synced' &&
      f.specHash === p.metadata?.annotations?.[SPEC_HASH_ANNOTATION]
    )
      this.doneAt.set(k, revision);
  }

  /**
   * A work version that moves a waved app's cluster to a new revision while a cluster of an earlier wave does
   * not run that revision Healthy and Synced yet (its latest work version, in the hub's order, says).
   */
  private wavesViolation(work: Obj, before: Obj | undefined): string | undefined {
    const payload = payloads(work)[0];
    if (!payload || work.metadata.deletionTimestamp) return undefined;
    const app = payload.metadata?.labels?.[FLEET_APP_LABEL] as string | undefined;
    const waves = app ? this.waves.get(app) : undefined;
    if (!app || !waves) return undefined;
    const revision = payload.spec?.source?.targetRevision;
    const previous = payloads(before)[0]?.spec?.source?.targetRevision;
    if (revision === previous) return undefined;
    const cluster = work.metadata.namespace as string;
    let wave = waves.findIndex((w) => w.includes(cluster));
    if (wave < 0) wave = waves.length - 1;
    for (let i = 0; i < wave; i++) {
      for (const earlier of waves[i]) {
        // this case's works only (an earlier case's may still be going away in the same namespace)
        const other = [...this.works.values()].find(
          (w) =>
            w.metadata.namespace === earlier &&
            String(w.metadata.name).startsWith(`${this.argoNamespace}-`) &&
            payloads(w)[0]?.metadata?.labels?.[FLEET_APP_LABEL] === app,
        );
        const p = payloads(other)[0];
        const f = other && p ? feedback(other, p) : {};
        const done =
          other !== undefined &&
          p?.spec?.source?.targetRevision === revision &&
          this.doneAt.get(key(other)) === revision;
        if (!done)
          return `waves of ${app}: ${cluster} (wave ${wave + 1}) got revision ${revision} while ${earlier} (wave ${i + 1}) ${
            !other
              ? 'had no work'
              : `ran ${p?.spec?.source?.targetRevision} (health ${f.healthStatus ?? '?'}, sync ${f.syncStatus ?? '?'})`
          }; versions of ${earlier}'s work so far: ${(this.trails.get(other ? key(other) : '') ?? []).join('; ')}`;
      }
    }
    return undefined;
  }

  /** Stops the controller and removes what the case left on both servers (finalizers first). */
  async tearDown(): Promise<void> {
    for (const s of this.streams.splice(0)) s.stop();
    await this.controllers?.stopAll();
    const strip = async (client: RawClient, o: Obj) => {
      const r = refOf(o);
      if ((o.metadata?.finalizers as unknown[] | undefined)?.length)
        await client
          .mergePatch(r.apiVersion, r.kind, r.namespace, r.name, { metadata: { finalizers: null } })
          .catch(ignoreGone);
      await client.delete(r.apiVersion, r.kind, r.namespace, r.name);
    };
    for (const a of await this.spoke.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace))
      await strip(this.spoke, { ...a, apiVersion: ARGOCD_API_VERSION, kind: 'Application' });
    for (const a of await this.hub.list<Obj>(ARGOCD_API_VERSION, 'ApplicationSet', this.argoNamespace))
      await strip(this.hub, { ...a, apiVersion: ARGOCD_API_VERSION, kind: 'ApplicationSet' });
    for (const a of await this.hub.list<Obj>(ARGOCD_API_VERSION, 'Application', this.argoNamespace))
      await strip(this.hub, { ...a, apiVersion: ARGOCD_API_VERSION, kind: 'Application' });
    for (const ns of this.pool)
      for (const w of await this.hub.list<Obj>(WORK_API_VERSION, 'ManifestWork', ns))
        if (w.metadata.name.startsWith(`${this.argoNamespace}-`))
          await strip(this.hub, { ...w, apiVersion: WORK_API_VERSION, kind: 'ManifestWork' });
    for (const o of this.appliedObjects)
      if (!o.metadata?.namespace && o.kind === 'ManagedClusterSet') await strip(this.hub, o);
    for (const ns of [this.argoNamespace, this.controllerNamespace])
      await this.hub.delete('v1', 'Namespace', undefined, ns);
    await this.spoke.delete('v1', 'Namespace', undefined, this.argoNamespace);
  }
}

/** A hub Application's conditions, for a message (empty without any). */
function conditionsOf(app: Obj): string {
  const conditions = ((app.status?.conditions as Obj[] | undefined) ?? []).map((c) => `${c.type}: ${c.message}`);
  return conditions.length ? ` (its conditions: ${conditions.join('; ')})` : '';
}

function ignoreGone(error: unknown): void {
  if (error instanceof RawApiError && (error.code === 404 || error.code === 409)) return;
  throw error;
}
