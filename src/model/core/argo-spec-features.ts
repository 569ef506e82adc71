/**
 * The first Argo CD release whose Application CRD has each field an Application spec may use, so that a
 * spec can be checked against the Argo CD release a spoke declares (a spoke on 3.0 refuses
 * `syncPolicy.automated.enabled`: the work agent's server-side apply fails on the unknown field).
 *
 * The table is read off the Application CRDs of the releases users run, kept in
 * `../shared/upstream-versions/argo-cd/<tag>/application-crd.yaml` (v2.14.21 to v3.5.1): a field gets the
 * first release whose CRD has it, and `before 2.14` when v2.14.21 has it already. A unit test
 * (test/constructs/app-spec-features.test.ts) reads those CRDs and checks every field entry, so the table
 * cannot drift from them. Behaviour that no CRD shows (a `repoURL` form) names the upstream source it was
 * read in; those entries are cited on docs/reference/upstream-contract.md.
 */
import type { JsonObject } from './types.js';

/** One feature a rendered Application spec uses, and the first Argo CD release that has it. */
export interface ArgoSpecRequirement {
  /** Where the spec uses it: `spec.sources[1].helm.skipSchemaValidation`. */
  readonly path: string;
  /** The first Argo CD release that has it (`3.1`), or `before 2.14` (every release pullfleet supports). */
  readonly since: string;
  /** What the feature is, for messages. */
  readonly what: string;
}

/** The oldest Argo CD release whose CRD the table was read from. */
export const OLDEST_TRACKED_ARGO_RELEASE = '2.14';
/** `since` of a field every tracked release has. */
export const BEFORE_TRACKED = `before ${OLDEST_TRACKED_ARGO_RELEASE}`;

/**
 * A field of the Application spec, as a path below `spec` in the CRD's terms: `source.` stands for
 * `spec.source` and every item of `spec.sources`.
 * @internal exported for the test that checks the table against the CRDs.
 */
export interface ArgoFieldFeature {
  readonly field: string;
  readonly since: string;
  readonly what: string;
}

/**
 * A behaviour a value selects (not a field): `since` comes from the upstream source named in `upstream`.
 * @internal exported for the test.
 */
export interface ArgoValueFeature {
  /** The field whose value selects it, as in {@link ArgoFieldFeature.field}. */
  readonly field: string;
  readonly matches: (value: unknown) => boolean;
  readonly since: string;
  readonly what: string;
  /** Where upstream shows it (repository, tag, file). */
  readonly upstream: string;
}

const B = BEFORE_TRACKED;

/**
 * Fields pullfleet renders, and every field added to the Application spec after v2.14.21.
 * @internal exported for the test that checks it against the CRDs.
 */
export const ARGO_FIELD_FEATURES: readonly ArgoFieldFeature[] = [
  { field: 'sources', since: B, what: 'several sources (spec.sources)' },
  { field: 'source.ref', since: B, what: 'a ref source (value files from another repository)' },
  { field: 'source.name', since: B, what: 'a source name' },
  { field: 'source.tagPrefix', since: '3.5', what: 'a tag prefix of a Git source' },
  { field: 'source.directory.recurse', since: B, what: 'a recursive directory source' },
  { field: 'source.directory.include', since: B, what: 'a directory include glob' },
  { field: 'source.directory.exclude', since: B, what: 'a directory exclude glob' },
  { field: 'source.directory.jsonnet', since: B, what: 'Jsonnet options' },
  { field: 'source.kustomize.images', since: B, what: 'Kustomize image overrides' },
  { field: 'source.kustomize.namePrefix', since: B, what: 'a Kustomize name prefix' },
  { field: 'source.kustomize.nameSuffix', since: B, what: 'a Kustomize name suffix' },
  { field: 'source.kustomize.commonLabels', since: B, what: 'Kustomize common labels' },
  { field: 'source.kustomize.commonAnnotations', since: B, what: 'Kustomize common annotations' },
  { field: 'source.kustomize.namespace', since: B, what: 'a Kustomize namespace' },
  { field: 'source.kustomize.replicas', since: B, what: 'Kustomize replica overrides' },
  { field: 'source.kustomize.patches', since: B, what: 'Kustomize patches' },
  { field: 'source.kustomize.components', since: B, what: 'Kustomize components' },
  { field: 'source.kustomize.version', since: B, what: 'a Kustomize version' },
  { field: 'source.kustomize.ignoreMissingComponents', since: '3.0', what: 'Kustomize ignoreMissingComponents' },
  { field: 'source.kustomize.labelIncludeTemplates', since: '3.0', what: 'Kustomize labelIncludeTemplates' },
  { field: 'source.kustomize.forceCommonLabels', since: B, what: 'Kustomize forceCommonLabels' },
  { field: 'source.kustomize.labelWithoutSelector', since: B, what: 'Kustomize labelWithoutSelector' },
  { field: 'source.kustomize.forceCommonAnnotations', since: B, what: 'Kustomize forceCommonAnnotations' },
  { field: 'source.kustomize.commonAnnotationsEnvsubst', since: B, what: 'Kustomize commonAnnotationsEnvsubst' },
  { field: 'source.kustomize.kubeVersion', since: B, what: 'a Kustomize Helm kubeVersion' },
  { field: 'source.kustomize.apiVersions', since: B, what: 'Kustomize Helm apiVersions' },
  { field: 'source.helm.valueFiles', since: B, what: 'Helm value files' },
  { field: 'source.helm.ignoreMissingValueFiles', since: B, what: 'Helm ignoreMissingValueFiles' },
  { field: 'source.helm.parameters', since: B, what: 'Helm parameters' },
  { field: 'source.helm.fileParameters', since: B, what: 'Helm file parameters' },
  { field: 'source.helm.valuesObject', since: B, what: 'Helm values as an object' },
  { field: 'source.helm.skipCrds', since: B, what: 'Helm skipCrds' },
  { field: 'source.helm.skipSchemaValidation', since: B, what: 'Helm skipSchemaValidation' },
  { field: 'source.helm.releaseName', since: B, what: 'a Helm release name' },
  { field: 'source.helm.namespace', since: B, what: 'a Helm namespace' },
  { field: 'source.helm.version', since: B, what: 'a Helm version' },
  { field: 'source.helm.passCredentials', since: B, what: 'Helm passCredentials' },
  { field: 'source.helm.skipTests', since: B, what: 'Helm skipTests' },
  { field: 'source.helm.kubeVersion', since: B, what: 'a Helm kubeVersion' },
  { field: 'source.helm.apiVersions', since: B, what: 'Helm apiVersions' },
  { field: 'source.plugin', since: B, what: 'a Config Management Plugin source' },
  { field: 'source.plugin.env', since: B, what: 'plugin environment variables' },
  { field: 'source.plugin.parameters', since: B, what: 'plugin parameters' },
  { field: 'ignoreDifferences', since: B, what: 'ignoreDifferences' },
  { field: 'ignoreDifferences.jqPathExpressions', since: B, what: 'ignoreDifferences jqPathExpressions' },
  { field: 'ignoreDifferences.managedFieldsManagers', since: B, what: 'ignoreDifferences managedFieldsManagers' },
  { field: 'syncPolicy.automated.enabled', since: '3.1', what: 'syncPolicy.automated.enabled' },
  { field: 'syncPolicy.automated.allowEmpty', since: B, what: 'syncPolicy.automated.allowEmpty' },
  { field: 'syncPolicy.retry', since: B, what: 'sync retries' },
  { field: 'syncPolicy.retry.refresh', since: '3.2', what: 'syncPolicy.retry.refresh' },
  { field: 'syncPolicy.managedNamespaceMetadata', since: B, what: 'managedNamespaceMetadata' },
  { field: 'info', since: B, what: 'info' },
  { field: 'revisionHistoryLimit', since: B, what: 'revisionHistoryLimit' },
  { field: 'sourceHydrator', since: B, what: 'a source hydrator' },
  { field: 'sourceHydrator.drySource.directory', since: '3.3', what: 'directory options of a hydrator dry source' },
  { field: 'sourceHydrator.drySource.helm', since: '3.3', what: 'Helm options of a hydrator dry source' },
  { field: 'sourceHydrator.drySource.kustomize', since: '3.3', what: 'Kustomize options of a hydrator dry source' },
  { field: 'sourceHydrator.drySource.plugin', since: '3.3', what: 'a plugin hydrator dry source' },
  { field: 'sourceHydrator.syncSource.repoURL', since: '3.5', what: 'a hydrator sync source repoURL' },
];

/**
 * Behaviours a value selects.
 * @internal exported for the test.
 */
export const ARGO_VALUE_FEATURES: readonly ArgoValueFeature[] = [
  {
    field: 'source.repoURL',
    matches: (value) => typeof value === 'string' && value.startsWith('oci://'),
    since: '3.1',
    what: 'an oci:// repoURL (an OCI artifact source, also for Helm charts from an OCI registry)',
    upstream:
      'argoproj/argo-cd v3.1.16 pkg/apis/application/v1alpha1/types.go ApplicationSource.IsOCI (absent in v3.0.23)',
  },
  {
    field: 'source.helm.version',
    matches: (value) => value === 'v4',
    since: '3.5',
    what: "Helm version 'v4'",
    upstream:
      "argoproj/argo-cd v3.5.1 util/helm/cmd.go:44 NewCmd takes '', 'v3' and 'v4' (v3.4.7 cmd.go:39: '' and 'v3' only)",
  },
];

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The values at `field` below `spec`, each with its path (`source.` covers `source` and every `sources[i]`). */
function valuesAt(spec: JsonObject, field: string): Array<{ path: string; value: unknown }> {
  const parts = field.split('.');
  let found: Array<{ path: string; value: unknown }> = [{ path: 'spec', value: spec }];
  parts.forEach((part, i) => {
    const next: Array<{ path: string; value: unknown }> = [];
    for (const { path, value } of found) {
      const walk = (item: unknown, at: string) => {
        if (item === undefined) return;
        // A list of objects (ignoreDifferences, sources): the next part applies to each item.
        if (Array.isArray(item) && i < parts.length - 1)
          item.forEach((entry, j) => next.push({ path: `${at}[${j}]`, value: entry }));
        else next.push({ path: at, value: item });
      };
      if (!isObject(value)) continue;
      if (i === 0 && part === 'source') {
        walk(value.source, `${path}.source`);
        if (parts.length > 1 && Array.isArray(value.sources))
          value.sources.forEach((entry, j) => next.push({ path: `${path}.sources[${j}]`, value: entry }));
        continue;
      }
      walk(value[part], `${path}.${part}`);
    }
    found = next;
  });
  return found;
}

/**
 * Every feature of the table that `spec` (an Application's `spec`) uses, with the first Argo CD release that has
 * it, in the order of the table and then of the spec.
 */
export function argoSpecRequirements(spec: JsonObject): ArgoSpecRequirement[] {
  const out: ArgoSpecRequirement[] = [];
  for (const feature of ARGO_FIELD_FEATURES)
    for (const { path } of valuesAt(spec, feature.field)) out.push({ path, since: feature.since, what: feature.what });
  for (const feature of ARGO_VALUE_FEATURES)
    for (const { path, value } of valuesAt(spec, feature.field))
      if (feature.matches(value)) out.push({ path, since: feature.since, what: feature.what });
  return out;
}

/** `major.minor` of an Argo CD version (`v3.1.16`, `3.1`), or undefined when it is not one. */
function minorOf(version: string): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+].*)?$/.exec(version.trim());
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** True when Argo CD `version` (`v3.0.23`, `3.0`) has a feature first released in `since` (`3.1`, `before 2.14`). */
export function argoVersionHas(version: string, since: string): boolean {
  if (since === BEFORE_TRACKED) return true;
  const have = minorOf(version);
  const need = minorOf(since);
  if (!have || !need) return false;
  return have[0] !== need[0] ? have[0] > need[0] : have[1] >= need[1];
}

/** The features `spec` uses that Argo CD `version` lacks (empty when the spoke's Argo CD reads the whole spec). */
export function argoSpecUnsupported(spec: JsonObject, version: string): ArgoSpecRequirement[] {
  return argoSpecRequirements(spec).filter((r) => !argoVersionHas(version, r.since));
}
