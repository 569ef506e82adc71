/**
 * Values per spoke (docs/concepts/per-spoke-values.md): what a static app computes for each spoke
 * (`PullAppOptions.perSpoke`), and the spoke parameters (`SpokeParam`) both static apps and ApplicationSets
 * read.
 */
import type { DeliveryModel } from '../model/delivery/delivery-model.js';
import type { AppDefinition } from '../model/delivery/hub-application.js';
import {
  applySpokeOverrides,
  mirroredLabelKey,
  spokeLabelParam,
  spokeLabelsRead,
  substituteSpokeParams,
  SPOKE_NAME_PARAM,
  type SourceOverrideJson,
} from '../model/delivery/per-spoke.js';
import { dnsLabelProblem } from '../model/core/names.js';
import type { JsonObject } from '../model/core/types.js';
import { qualifiedNameProblem } from '../model/validation/object-rules.js';
import { labelRule } from '../model/validation/rules.js';
import { copyValues, helmValueProblems, kustomizeImageProblem, type HelmParameter } from './app-source.js';
import type { SpokeVersions } from './spoke.js';

/** What a static app's {@link PullAppOptions.perSpoke} function knows about one spoke: plain, read-only data. */
export interface SpokeInfo {
  /** The ManagedCluster name. */
  readonly name: string;
  /** Its effective ManagedCluster labels (including the cluster-set and vendor labels). */
  readonly labels: Readonly<Record<string, string>>;
  /** Its ClusterClaims. */
  readonly claims: Readonly<Record<string, string>>;
  /** The cluster sets it is a member of, sorted. */
  readonly clusterSets: readonly string[];
  /** The delivery model it is on (during a move between models: the model this synth renders for). */
  readonly model: DeliveryModel;
  /** The releases it runs, as declared (each component undefined when undeclared). */
  readonly versions: Readonly<SpokeVersions>;
  /** The cluster runs OpenShift. */
  readonly openshift: boolean;
}

/** What one spoke changes in one source of an app. Every field is optional; nothing given changes nothing. */
export interface SourceOverride {
  /**
   * Helm values deep-merged over the source's `values`: where both hold an object they merge key by key; an
   * array, string, number, boolean or `null` replaces what the source holds (`null` removes a chart default).
   * @default - the source's values
   */
  readonly values?: Record<string, unknown>;
  /**
   * Helm parameters added after the source's own; one of the same name replaces the source's in place.
   * @default []
   */
  readonly parameters?: readonly HelmParameter[];
  /**
   * Helm value files added after the source's own (later files win in Helm).
   * @default []
   */
  readonly valueFiles?: readonly string[];
  /**
   * Kustomize image overrides added after the source's own; one for the same image replaces the source's.
   * @default []
   */
  readonly images?: readonly string[];
  /**
   * Kustomize name prefix, replacing the source's.
   * @default - the source's
   */
  readonly namePrefix?: string;
  /**
   * Kustomize name suffix, replacing the source's.
   * @default - the source's
   */
  readonly nameSuffix?: string;
  /**
   * Kustomize common labels merged over the source's (a key given here wins).
   * @default {}
   */
  readonly commonLabels?: Record<string, string>;
  /**
   * Kustomize namespace, replacing the source's.
   * @default - the source's
   */
  readonly namespace?: string;
  /**
   * Branch, tag, commit or chart version, replacing the source's.
   * @default - the source's
   */
  readonly targetRevision?: string;
  /**
   * Path inside the repository, replacing the source's (not for charts from a Helm repository).
   * @default - the source's
   */
  readonly path?: string;
}

/**
 * What one spoke changes in an app. The fields of {@link SourceOverride} apply to the app's one source (with
 * `sources`: to its one source that is not a ref source); `sources` addresses sources one by one.
 */
export interface SpokeOverrides extends SourceOverride {
  /**
   * Overrides by source: keyed by the source's index in `sources` (`'0'`, `'1'`, ...) or by a ref source's name
   * (only `targetRevision` applies to a ref source).
   * @default {}
   */
  readonly sources?: Record<string, SourceOverride>;
}

/**
 * Spoke parameters: strings that stand for a property of the spoke an app is delivered to. Put them in string
 * values of a source (Helm values and parameter values, value files, paths, target revisions, plugin env):
 * a PullApplicationSet renders them as ApplicationSet parameters the hub's applicationset-controller fills in,
 * and a PullApplication replaces them at synth with the same values.
 */
export class SpokeParam {
  /**
   * The value of ManagedCluster label `key` of the spoke (`SpokeParam.label('region')`). A
   * PullApplicationSet using it mirrors the label onto the fleet's cluster Secrets and renders a matrix of its
   * placement's decisions and those Secrets (Argo CD 2.5 or later on the hub); every spoke its placement
   * selects must have the label.
   */
  public static label(key: string): string {
    return spokeLabelParam(key);
  }

  /** The spoke's name (the ManagedCluster name). */
  public static readonly NAME: string = SPOKE_NAME_PARAM;

  private constructor() {}
}

/** The parts of a source override that apply to one source, checked against the source; problems collected. */
function overrideJson(
  override: SourceOverride,
  source: JsonObject,
  at: string,
  problems: string[],
): SourceOverrideJson | undefined {
  if (typeof override !== 'object' || override === null || Array.isArray(override)) {
    problems.push(`${at} is ${JSON.stringify(override)}: give an object such as { values: { region: 'eu' } }`);
    return undefined;
  }
  const known = new Set([
    'values',
    'parameters',
    'valueFiles',
    'images',
    'namePrefix',
    'nameSuffix',
    'commonLabels',
    'namespace',
    'targetRevision',
    'path',
    'sources',
  ]);
  for (const key of Object.keys(override))
    if (!known.has(key)) problems.push(`${at} has the unknown key "${key}": use ${[...known].join(', ')}`);
  const isRef = typeof source.ref === 'string';
  const isHelm = source.chart !== undefined || source.helm !== undefined;
  const isKustomize = source.kustomize !== undefined;
  const out: { -readonly [K in keyof SourceOverrideJson]: SourceOverrideJson[K] } = {};
  const str = (key: keyof SourceOverride, value: unknown): value is string => {
    if (value === undefined) return false;
    if (typeof value === 'string' && value.trim().length > 0) return true;
    problems.push(`${at}.${key} is ${JSON.stringify(value)}: give a non-empty string`);
    return false;
  };
  const needs = (keys: readonly (keyof SourceOverride)[], ok: boolean, kind: string) => {
    for (const key of keys)
      if (override[key] !== undefined && !ok)
        problems.push(`${at}.${key} applies to ${kind} sources only, and this source is not one: remove it`);
    return ok;
  };
  if (isRef) {
    for (const key of Object.keys(override))
      if (key !== 'targetRevision')
        problems.push(`${at}.${key} does not apply to a ref source (it renders nothing): give targetRevision only`);
    if (str('targetRevision', override.targetRevision)) out.targetRevision = override.targetRevision;
    return out;
  }
  if (str('targetRevision', override.targetRevision)) out.targetRevision = override.targetRevision;
  if (str('path', override.path)) {
    if (source.chart !== undefined)
      problems.push(`${at}.path does not apply to a chart from a Helm repository (it has no path): remove it`);
    else out.path = override.path;
  }
  if (needs(['values', 'parameters', 'valueFiles'], isHelm, 'Helm')) {
    if (override.values !== undefined) {
      const p = helmValueProblems(override.values);
      if (typeof override.values !== 'object' || override.values === null || Array.isArray(override.values))
        problems.push(`${at}.values is ${JSON.stringify(override.values)}: give an object of Helm values`);
      else if (p.length) problems.push(...p.map((m) => `${at}: ${m}`));
      else out.values = copyValues(override.values) as JsonObject;
    }
    if (override.valueFiles !== undefined) {
      if (!Array.isArray(override.valueFiles) || override.valueFiles.some((f) => typeof f !== 'string' || !f.trim()))
        problems.push(`${at}.valueFiles is ${JSON.stringify(override.valueFiles)}: give a list of non-empty paths`);
      else out.valueFiles = [...override.valueFiles];
    }
    if (override.parameters !== undefined) {
      const params: JsonObject[] = [];
      (Array.isArray(override.parameters) ? override.parameters : []).forEach((param, i) => {
        if (typeof param?.name !== 'string' || !param.name.trim() || /[\s=]/.test(param.name))
          problems.push(
            `${at}.parameters[${i}].name ${JSON.stringify(param?.name)} is not a Helm value path: write it as --set does, for example "image.tag"`,
          );
        else if (typeof param.value !== 'string')
          problems.push(`${at}.parameters[${i}].value is ${JSON.stringify(param.value)}: give a string`);
        else params.push({ name: param.name, value: param.value, ...(param.forceString ? { forceString: true } : {}) });
      });
      if (!Array.isArray(override.parameters))
        problems.push(`${at}.parameters is not a list: give [{ name: 'image.tag', value: '1.2' }]`);
      else out.parameters = params;
    }
  }
  if (needs(['images', 'namePrefix', 'nameSuffix', 'commonLabels', 'namespace'], isKustomize, 'Kustomize')) {
    if (override.images !== undefined) {
      const images = Array.isArray(override.images) ? override.images : [];
      if (!Array.isArray(override.images)) problems.push(`${at}.images is not a list: give ['nginx:1.25']`);
      for (const image of images) {
        const p = typeof image === 'string' ? kustomizeImageProblem(image) : `image ${JSON.stringify(image)}`;
        if (p) problems.push(`${at}: ${p}`);
      }
      out.images = [...images];
    }
    for (const key of ['namePrefix', 'nameSuffix'] as const) {
      const value = override[key];
      if (value === undefined) continue;
      if (typeof value !== 'string' || !/^[a-z0-9.-]*$/.test(value))
        problems.push(
          `${at}.${key} ${JSON.stringify(value)} would make resource names that are not DNS names: use lower-case letters, digits, "-" and "."`,
        );
      else out[key] = value;
    }
    if (override.commonLabels !== undefined) {
      for (const [key, value] of Object.entries(override.commonLabels)) {
        const p = qualifiedNameProblem(key);
        const v = typeof value === 'string' ? labelRule(`${at}.commonLabels`, key, value) : 'is not a string';
        if (p) problems.push(`${at}.commonLabels key "${key}" ${p}`);
        else if (v) problems.push(typeof value === 'string' ? v : `${at}.commonLabels["${key}"] ${v}`);
      }
      out.commonLabels = { ...override.commonLabels };
    }
    if (override.namespace !== undefined) {
      const p = typeof override.namespace === 'string' ? dnsLabelProblem(override.namespace) : 'is not a string';
      if (p) problems.push(`${at}.namespace ${JSON.stringify(override.namespace)} ${p}: give a namespace name`);
      else out.namespace = override.namespace;
    }
  }
  return out;
}

/** The overrides `result` (what `perSpoke` returned) gives, by source index; problems collected. */
function overridesBySource(
  def: AppDefinition,
  result: SpokeOverrides,
  problems: string[],
): Map<number, SourceOverrideJson> {
  const out = new Map<number, SourceOverrideJson>();
  if (typeof result !== 'object' || result === null || Array.isArray(result)) {
    problems.push(`returned ${JSON.stringify(result)}: return an object such as { values: { region: 'eu' } } (or {})`);
    return out;
  }
  const { sources, ...top } = result;
  if (Object.keys(top).length > 0) {
    const deploying = def.sources.map((s, i) => [s, i] as const).filter(([s]) => typeof s.ref !== 'string');
    if (deploying.length !== 1)
      problems.push(
        `gives ${Object.keys(top).join(', ')} for "the" source, but the app has ${deploying.length} sources that deploy: give them by source in sources: { '0': { ... } }`,
      );
    else {
      const [source, index] = deploying[0];
      const json = overrideJson(top, source, 'the override', problems);
      if (json) out.set(index, json);
    }
  }
  if (sources !== undefined) {
    if (typeof sources !== 'object' || sources === null || Array.isArray(sources)) {
      problems.push(`sources is ${JSON.stringify(sources)}: give an object keyed by source index or ref name`);
      return out;
    }
    for (const [key, override] of Object.entries(sources)) {
      const index = /^\d+$/.test(key) ? Number(key) : def.sources.findIndex((s) => s.ref === key);
      if (index < 0 || index >= def.sources.length) {
        const refs = def.sources.map((s) => s.ref).filter((r): r is string => typeof r === 'string');
        problems.push(
          `sources["${key}"] names no source of the app: use an index from 0 to ${def.sources.length - 1}${refs.length ? ` or a ref name (${refs.join(', ')})` : ''}`,
        );
        continue;
      }
      if (out.has(index)) {
        problems.push(
          `source ${index} is given twice (as "the" source and in sources, or by index and by ref name): give it once`,
        );
        continue;
      }
      const json = overrideJson(override, def.sources[index], `sources["${key}"]`, problems);
      if (json) out.set(index, json);
    }
  }
  return out;
}

/**
 * The definition `def` takes on `spoke`: `perSpoke`'s overrides applied, then the spoke parameters replaced.
 * Problems (the function threw, returned something invalid) name the app and the spoke; with any, `def` is
 * undefined.
 * @internal
 */
export function definitionForSpoke(
  def: AppDefinition,
  spoke: SpokeInfo,
  perSpoke: ((spoke: SpokeInfo) => SpokeOverrides) | undefined,
): { def?: AppDefinition; problems: string[] } {
  let result = def;
  if (perSpoke) {
    let returned: SpokeOverrides;
    try {
      returned = perSpoke(spoke);
    } catch (error) {
      return {
        problems: [
          `perSpoke of app "${def.name}" threw for spoke "${spoke.name}": ${error instanceof Error ? error.message : String(error)}: make the function handle every spoke (for example a label the spoke lacks)`,
        ],
      };
    }
    const problems: string[] = [];
    const overrides = overridesBySource(def, returned ?? {}, problems);
    if (problems.length)
      return { problems: problems.map((p) => `perSpoke of app "${def.name}" for spoke "${spoke.name}": ${p}`) };
    result = applySpokeOverrides(def, overrides);
  }
  const missing = spokeLabelKeysIn(result).filter((key) => spoke.labels[key] === undefined);
  if (missing.length)
    return {
      problems: [
        `app "${def.name}" reads label${missing.length > 1 ? 's' : ''} ${missing.map((k) => `"${k}"`).join(', ')} of spoke "${spoke.name}" (SpokeParam.label), which it does not have: give the spoke the label, or leave it out of the app`,
      ],
    };
  return { def: { ...result, sources: substituteSpokeParams(result.sources, spoke) }, problems: [] };
}

/** The ManagedCluster label keys `def`'s spoke parameters read, sorted. @internal */
export function spokeLabelKeysIn(def: AppDefinition): string[] {
  return spokeLabelsRead(def.sources);
}

/** Why SpokeParam.label(`key`) cannot reach a template, or undefined. @internal */
export function spokeLabelKeyProblem(key: string): string | undefined {
  const p = qualifiedNameProblem(key);
  if (p) return `SpokeParam.label("${key}"): "${key}" ${p}: give a label key such as "region"`;
  if (!mirroredLabelKey(key))
    return `SpokeParam.label("${key}"): its prefix is too long to mirror onto the cluster Secret as a label (<prefix>.spoke.pullfleet.io/<name>, at most 253 characters before the "/"): use a label with a shorter prefix`;
  return undefined;
}
