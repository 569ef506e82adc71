/**
 * The one table of what pullfleet renders that only some upstream releases accept or handle: feature →
 * the component that must have it → the first release that does, and the releases known to mishandle it.
 * Synth checks each feature a fleet uses against the versions the fleet declares (HubProps.versions,
 * SpokeProps.versions, ClusterSetProps.spokeVersions) through {@link featureFindings}, and
 * docs/reference/compatibility.md is written from this table; `heldBy` names the tests that prove each row.
 */
import { formatVersion, parseVersion, versionIn, type Version } from './versions.js';

/** A component a fleet declares the version of. */
export enum Component {
  HUB_ARGO_CD = 'hub Argo CD',
  SPOKE_ARGO_CD = 'spoke Argo CD',
  HUB_OCM = 'OCM cluster manager',
  KLUSTERLET = 'klusterlet',
  ACM = 'ACM',
  KUBERNETES = 'Kubernetes',
}

/** What synth does about a release outside a feature's supported range. */
export type Severity = 'error' | 'warning';

/** Releases of the component that mishandle the feature although they accept it. */
export interface KnownBroken {
  /** First release affected (`3.3.0`). */
  readonly from: string;
  /** Last release affected (`3.3.6`). */
  readonly to: string;
  readonly severity: Severity;
  /** What goes wrong on those releases, for the message. */
  readonly effect: string;
  /** What to do about it. */
  readonly fix: string;
}

/** One row of the table. */
export interface Feature {
  /** What the fleet asked for, as its file writes it, and what it renders. */
  readonly what: string;
  readonly component: Component;
  /** The first release that has it; undefined when every supported release does. */
  readonly since?: string;
  /** What below `since` means: an error (synth refuses), a warning, or nothing (pullfleet adapts its output). */
  readonly belowSince?: Severity | 'adapted';
  /** Why an older release cannot take it. */
  readonly why?: string;
  /** How to fix a fleet that uses it on an older release. */
  readonly fix?: string;
  readonly broken?: readonly KnownBroken[];
  /** The tests that hold the row (paths from the repository root). */
  readonly heldBy: readonly string[];
}

/** What 3.3.7–3.3.14, 3.4.0–3.4.6 and 3.5.0 do with a waved app whose template asks for automated sync. */
export const LOOP_EFFECT =
  'these releases compare the generated spec with the live one raw, and the live app carries `syncPolicy.automated.enabled: false` the template lacks, so every app goes back to Waiting on every pass (argo-cd #27577, fixed in 3.4.7 and 3.5.1)';

const LOOP_FIX =
  "upgrade the hub Argo CD to 3.4.7 or 3.5.1 or later, or turn prune off in the app's automated sync (pullfleet then renders the template with `enabled: false`, which ends the loop and changes nothing else)";

/** The features, by id. */
export const FEATURES = {
  deletionOrder: {
    what: 'Rollout.waves(..., { deletionOrder }) (ApplicationSet `strategy.deletionOrder`)',
    component: Component.HUB_ARGO_CD,
    since: '3.2',
    belowSince: 'error',
    why: 'older ApplicationSet CRDs have no `strategy.deletionOrder`, so the hub refuses the ApplicationSet',
    fix: 'drop deletionOrder from the rollout, or upgrade the hub Argo CD to 3.2 or later and declare it',
    heldBy: [
      'test/envtest/argo-versions.test.ts',
      'test/envtest/declared-versions.test.ts',
      'test/constructs/declared-versions.test.ts',
    ],
  },
  rollingSyncWaves: {
    // Every supported release drives it: 2.14 compares `operationState.syncResult.revision`, which the
    // controller writes back (test/envtest/rollout-old-hubs.test.ts plays 2.14, 3.0 and 3.2).
    what: 'a PullApplicationSet rolled out in waves (ApplicationSet RollingSync)',
    component: Component.HUB_ARGO_CD,
    broken: [
      {
        from: '3.3.0',
        to: '3.3.6',
        severity: 'warning',
        effect:
          'a change of the template alone (same Git revision) never syncs: these releases notice only revision changes',
        fix: 'upgrade the hub Argo CD to 3.3.7 or later (3.4.7+ or 3.5.1+ best), or sync such changes by hand',
      },
      {
        from: '3.3.7',
        to: '3.3.14',
        severity: 'warning',
        effect: LOOP_EFFECT,
        fix: LOOP_FIX,
      },
      { from: '3.4.0', to: '3.4.6', severity: 'warning', effect: LOOP_EFFECT, fix: LOOP_FIX },
      { from: '3.5.0', to: '3.5.0', severity: 'warning', effect: LOOP_EFFECT, fix: LOOP_FIX },
    ],
    heldBy: [
      'test/constructs/declared-versions.test.ts',
      'test/envtest/declared-versions.test.ts',
      'test/envtest/rollout-old-hubs.test.ts',
    ],
  },
  spokeLabelParams: {
    what: "SpokeParam.label in a PullApplicationSet (a matrix of the clusterDecisionResource and cluster generators, the second selecting by the first's `{{name}}`)",
    component: Component.HUB_ARGO_CD,
    since: '2.5',
    belowSince: 'error',
    why: 'before 2.5 a matrix child generator cannot read the parameters of the one before it, so the cluster generator would select no Secret and the ApplicationSet would generate no Application',
    fix: 'upgrade the hub Argo CD to 2.5 or later and declare it, or deliver with a PullApplication (SpokeParam and perSpoke are evaluated at synth there)',
    heldBy: ['test/constructs/per-spoke-appset.test.ts', 'test/envtest/per-spoke.test.ts'],
  },
  resourceSummaries: {
    what: 'resource summaries (HubProps.resourceSummaries: ManifestWork `manifestConfigs[].conditionRules`)',
    component: Component.HUB_OCM,
    since: '1.0',
    belowSince: 'error',
    why: 'older ManifestWork CRDs have no `conditionRules`, so the hub refuses every work carrying one',
    fix: 'set resourceSummaries: false on the hub, or upgrade the cluster manager to OCM 1.0 or later and declare it',
    heldBy: [
      'test/envtest/ocm-acm-versions.test.ts',
      'test/envtest/old-hub-crd.test.ts',
      'test/envtest/declared-versions.test.ts',
      'test/constructs/declared-versions.test.ts',
    ],
  },
  resourceSummariesAgent: {
    what: 'resource summaries (HubProps.resourceSummaries: condition rules the work agent evaluates)',
    component: Component.KLUSTERLET,
    since: '1.0',
    belowSince: 'error',
    why: 'work agents before OCM 1.0 ignore condition rules, so the spoke never reports a summary',
    fix: 'upgrade the klusterlet to OCM 1.0 or later (1.1+ best) and declare it, or set resourceSummaries: false on the hub',
    broken: [
      {
        from: '1.0',
        to: '1.0',
        severity: 'warning',
        effect:
          'OCM 1.0 agents never prune the condition of a removed rule, so after summaries are turned off the hub Application keeps a frozen `status.resources`',
        fix: 'upgrade the klusterlet to OCM 1.1 or later before turning resource summaries off',
      },
    ],
    heldBy: ['test/constructs/declared-versions.test.ts'],
  },
  watchFeedback: {
    what: 'FeedbackScrape.WATCH (ManifestWork `manifestConfigs[].feedbackScrapeType`)',
    component: Component.HUB_OCM,
    since: '1.2',
    belowSince: 'error',
    why: 'older ManifestWork CRDs have no `feedbackScrapeType`, so the hub refuses every work carrying it',
    fix: 'use FeedbackScrape.POLL, or upgrade the cluster manager to OCM 1.2 or later and declare it',
    heldBy: ['test/envtest/declared-versions.test.ts', 'test/constructs/declared-versions.test.ts'],
  },
  watchFeedbackAgent: {
    what: 'FeedbackScrape.WATCH (the work agent watches the spoke Application)',
    component: Component.KLUSTERLET,
    since: '1.2',
    belowSince: 'warning',
    why: 'work agents before OCM 1.2 ignore the scrape type and poll (every 60 s on a default klusterlet install)',
    fix: 'upgrade the klusterlet to OCM 1.2 or later and declare it, or expect polled status',
    heldBy: ['test/constructs/declared-versions.test.ts'],
  },
  gitopsAddon: {
    what: 'an ACM GitOpsCluster with the gitops add-on (`gitopsAddon`, and with it DeliveryModel.AGENT_MANAGED and AGENT_AUTONOMOUS)',
    component: Component.ACM,
    since: '2.15',
    belowSince: 'error',
    why: 'older GitOpsCluster CRDs have no `gitopsAddon`, so the hub refuses the GitOpsCluster',
    fix: 'use DeliveryModel.BASIC with gitopsAddon: false, or upgrade ACM to 2.15 or later and declare it',
    heldBy: [
      'test/envtest/ocm-acm-versions.test.ts',
      'test/envtest/declared-versions.test.ts',
      'test/constructs/declared-versions.test.ts',
    ],
  },
  automatedEnabled: {
    what: 'an app with automated sync in a RollingSync ApplicationSet on a 3.3+ hub (the hub writes `syncPolicy.automated.enabled: false`)',
    component: Component.SPOKE_ARGO_CD,
    since: '3.1',
    belowSince: 'adapted',
    why: 'the field exists from 3.1; the payload never carries it, on every spoke',
    heldBy: ['test/envtest/old-spoke-argocd.test.ts', 'test/envtest/declared-versions.test.ts'],
  },
  routeCrdGuardrail: {
    what: "the OpenShift spoke's duplicate Route CRD guardrail (a `ValidatingAdmissionPolicy` v1)",
    component: Component.KUBERNETES,
    since: '1.30',
    belowSince: 'adapted',
    why: 'served as admissionregistration.k8s.io/v1 from Kubernetes 1.30 (OpenShift 4.17); older spokes get the bootstrap without it',
    heldBy: ['test/envtest/old-openshift-bootstrap.test.ts', 'test/constructs/declared-versions.test.ts'],
  },
} as const satisfies Record<string, Feature>;

/** A feature of the table. */
export type FeatureId = keyof typeof FEATURES;

/** One thing to report about a feature in use. */
export interface FeatureFinding {
  readonly severity: Severity;
  readonly message: string;
}

/**
 * What to report about `feature`, used by `usedBy` (`PullApplicationSet "web"`), on a component `subject`
 * (`hub "eu"`, `spoke "edge-1"`) declares at `declared`: nothing when the version is undeclared (an undeclared
 * version refuses nothing), when the release has the feature, or when pullfleet adapts its output; else one
 * finding naming the feature, the component, the version and the fix. `skipBroken` leaves out the known-broken
 * ranges the caller handles itself.
 */
export function featureFindings(
  feature: FeatureId,
  declared: Version | undefined,
  subject: string,
  usedBy: string,
  skipBroken: (range: KnownBroken) => boolean = () => false,
): FeatureFinding[] {
  if (!declared) return [];
  const row: Feature = FEATURES[feature];
  const shownVersion = `${row.component} ${formatVersion(declared)}`;
  if (row.since !== undefined && row.belowSince !== 'adapted') {
    const since = parseVersion(row.since)!;
    const fit = versionIn(declared, since);
    if (fit === 'no')
      return [
        {
          severity: row.belowSince ?? 'error',
          message: `${usedBy} uses ${row.what}, which needs ${row.component} ${row.since} or later, but ${subject} declares ${shownVersion}: ${row.why}. Fix: ${row.fix}`,
        },
      ];
  }
  const findings: FeatureFinding[] = [];
  const unsure: KnownBroken[] = [];
  for (const range of row.broken ?? []) {
    if (skipBroken(range)) continue;
    const fit = versionIn(declared, parseVersion(range.from)!, parseVersion(range.to));
    if (fit === 'yes')
      findings.push({
        severity: range.severity,
        message: `${usedBy} uses ${row.what}, and ${subject} declares ${shownVersion}, where ${range.from}–${range.to} mishandle it: ${range.effect}. Fix: ${range.fix}`,
      });
    else if (fit === 'maybe') unsure.push(range);
  }
  if (unsure.length > 0)
    findings.push({
      severity: 'warning',
      message: `${usedBy} uses ${row.what}, and ${subject} declares ${shownVersion} without a patch release, but ${unsure.map((r) => `${r.from}–${r.to}`).join(' and ')} mishandle it (${unsure.map((r) => r.effect).join('; ')}): declare the patch release it runs (major.minor.patch, for example '${formatVersion(declared)}.0')`,
    });
  return findings;
}
