/**
 * Per-spoke parts of an app: the overrides a static app computes for each spoke, applied to the sources of
 * its definition, and the spoke-label parameters an ApplicationSet template reads through a matrix of the
 * clusterDecisionResource and cluster generators (docs/concepts/per-spoke-values.md). Pure: synth, plan and
 * tests evaluate the same functions the hub's output is rendered with.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import { PULLFLEET_PREFIX } from '../core/keys.js';
import { sortKeys } from '../core/records.js';
import type { JsonObject, JsonValue } from '../core/types.js';
import type { AppDefinition } from './hub-application.js';

/** What a spoke changes in one source of an app (JSON level, already checked). */
export interface SourceOverrideJson {
  /** Helm values, deep-merged over the source's `helm.valuesObject`: objects merge, arrays and scalars replace. */
  readonly values?: JsonObject;
  /** Helm parameters added after the source's own; one of the same name replaces it in place. */
  readonly parameters?: readonly JsonObject[];
  /** Helm value files added after the source's own. */
  readonly valueFiles?: readonly string[];
  /** Kustomize image overrides added after the source's own; one for the same image replaces it in place. */
  readonly images?: readonly string[];
  readonly namePrefix?: string;
  readonly nameSuffix?: string;
  /** Kustomize common labels merged over the source's own. */
  readonly commonLabels?: Record<string, string>;
  readonly namespace?: string;
  readonly targetRevision?: string;
  readonly path?: string;
}

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `over` deep-merged over `base`: where both hold an object, the objects merge key by key; anything else in
 * `over` (an array, a string, a number, a boolean, `null`) replaces what `base` holds. Neither is changed.
 */
export function mergeValues(base: JsonValue | undefined, over: JsonValue): JsonValue {
  if (!isObject(base) || !isObject(over)) return over;
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) out[key] = key in base ? mergeValues(base[key], value) : value;
  return out;
}

/** The image name an override of `kustomize edit set image` is for (`nginx` in `nginx:1.25`, `nginx=...`). */
function imageName(image: string): string {
  const eq = image.indexOf('=');
  if (eq >= 0) return image.slice(0, eq);
  const at = image.indexOf('@');
  const ref = at >= 0 ? image.slice(0, at) : image;
  const colon = ref.lastIndexOf(':');
  return colon > ref.lastIndexOf('/') ? ref.slice(0, colon) : ref;
}

/** `source` (an Application `spec.source`) with `override` applied; `source` is not changed. */
export function applySourceOverride(source: JsonObject, override: SourceOverrideJson): JsonObject {
  const out = JSON.parse(JSON.stringify(source)) as JsonObject;
  if (override.targetRevision !== undefined) out.targetRevision = override.targetRevision;
  if (override.path !== undefined) out.path = override.path;
  const wantsHelm =
    override.values !== undefined || override.parameters !== undefined || override.valueFiles !== undefined;
  if (wantsHelm) {
    const helm: JsonObject = isObject(out.helm) ? out.helm : {};
    if (override.valueFiles?.length)
      helm.valueFiles = [...((helm.valueFiles as string[] | undefined) ?? []), ...override.valueFiles];
    if (override.parameters?.length) {
      const params = [...((helm.parameters as JsonObject[] | undefined) ?? [])];
      for (const param of override.parameters) {
        const at = params.findIndex((p) => p.name === param.name);
        if (at >= 0) params[at] = param;
        else params.push(param);
      }
      helm.parameters = params;
    }
    if (override.values !== undefined) helm.valuesObject = mergeValues(helm.valuesObject, override.values);
    out.helm = helm;
  }
  const wantsKustomize =
    override.images !== undefined ||
    override.namePrefix !== undefined ||
    override.nameSuffix !== undefined ||
    override.commonLabels !== undefined ||
    override.namespace !== undefined;
  if (wantsKustomize) {
    const kustomize: JsonObject = isObject(out.kustomize) ? out.kustomize : {};
    if (override.namePrefix !== undefined) kustomize.namePrefix = override.namePrefix;
    if (override.nameSuffix !== undefined) kustomize.nameSuffix = override.nameSuffix;
    if (override.images?.length) {
      const images = [...((kustomize.images as string[] | undefined) ?? [])];
      for (const image of override.images) {
        const at = images.findIndex((i) => imageName(i) === imageName(image));
        if (at >= 0) images[at] = image;
        else images.push(image);
      }
      kustomize.images = images;
    }
    if (override.commonLabels !== undefined)
      kustomize.commonLabels = sortKeys({
        ...((kustomize.commonLabels as Record<string, string> | undefined) ?? {}),
        ...override.commonLabels,
      });
    if (override.namespace !== undefined) kustomize.namespace = override.namespace;
    // Argo CD's order of the kustomize keys stays as the source rendered them; new keys go last.
    out.kustomize = kustomize;
  }
  return out;
}

/** `def` with `overrides[i]` applied to source `i` (sources without an entry unchanged). */
export function applySpokeOverrides(
  def: AppDefinition,
  overrides: ReadonlyMap<number, SourceOverrideJson>,
): AppDefinition {
  if (overrides.size === 0) return def;
  return {
    ...def,
    sources: def.sources.map((source, i) => {
      const override = overrides.get(i);
      return override ? applySourceOverride(source, override) : source;
    }),
  };
}

/**
 * The rollout revision of a waved app whose spokes get different specs: the definition's own revision input
 * plus every spoke spec that differs from it, so a change to any spoke's spec is a new revision (the
 * controller steps only once every hub Application carries it). Equal to `base`'s when no spoke differs.
 */
export function perSpokeRolloutRevision(
  base: AppDefinition,
  perSpoke: ReadonlyMap<string, AppDefinition>,
  baseRevision: string,
): string {
  const baseJson = canonicalJson(base);
  const differing = [...perSpoke.entries()]
    .filter(([, def]) => canonicalJson(def) !== baseJson)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (differing.length === 0) return baseRevision;
  const spokes = Object.fromEntries(differing.map(([name, def]) => [name, def.sources]));
  return createHash('sha256')
    .update(canonicalJson({ base: baseRevision, spokes }))
    .digest('hex')
    .slice(0, 16);
}

// ----- ApplicationSets: spoke labels reaching the template -----

/** The domain of the cluster Secret labels that mirror the ManagedCluster labels ApplicationSet templates read. */
export const SPOKE_LABEL_DOMAIN = 'spoke.pullfleet.io';
/** Label on a cluster Secret naming its cluster, which the matrix's cluster generator selects by. */
export const SECRET_CLUSTER_LABEL = `${PULLFLEET_PREFIX}cluster`;

/**
 * The cluster Secret label that mirrors ManagedCluster label `key`: `region` → `spoke.pullfleet.io/region`,
 * `topology.kubernetes.io/zone` → `topology.kubernetes.io.spoke.pullfleet.io/zone` (the key's prefix goes in
 * front of the domain, so every key has one mirror and back). Undefined when the prefix gets longer than a label
 * prefix may be (253 characters).
 */
export function mirroredLabelKey(key: string): string | undefined {
  const slash = key.indexOf('/');
  if (slash < 0) return `${SPOKE_LABEL_DOMAIN}/${key}`;
  const prefix = `${key.slice(0, slash)}.${SPOKE_LABEL_DOMAIN}`;
  return prefix.length > 253 ? undefined : `${prefix}/${key.slice(slash + 1)}`;
}

/** The ManagedCluster label key a mirrored Secret label stands for (the inverse of {@link mirroredLabelKey}). */
export function unmirroredLabelKey(mirrored: string): string | undefined {
  const slash = mirrored.indexOf('/');
  const prefix = mirrored.slice(0, slash);
  const name = mirrored.slice(slash + 1);
  if (prefix === SPOKE_LABEL_DOMAIN) return name;
  return prefix.endsWith(`.${SPOKE_LABEL_DOMAIN}`)
    ? `${prefix.slice(0, -SPOKE_LABEL_DOMAIN.length - 1)}/${name}`
    : undefined;
}

/** The ApplicationSet parameter (non-Go templates) holding ManagedCluster label `key`, as `{{...}}`. */
export function spokeLabelParam(key: string): string {
  return `{{metadata.labels.${mirroredLabelKey(key) ?? key}}}`;
}

/** The parameter of the decided cluster's name (the clusterDecisionResource generator's `name`). */
export const SPOKE_NAME_PARAM = '{{name}}';

const LABEL_PARAM = /\{\{\s*metadata\.labels\.((?:[^{}\s/]*\.)?spoke\.pullfleet\.io\/[^{}\s]+)\s*\}\}/g;

/** Every string below `json`. */
function strings(json: unknown, out: string[] = []): string[] {
  if (typeof json === 'string') out.push(json);
  else if (Array.isArray(json)) for (const item of json) strings(item, out);
  else if (isObject(json)) for (const value of Object.values(json)) strings(value, out);
  return out;
}

/** The ManagedCluster label keys the spoke-label parameters below `json` read, sorted. */
export function spokeLabelsRead(json: unknown): string[] {
  const keys = new Set<string>();
  for (const s of strings(json))
    for (const match of s.matchAll(LABEL_PARAM)) {
      const key = unmirroredLabelKey(match[1]);
      if (key !== undefined) keys.add(key);
    }
  return [...keys].sort();
}

/**
 * `json` with every spoke parameter replaced as the applicationset-controller replaces it for `spoke` (non-Go
 * templates: the whole tag, spaces trimmed, looked up in the parameters; an unknown tag stays as written). Also
 * evaluates static apps' parameters offline, so the hub and synth see the same values.
 */
export function substituteSpokeParams<T>(json: T, spoke: { name: string; labels: Record<string, string> }): T {
  const params = new Map<string, string>([['name', spoke.name]]);
  for (const [key, value] of Object.entries(spoke.labels)) {
    const mirrored = mirroredLabelKey(key);
    if (mirrored) params.set(`metadata.labels.${mirrored}`, value);
  }
  const replace = (s: string): string =>
    s.includes('{{') ? s.replace(/\{\{([^{}]*)\}\}/g, (whole, tag: string) => params.get(tag.trim()) ?? whole) : s;
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return replace(value);
    if (Array.isArray(value)) return value.map(walk);
    if (isObject(value)) {
      const out: JsonObject = {};
      for (const [key, item] of Object.entries(value)) out[key] = walk(item) as JsonValue;
      return out;
    }
    return value;
  };
  return walk(json) as T;
}

/**
 * The generators of an ApplicationSet whose template reads spoke labels: a matrix of `decisions` (the
 * clusterDecisionResource generator) and the cluster generator restricted to the decided cluster's Secret, so
 * each Application gets the decision's parameters and the Secret's `metadata.labels.*`. The Secret must carry the
 * mirror of every ManagedCluster label key of `keys` (the ones the template reads).
 */
export function spokeLabelMatrix(decisions: JsonObject, keys: readonly string[] = []): JsonObject {
  // A decided cluster whose Secret lacks a mirror the template reads is not selected: without it the
  // applicationset-controller would render the `{{...}}` text into the Application (upstream contract).
  const expressions = keys.flatMap((key) => {
    const mirrored = mirroredLabelKey(key);
    return mirrored ? [{ key: mirrored, operator: 'Exists' }] : [];
  });
  return {
    matrix: {
      generators: [
        decisions,
        {
          clusters: {
            selector: {
              matchLabels: { [SECRET_CLUSTER_LABEL]: SPOKE_NAME_PARAM },
              ...(expressions.length ? { matchExpressions: expressions } : {}),
            },
          },
        },
      ],
    },
  };
}

/**
 * The labels a cluster Secret carries so that templates reading `keys` see the spoke's `labels`: its name
 * (selected by the matrix) and each key the spoke has, mirrored under {@link SPOKE_LABEL_DOMAIN}.
 */
export function clusterSecretSpokeLabels(
  cluster: string,
  labels: Record<string, string>,
  keys: readonly string[],
): Record<string, string> {
  const out: Record<string, string> = { [SECRET_CLUSTER_LABEL]: cluster };
  for (const key of keys) {
    const mirrored = mirroredLabelKey(key);
    if (mirrored && labels[key] !== undefined) out[mirrored] = labels[key];
  }
  return sortKeys(out);
}
