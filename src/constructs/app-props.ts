import { Construct } from 'constructs';
import { type JsonObject } from '../model/core/types.js';
import { type ResourceGrant, type SpokeDelivery } from '../model/delivery/bootstrap.js';
import { type AppDefinition } from '../model/delivery/hub-application.js';
import { grantProblems } from '../model/validation/grants.js';
import { labelKeyRule } from '../model/validation/object-rules.js';
import { appWarnings, destinationRule, dnsLabelRule, dnsSubdomainRule, labelRule } from '../model/validation/rules.js';
import { APP_SOURCE_CHECK, type AppSource } from './app-source.js';
import { Hub, hubContaining } from './hub.js';
import { claimId, markKind, nameFromId } from './_ids.js';
import type { IPlacement } from './interfaces.js';
import {
  bool,
  checkProps,
  recordWarning,
  listOf,
  propReported,
  required,
  shape,
  str,
  stringMap,
  type PropSpec,
  type PropsOf,
} from './_props-check.js';

/** Props shared by PullApplication and PullApplicationSet. */
export interface PullAppOptions {
  /**
   * The app name (a DNS label).
   * @default - the construct id
   */
  readonly name?: string;
  /** Where the manifests come from. */
  readonly source: AppSource;
  /** Namespace the app deploys into on each spoke (created by the spoke bootstrap). */
  readonly destinationNamespace: string;
  /**
   * Destination API server. Pulled apps always deploy to their own spoke, so anything but the
   * in-cluster address fails validation.
   * @default 'https://kubernetes.default.svc'
   */
  readonly destinationServer?: string;
  /**
   * Argo CD project on the spoke.
   * @default 'default'
   */
  readonly project?: string;
  /**
   * Sync automatically.
   * @default true
   */
  readonly autoSync?: boolean;
  /**
   * With autoSync: delete resources that left the source.
   * @default true
   */
  readonly prune?: boolean;
  /**
   * With autoSync: revert changes made on the spoke.
   * @default true
   */
  readonly selfHeal?: boolean;
  /**
   * Argo CD sync options, for example `ServerSideApply=true`.
   * @default []
   */
  readonly syncOptions?: readonly string[];
  /**
   * Resources the app renders, by API group: the spoke Argo CD gets exactly these permissions in the
   * destination namespace (or cluster-wide for `clusterScoped` grants).
   * @default []
   */
  readonly resources?: readonly ResourceGrant[];
  /**
   * Delete the app's workload on the spoke when its Application is deleted (Argo CD resources finalizer).
   * @default false
   */
  readonly pruneOnDelete?: boolean;
  /**
   * Extra labels on the hub Application (and the spoke copy).
   * @default {}
   */
  readonly labels?: Record<string, string>;
}

/** The runtime type of every {@link PullAppOptions} key, shared by PullApplication and PullApplicationSet (see props-check.ts). */
export const PULL_APP_CHECKS: PropSpec<PullAppOptions> = {
  name: str(),
  source: APP_SOURCE_CHECK,
  destinationNamespace: str(),
  destinationServer: str(),
  project: str(),
  autoSync: bool(),
  prune: bool(),
  selfHeal: bool(),
  syncOptions: listOf(str(), "['ServerSideApply=true']"),
  resources: listOf(
    shape<ResourceGrant>('resources grant', {
      apiGroup: required(str()),
      resources: required(listOf(str(), "['deployments']")),
      clusterScoped: bool(),
      kinds: listOf(str(), "['ClusterRole']"),
    }),
    "[{ apiGroup: 'apps', resources: ['deployments'] }]",
  ),
  pruneOnDelete: bool(),
  labels: stringMap('label', "{ team: 'web' }"),
};

/** Resolves the shared options once; problems are reported at synth through `node.addValidation`. */
export function resolveApp(
  scope: Construct,
  id: string,
  props: PullAppOptions,
): { def: AppDefinition; grants: ResourceGrant[]; problems: string[] } {
  const name = props.name ?? id;
  const problems: string[] = [];
  const source = props.source as AppSource | undefined;
  if ((!source || typeof (source as { toJson?: unknown }).toJson !== 'function') && !propReported(scope, 'source')) {
    problems.push(
      `source is ${source === undefined ? 'missing' : JSON.stringify(source)}: give the app a source, AppSource.git({ repoURL, path }) or AppSource.helm({ repoURL, chart, targetRevision })`,
    );
  }
  for (const p of [
    dnsLabelRule('app name', name),
    dnsLabelRule('destinationNamespace', props.destinationNamespace),
    destinationRule(props.destinationServer),
  ]) {
    if (p) problems.push(p);
  }
  for (const [key, value] of Object.entries(props.labels ?? {})) {
    const keyProblem = labelKeyRule('app label', key);
    if (keyProblem) problems.push(keyProblem);
    const p = labelRule('app', key, value);
    if (p) problems.push(p);
  }
  for (const p of props.source?._problems() ?? []) problems.push(`app "${name}": ${p}`);
  const autoSync = props.autoSync ?? true;
  const syncPolicy: JsonObject = {};
  if (autoSync) syncPolicy.automated = { prune: props.prune ?? true, selfHeal: props.selfHeal ?? true };
  if (Array.isArray(props.syncOptions) && props.syncOptions.length) syncPolicy.syncOptions = [...props.syncOptions];
  const grants: ResourceGrant[] = [];
  for (const grant of props.resources ?? []) {
    const resources = Array.isArray(grant.resources) ? grant.resources : [];
    if (resources.length === 0 || resources.some((r) => r === '*' || r.length === 0)) {
      problems.push(
        `resources grant for API group "${grant.apiGroup}" lists ${JSON.stringify(grant.resources)}: name each resource (no "*", no empty list)`,
      );
    } else if (grant.apiGroup === '*') {
      problems.push('resources grant API group "*" is not allowed: declare each API group the app renders');
    } else {
      problems.push(...grantProblems(grant));
      grants.push(grant);
    }
  }
  if (props.syncOptions !== undefined && !Array.isArray(props.syncOptions))
    problems.push(
      `syncOptions ${JSON.stringify(props.syncOptions)} is not a list: give a list such as ["ServerSideApply=true"]`,
    );
  const project = props.project ?? 'default';
  const projectProblem = dnsSubdomainRule('project', project);
  if (projectProblem) problems.push(projectProblem);
  for (const grant of grants) {
    const badKind = (grant.kinds ?? []).find((kind) => !/^[A-Z][A-Za-z0-9]*$/.test(kind));
    if (badKind !== undefined)
      problems.push(
        `kind "${badKind}" of the grant for API group "${grant.apiGroup}" is not a Kubernetes kind: use the kind as written in manifests, for example "ClusterRole"`,
      );
    if (grant.clusterScoped && project !== 'default' && !grant.kinds?.length) {
      problems.push(
        `cluster-scoped resources ${JSON.stringify(grant.resources)} of API group "${grant.apiGroup}" are declared without kinds, but project "${project}" admits only the cluster-scoped kinds its AppProject whitelists: add kinds to the grant, for example kinds: ['ClusterRole']`,
      );
    }
  }
  const def: AppDefinition = {
    name,
    project,
    sources: source && typeof source.toJson === 'function' ? [source.toJson()] : [],
    destinationNamespace: props.destinationNamespace,
    ...(Object.keys(syncPolicy).length ? { syncPolicy } : {}),
    pruneOnDelete: props.pruneOnDelete ?? false,
    labels: { ...(props.labels ?? {}) },
  };
  return { def, grants, problems };
}

/** What a spoke's bootstrap needs to know about an app deploying there. */
export function deliveryOf(def: AppDefinition, grants: readonly ResourceGrant[]): SpokeDelivery {
  const repos = def.sources.map((s) => s.repoURL).filter((r): r is string => typeof r === 'string');
  return { namespace: def.destinationNamespace, grants, project: def.project, sourceRepos: repos };
}

/** What PullApplication and PullApplicationSet share: the hub, the resolved app and its problems. */
export abstract class PullAppBase extends Construct {
  /** The app name (a DNS label). */
  public readonly name: string;
  /** The hub the app is delivered from. */
  public readonly hub: Hub;
  /** @internal the resolved app definition, as the subclasses render it. */
  protected readonly app: AppDefinition;
  /** @internal the Kubernetes grants the app's spoke namespace needs. */
  protected readonly grants: ResourceGrant[];
  /** @internal reported at synth through `node.addValidation`. */
  protected readonly problems: string[];

  /** @internal legal but almost certainly wrong; shown by synth and validate, errors with --strict. */
  protected readonly warnings: string[];

  /** @internal only PullApplication and PullApplicationSet extend this class. */
  protected constructor(
    scope: Construct,
    id: string,
    props: PullAppOptions,
    kind: string,
    spec: PropsOf<PullAppOptions>,
  ) {
    super(scope, claimId(scope, kind, id));
    markKind(this, kind);
    this.hub = hubContaining(scope, { kind, id });
    // Subclasses read their own props back with checkedProps(this).
    props = checkProps(this, spec, props);
    for (const w of props.source?._warnings?.() ?? [])
      recordWarning(this, this.node.path, `app "${nameFromId(this, id)}": ${w}`);
    const resolved = resolveApp(this, nameFromId(this, id), props);
    this.warnings = appWarnings(resolved.def, this.hub.argoNamespace, resolved.grants);
    this.name = resolved.def.name;
    this.app = resolved.def;
    this.grants = resolved.grants;
    this.problems = resolved.problems;
    this.node.addValidation({ validate: () => [...this.problems] });
  }

  /** The resolved app definition (source, destination, sync policy): a copy, which changes nothing rendered. */
  public get definition(): AppDefinition {
    return JSON.parse(JSON.stringify(this.app)) as AppDefinition;
  }

  /** @internal legal but almost certainly wrong (shown by synth and validate; errors with --strict). */
  public _warnings(): string[] {
    return [...this.warnings];
  }

  /** @internal true when `placement` is on this app's hub; otherwise records why not and returns false. */
  protected placementOnThisHub(placement: IPlacement): boolean {
    if (placement.hub === this.hub) return true;
    this.problems.push(
      `placement "${placement.node.path}" belongs to hub "${placement.hub.name}", not "${this.hub.name}": use a placement of this hub`,
    );
    return false;
  }

  /** @internal what a target spoke's bootstrap needs to know about this app. */
  protected delivery(): SpokeDelivery {
    return deliveryOf(this.app, this.grants);
  }
}
