import type { JsonObject } from '../model/core/types.js';
import { dnsLabelProblem } from '../model/core/names.js';
import { qualifiedNameProblem } from '../model/validation/object-rules.js';
import { labelRule } from '../model/validation/rules.js';
import {
  bool,
  checkPropsValue,
  listOf,
  num,
  plainObject,
  propsOf,
  recordOf,
  ref,
  required,
  shape,
  str,
  stringMap,
  type Check,
  type PropSpec,
} from './_props-check.js';

/** One Jsonnet variable (an external variable or a top-level argument). */
export interface JsonnetVariable {
  /** The variable name. */
  readonly name: string;
  /** Its value: a string, or Jsonnet code with `code: true`. */
  readonly value: string;
  /**
   * The value is Jsonnet code (`--ext-code` / `--tla-code`), not a string.
   * @default false
   */
  readonly code?: boolean;
}

/** Jsonnet options of a Git directory source. */
export interface JsonnetOptions {
  /**
   * External variables (`std.extVar`), in the order given.
   * @default []
   */
  readonly extVars?: readonly JsonnetVariable[];
  /**
   * Top-level arguments, in the order given.
   * @default []
   */
  readonly tlas?: readonly JsonnetVariable[];
  /**
   * Library search paths (`--jpath`), relative to the repository root, in the order given.
   * @default []
   */
  readonly libs?: readonly string[];
}

/** How Argo CD reads a Git directory of plain manifests or Jsonnet (`spec.source.directory`). */
export interface GitDirectoryOptions {
  /**
   * Read the subdirectories too.
   * @default false
   */
  readonly recurse?: boolean;
  /**
   * A glob of the files to read (`*.yaml`, or several as `{a.yaml,b.yaml}`).
   * @default - every `.yaml`, `.yml`, `.json` and `.jsonnet` file
   */
  readonly include?: string;
  /**
   * A glob of the files to leave out.
   * @default - none
   */
  readonly exclude?: string;
  /**
   * Jsonnet options.
   * @default - Jsonnet files are evaluated without variables or libraries
   */
  readonly jsonnet?: JsonnetOptions;
}

/** A Git source of an app (`AppSource.git`). */
export interface GitSourceProps {
  /** Git repository URL. */
  readonly repoURL: string;
  /** Path inside the repository (`.` for its root). */
  readonly path: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
  /**
   * How the directory is read: recursion, include and exclude globs, Jsonnet. Not together with
   * `releaseName` or `values` (a chart: use `AppSource.helmGit`).
   * @default - Argo CD detects the kind of the path: plain manifests, Kustomize or a Helm chart
   */
  readonly directory?: GitDirectoryOptions;
  /**
   * Helm release name, when the path holds a Helm chart (`AppSource.helmGit` has every Helm option).
   * @default - the Application name
   */
  readonly releaseName?: string;
  /**
   * Inline Helm values, when the path holds a Helm chart (Argo CD then renders it with Helm); the same
   * rules as `AppSource.helm` values.
   * @default - the chart's defaults (or no Helm at all)
   */
  readonly values?: Record<string, unknown>;
}

/** An image override of a Kustomize source. */
export interface KustomizeReplica {
  /** The name of the Deployment or StatefulSet. */
  readonly name: string;
  /** Its replica count (a whole number, 0 or more). */
  readonly count: number;
}

/** Which resources a Kustomize patch applies to (every field optional; all given must match). */
export interface KustomizePatchTarget {
  /**
   * API group.
   * @default - any
   */
  readonly group?: string;
  /**
   * API version.
   * @default - any
   */
  readonly version?: string;
  /**
   * Kind.
   * @default - any
   */
  readonly kind?: string;
  /**
   * Name (a regular expression in Kustomize).
   * @default - any
   */
  readonly name?: string;
  /**
   * Namespace.
   * @default - any
   */
  readonly namespace?: string;
  /**
   * A label selector such as `app=web`.
   * @default - any
   */
  readonly labelSelector?: string;
  /**
   * An annotation selector.
   * @default - any
   */
  readonly annotationSelector?: string;
}

/** One Kustomize patch: a strategic merge or JSON 6902 patch, inline or from a file. */
export interface KustomizePatch {
  /**
   * A patch file, relative to the kustomization (exactly one of `path` and `patch`).
   * @default - the inline `patch`
   */
  readonly path?: string;
  /**
   * The patch itself, as YAML or JSON text (exactly one of `path` and `patch`).
   * @default - the file at `path`
   */
  readonly patch?: string;
  /**
   * The resources it applies to.
   * @default - the resource the patch names (strategic merge patches only)
   */
  readonly target?: KustomizePatchTarget;
  /**
   * Kustomize patch options: `allowNameChange`, `allowKindChange`.
   * @default {}
   */
  readonly options?: Record<string, boolean>;
}

/** A Kustomize source of an app (`AppSource.kustomize`): a kustomization in a Git repository. */
export interface KustomizeSourceProps {
  /** Git repository URL. */
  readonly repoURL: string;
  /** Path of the kustomization inside the repository. */
  readonly path: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
  /**
   * Image overrides as `kustomize edit set image` takes them: `nginx:1.25`, `nginx@sha256:...`,
   * `nginx=registry.example.com/nginx:1.25`.
   * @default []
   */
  readonly images?: readonly string[];
  /**
   * Prefix of every resource name.
   * @default - none
   */
  readonly namePrefix?: string;
  /**
   * Suffix of every resource name.
   * @default - none
   */
  readonly nameSuffix?: string;
  /**
   * Labels added to every resource (and its selectors).
   * @default {}
   */
  readonly commonLabels?: Record<string, string>;
  /**
   * Annotations added to every resource.
   * @default {}
   */
  readonly commonAnnotations?: Record<string, string>;
  /**
   * Namespace of every namespaced resource.
   * @default - the kustomization's own
   */
  readonly namespace?: string;
  /**
   * Replica counts by Deployment or StatefulSet name.
   * @default []
   */
  readonly replicas?: readonly KustomizeReplica[];
  /**
   * Patches, applied in the order given.
   * @default []
   */
  readonly patches?: readonly KustomizePatch[];
  /**
   * Kustomize components to add (paths relative to the kustomization), in the order given.
   * @default []
   */
  readonly components?: readonly string[];
  /**
   * The Kustomize version to render with (a name registered in `argocd-cm` as `kustomize.version.<name>`).
   * @default - the Kustomize bundled with the spoke's Argo CD
   */
  readonly version?: string;
  /**
   * `commonLabels` overwrite labels the resources already have (`kustomize edit add label --force`).
   * Needs `commonLabels`.
   * @default false
   */
  readonly forceCommonLabels?: boolean;
  /**
   * `commonLabels` go on the resources only, not into selectors (`--without-selector`), so that they can change
   * without recreating Deployments. Needs `commonLabels`.
   * @default false
   */
  readonly labelWithoutSelector?: boolean;
  /**
   * With `labelWithoutSelector`, the labels also go on pod templates (`--include-templates`). Argo CD 3.0 and later.
   * @default false
   */
  readonly labelIncludeTemplates?: boolean;
  /**
   * `commonAnnotations` overwrite annotations the resources already have (`--force`). Needs `commonAnnotations`.
   * @default false
   */
  readonly forceCommonAnnotations?: boolean;
  /**
   * Argo CD's build environment variables (`$ARGOCD_APP_NAME`, ...) are substituted in `commonAnnotations` values.
   * Needs `commonAnnotations`.
   * @default false
   */
  readonly commonAnnotationsEnvsubst?: boolean;
  /**
   * Components that do not exist are left out instead of failing the build. Needs `components`. Argo CD 3.0 and
   * later.
   * @default false
   */
  readonly ignoreMissingComponents?: boolean;
  /**
   * The Kubernetes version Helm charts inflated by the kustomization render for (`--helm-kube-version`; Kustomize
   * 5.3 or later with `--enable-helm` in the spoke's Kustomize build options), such as `1.30`.
   * @default - the version of the spoke cluster
   */
  readonly kubeVersion?: string;
  /**
   * The API versions Helm charts inflated by the kustomization see (`--helm-api-versions`; as `kubeVersion`),
   * such as `monitoring.coreos.com/v1/ServiceMonitor`.
   * @default - those of the spoke cluster
   */
  readonly apiVersions?: readonly string[];
}

/** One Helm parameter (`--set name=value`). */
export interface HelmParameter {
  /** The value path, as `--set` writes it: `image.tag`, `ingress.hosts[0]`. */
  readonly name: string;
  /** The value. */
  readonly value: string;
  /**
   * Pass the value as a string (`--set-string`), never as a number or boolean.
   * @default false
   */
  readonly forceString?: boolean;
}

/** One Helm file parameter (`--set-file name=path`). */
export interface HelmFileParameter {
  /** The value path. */
  readonly name: string;
  /** The file, relative to the chart path. */
  readonly path: string;
}

/** The Helm options every Helm source takes (`spec.source.helm`). */
export interface HelmOptions {
  /**
   * Value files, in the order Helm reads them (later files win): paths relative to the chart, URLs, or
   * `$<ref>/<path>` into a `AppSource.ref` source of the same app (only in `sources`).
   * @default - the chart's `values.yaml` only
   */
  readonly valueFiles?: readonly string[];
  /**
   * Leave out value files that do not exist instead of failing.
   * @default false
   */
  readonly ignoreMissingValueFiles?: boolean;
  /**
   * Parameters (`--set`), in the order given; they win over values and value files.
   * @default []
   */
  readonly parameters?: readonly HelmParameter[];
  /**
   * File parameters (`--set-file`), in the order given.
   * @default []
   */
  readonly fileParameters?: readonly HelmFileParameter[];
  /**
   * Inline values (counted against the ManifestWork size budget). Plain objects, arrays, strings,
   * finite numbers, booleans and `null` (Helm's way to remove a chart default, kept as written);
   * anything else (BigInt, NaN, Infinity, functions, symbols, `undefined` in an array, class
   * instances, cycles) fails validation naming the app and the key.
   * @default - the chart's defaults
   */
  readonly values?: Record<string, unknown>;
  /**
   * Do not install the chart's CRDs (`--skip-crds`).
   * @default false
   */
  readonly skipCrds?: boolean;
  /**
   * Do not validate values against the chart's `values.schema.json` (`--skip-schema-validation`).
   * @default false
   */
  readonly skipSchemaValidation?: boolean;
  /**
   * Helm release name (at most 53 characters, a DNS subdomain).
   * @default - the Application name
   */
  readonly releaseName?: string;
  /**
   * The namespace Helm renders the chart for (`.Release.Namespace`).
   * @default - the app's destination namespace
   */
  readonly namespace?: string;
  /**
   * The Helm major version: `'v3'`, or `'v4'` (accepted from Argo CD 3.5, which renders every chart with Helm 4
   * whatever this says; checked against the spokes' declared Argo CD versions).
   * @default - left out: the Helm of the spoke's Argo CD
   */
  readonly version?: string;
  /**
   * Pass the repository credentials to every domain the chart is fetched from (`--pass-credentials`).
   * @default false
   */
  readonly passCredentials?: boolean;
  /**
   * Leave out the chart's test hooks (`--skip-tests`).
   * @default false
   */
  readonly skipTests?: boolean;
  /**
   * The Kubernetes version the chart renders for (`.Capabilities.KubeVersion`), such as `1.30` or `v1.30.2`.
   * @default - the version of the spoke cluster
   */
  readonly kubeVersion?: string;
  /**
   * The API versions the chart sees (`.Capabilities.APIVersions`), as `group/version` or `group/version/Kind`.
   * @default - those of the spoke cluster
   */
  readonly apiVersions?: readonly string[];
}

/**
 * A chart from a Helm repository or an OCI registry (`AppSource.helm`). The `repoURL` forms:
 * - `https://charts.example.com`: a Helm repository, every Argo CD release;
 * - `registry.example.com/charts` (no scheme): an OCI registry Argo CD has as a Helm repository with
 *   `enableOCI: true`, every Argo CD release;
 * - `oci://registry.example.com/charts`: an OCI registry read as an OCI source, Argo CD 3.1 and later; pullfleet
 *   renders `repoURL: oci://registry.example.com/charts/<chart>` with `path: .`, as Argo CD reads it.
 */
export interface HelmSourceProps extends HelmOptions {
  /** Helm repository URL, or OCI registry (see the forms above). */
  readonly repoURL: string;
  /** Chart name. */
  readonly chart: string;
  /** Chart version (a version or a range such as `1.2.*`). */
  readonly targetRevision: string;
}

/** A Helm chart in a Git repository (`AppSource.helmGit`). */
export interface HelmGitSourceProps extends HelmOptions {
  /** Git repository URL. */
  readonly repoURL: string;
  /** Path of the chart inside the repository. */
  readonly path: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
}

/** A repository other sources of the app read value files from (`AppSource.ref`). */
export interface RefSourceProps {
  /** Git repository URL. */
  readonly repoURL: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
}

/** A Config Management Plugin source (`AppSource.plugin`). */
export interface PluginSourceProps {
  /** Git repository URL. */
  readonly repoURL: string;
  /** Path inside the repository. */
  readonly path: string;
  /**
   * Branch, tag or commit.
   * @default 'HEAD'
   */
  readonly targetRevision?: string;
  /**
   * The plugin's name (as its ConfigManagementPlugin names it, with `-<version>` when it has one).
   * @default - the plugin whose discovery rule matches the path
   */
  readonly name?: string;
  /**
   * Environment variables the plugin gets (Argo CD prefixes each with `ARGOCD_ENV_`); rendered sorted by name.
   * @default {}
   */
  readonly env?: Record<string, string>;
  /**
   * Parameters the plugin announces (its `parameters` discovery), in the order given; each has exactly one of
   * `string`, `array` or `map`. Argo CD passes them to the plugin as `ARGOCD_APP_PARAMETERS` (JSON) and as
   * `PARAM_<NAME>` variables.
   * @default []
   */
  readonly parameters?: readonly PluginParameter[];
}

/** One parameter of a Config Management Plugin source: a name and exactly one value. */
export interface PluginParameter {
  /** The parameter's name. */
  readonly name: string;
  /**
   * A string value.
   * @default - none (give `array` or `map`)
   */
  readonly string?: string;
  /**
   * A list value.
   * @default - none (give `string` or `map`)
   */
  readonly array?: readonly string[];
  /**
   * A map value.
   * @default - none (give `string` or `array`)
   */
  readonly map?: Record<string, string>;
}

/** `a.b[0]` style path of a key below `values`. */
function keyPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  return /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`;
}

function describeValue(value: unknown): string {
  if (typeof value === 'bigint') return `the BigInt ${value}n`;
  if (typeof value === 'number') return String(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return `the symbol ${String(value)}`;
  if (value === undefined) return 'undefined';
  const name = (value as object).constructor?.name;
  return name ? `a ${name}` : 'an object without prototype';
}

/**
 * Every value below `values` that YAML and Helm cannot represent as written, as
 * `<key path> is <what>: <fix>`. An `undefined` property is left out (as in JSON); elsewhere it is a problem.
 * @internal also checks per-spoke values (per-spoke.ts)
 */
export function helmValueProblems(values: unknown): string[] {
  const problems: string[] = [];
  const seen = new Set<object>();
  const walk = (value: unknown, at: string, inArray: boolean): void => {
    if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
    if (typeof value === 'number') {
      if (!Number.isFinite(value))
        problems.push(
          `Helm value ${at} is ${describeValue(value)}, which YAML and Helm cannot hold: give a finite number, a string, or null to remove the chart default`,
        );
      return;
    }
    if (value === undefined) {
      if (inArray)
        problems.push(`Helm value ${at} is undefined (an array hole or undefined item): remove the item or use null`);
      return;
    }
    if (typeof value !== 'object') {
      const fix =
        typeof value === 'bigint'
          ? 'write it as a number (within 2^53) or a string'
          : 'give plain data (objects, arrays, strings, numbers, booleans, null)';
      problems.push(`Helm value ${at} is ${describeValue(value)}, which YAML and Helm cannot hold: ${fix}`);
      return;
    }
    if (seen.has(value)) {
      problems.push(`Helm value ${at} refers back to an enclosing object (a cycle): give plain data`);
      return;
    }
    if (Array.isArray(value)) {
      seen.add(value);
      for (let i = 0; i < value.length; i++) walk(value[i], keyPath(at, i), true);
      seen.delete(value);
      return;
    }
    const proto = Object.getPrototypeOf(value) as object | null;
    if (proto !== Object.prototype && proto !== null) {
      const fix = value instanceof Date ? 'write it as a string (date.toISOString())' : 'give a plain object';
      problems.push(`Helm value ${at} is ${describeValue(value)}, which YAML and Helm cannot hold: ${fix}`);
      return;
    }
    seen.add(value);
    for (const [key, item] of Object.entries(value)) walk(item, keyPath(at, key), false);
    seen.delete(value);
  };
  walk(values, 'values', false);
  return problems;
}

/** A copy of plain JSON data that keeps `null` (and leaves `undefined` properties out). @internal */
export function copyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : copyValues(item)));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = copyValues(item);
  return out;
}

/** A map with its keys sorted (maps render byte-stable whatever order they were written in). */
function sorted(record: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// ---- runtime types of the props (see _props-check.ts) ----

const JSONNET_VAR = shape<JsonnetVariable>('Jsonnet variable', {
  name: required(str()),
  value: required(str()),
  code: bool(),
});
const DIRECTORY: Check<GitDirectoryOptions> = shape<GitDirectoryOptions>('directory', {
  recurse: bool(),
  include: str(),
  exclude: str(),
  jsonnet: shape<JsonnetOptions>('jsonnet', {
    extVars: listOf(JSONNET_VAR, "[{ name: 'env', value: 'prod' }]"),
    tlas: listOf(JSONNET_VAR, "[{ name: 'replicas', value: '3', code: true }]"),
    libs: listOf(str(), "['vendor']"),
  }),
});

const HELM_OPTION_CHECKS: PropSpec<HelmOptions> = {
  valueFiles: listOf(str(), "['values-prod.yaml']"),
  ignoreMissingValueFiles: bool(),
  parameters: listOf(
    shape<HelmParameter>('Helm parameter', { name: required(str()), value: required(str()), forceString: bool() }),
    "[{ name: 'image.tag', value: '1.2.3' }]",
  ),
  fileParameters: listOf(
    shape<HelmFileParameter>('Helm file parameter', { name: required(str()), path: required(str()) }),
    "[{ name: 'config', path: 'files/config.json' }]",
  ),
  values: plainObject(),
  skipCrds: bool(),
  skipSchemaValidation: bool(),
  releaseName: str(),
  namespace: str(),
  version: str(),
  passCredentials: bool(),
  skipTests: bool(),
  kubeVersion: str(),
  apiVersions: listOf(str(), "['monitoring.coreos.com/v1/ServiceMonitor']"),
};

/** The runtime type of every {@link GitSourceProps} key. */
const GIT_SOURCE_PROPS = propsOf<GitSourceProps>('AppSource.git', {
  repoURL: str(),
  path: str(),
  targetRevision: str(),
  directory: DIRECTORY,
  releaseName: str(),
  values: plainObject(),
});

/** The runtime type of every {@link KustomizeSourceProps} key. */
const KUSTOMIZE_SOURCE_PROPS = propsOf<KustomizeSourceProps>('AppSource.kustomize', {
  repoURL: str(),
  path: str(),
  targetRevision: str(),
  images: listOf(str(), "['nginx:1.25']"),
  namePrefix: str(),
  nameSuffix: str(),
  commonLabels: stringMap('label', "{ team: 'web' }"),
  commonAnnotations: stringMap('annotation', "{ 'example.com/owner': 'web' }"),
  namespace: str(),
  replicas: listOf(
    shape<KustomizeReplica>('replica count', { name: required(str()), count: required(num('a whole number')) }),
    "[{ name: 'web', count: 3 }]",
  ),
  patches: listOf(
    shape<KustomizePatch>('Kustomize patch', {
      path: str(),
      patch: str(),
      target: shape<KustomizePatchTarget>('patch target', {
        group: str(),
        version: str(),
        kind: str(),
        name: str(),
        namespace: str(),
        labelSelector: str(),
        annotationSelector: str(),
      }),
      options: recordOf(bool(), '{ allowNameChange: true }'),
    }),
    "[{ path: 'patches/replicas.yaml' }]",
  ),
  components: listOf(str(), "['../components/monitoring']"),
  version: str(),
  forceCommonLabels: bool(),
  labelWithoutSelector: bool(),
  labelIncludeTemplates: bool(),
  forceCommonAnnotations: bool(),
  commonAnnotationsEnvsubst: bool(),
  ignoreMissingComponents: bool(),
  kubeVersion: str(),
  apiVersions: listOf(str(), "['monitoring.coreos.com/v1/ServiceMonitor']"),
});

/** The runtime type of every {@link HelmSourceProps} key. */
const HELM_SOURCE_PROPS = propsOf<HelmSourceProps>('AppSource.helm', {
  repoURL: str(),
  chart: str(),
  targetRevision: str(),
  ...HELM_OPTION_CHECKS,
});

/** The runtime type of every {@link HelmGitSourceProps} key. */
const HELM_GIT_SOURCE_PROPS = propsOf<HelmGitSourceProps>('AppSource.helmGit', {
  repoURL: str(),
  path: str(),
  targetRevision: str(),
  ...HELM_OPTION_CHECKS,
});

/** The runtime type of every {@link RefSourceProps} key. */
const REF_SOURCE_PROPS = propsOf<RefSourceProps>('AppSource.ref', { repoURL: str(), targetRevision: str() });

/** The runtime type of every {@link PluginSourceProps} key. */
const PLUGIN_SOURCE_PROPS = propsOf<PluginSourceProps>('AppSource.plugin', {
  repoURL: str(),
  path: str(),
  targetRevision: str(),
  name: str(),
  env: stringMap('environment variable', "{ ENVIRONMENT: 'prod' }"),
  parameters: listOf(
    shape<PluginParameter>('plugin parameter', {
      name: required(str()),
      string: str(),
      array: listOf(str(), "['a', 'b']"),
      map: stringMap('map entry', "{ key: 'value' }"),
    }),
    "[{ name: 'replicas', string: '3' }]",
  ),
});

// ---- value rules (Argo CD's own, cited on docs/reference/upstream-contract.md) ----

/** A Kubernetes version as Helm's `--kube-version` reads it (a semantic version, `v` optional, patch optional). */
const KUBE_VERSION = /^v?\d+\.\d+(\.\d+)?([-+][0-9A-Za-z.+-]+)?$/;
/** `group/version`, `group/version/Kind` or `v1` (the core group), as Helm's `--api-versions` takes them. */
const API_VERSION = /^(?:[a-z0-9.-]+\/)?v[0-9][a-z0-9]*(?:\/[A-Za-z][A-Za-z0-9]*)?$/;

/** A `ref` name: Argo CD's `GetRefSources` allows letters, digits, `_` and `-` (util/argo/argo.go). */
const REF_NAME = /^[a-zA-Z0-9_-]+$/;
/** A Helm release name: a DNS subdomain of at most 53 characters (Helm's own rule). */
const RELEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
/** An environment variable name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** A container image name (the distribution reference grammar: registry host with port, path components). */
const IMAGE_NAME =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]+)?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*$/;
const IMAGE_TAG = /^[\w][\w.-]{0,127}$/;
const IMAGE_DIGEST = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/;
/** Kustomize patch options (kustomize `api/types/patch.go`). */
const PATCH_OPTIONS = ['allowNameChange', 'allowKindChange'];

/** `name[:tag][@digest]` split, or a reason it is not one. */
function imageRefProblem(ref: string): string | undefined {
  const at = ref.indexOf('@');
  const digest = at >= 0 ? ref.slice(at + 1) : undefined;
  const nameTag = at >= 0 ? ref.slice(0, at) : ref;
  const slash = nameTag.lastIndexOf('/');
  const colon = nameTag.lastIndexOf(':');
  const tag = colon > slash ? nameTag.slice(colon + 1) : undefined;
  const name = colon > slash ? nameTag.slice(0, colon) : nameTag;
  if (!IMAGE_NAME.test(name)) return `"${name}" is not an image name`;
  if (tag !== undefined && !IMAGE_TAG.test(tag)) return `"${tag}" is not an image tag`;
  if (digest !== undefined && !IMAGE_DIGEST.test(digest)) return `"${digest}" is not a digest (sha256:<hex>)`;
  return undefined;
}

/** Why `image` is not an image override `kustomize edit set image` takes, or undefined. @internal */
export function kustomizeImageProblem(image: string): string | undefined {
  const fix = 'write it as "nginx:1.25", "nginx@sha256:<digest>" or "nginx=registry.example.com/nginx:1.25"';
  if (image.length === 0 || /\s/.test(image)) return `image "${image}" is empty or holds white space: ${fix}`;
  const parts = image.split('=');
  if (parts.length > 2) return `image "${image}" has more than one "=": ${fix}`;
  if (parts.length === 2) {
    if (!IMAGE_NAME.test(parts[0])) return `image "${image}": "${parts[0]}" is not an image name: ${fix}`;
    const p = imageRefProblem(parts[1]);
    return p ? `image "${image}": ${p}: ${fix}` : undefined;
  }
  const p = imageRefProblem(image);
  if (p) return `image "${image}": ${p}: ${fix}`;
  if (!image.includes('@') && image.lastIndexOf(':') <= image.lastIndexOf('/'))
    return `image "${image}" names neither a tag, a digest nor a new image, so it changes nothing: ${fix}`;
  return undefined;
}

/** The problems of one factory, each prefixed with its name. */
class Problems {
  public readonly list: string[] = [];
  public constructor(private readonly factory: string) {}
  public add(message: string): void {
    this.list.push(`${this.factory}: ${message}`);
  }
  public nonEmpty(what: string, value: string | undefined, fix: string): void {
    if (value !== undefined && value.trim().length === 0) this.add(`${what} is empty: ${fix}`);
  }
}

function checkRepoURL(p: Problems, props: { repoURL?: string }, invalid: Set<string>, what: string): void {
  if (!props.repoURL && !invalid.has('repoURL')) p.add(`repoURL is empty: give the ${what} URL`);
}

function checkPath(p: Problems, props: { path?: string }, invalid: Set<string>): void {
  if (props.path === undefined && !invalid.has('path'))
    p.add("path is missing: give the path inside the repository ('.' for its root)");
  else p.nonEmpty('path', props.path, "give the path inside the repository ('.' for its root)");
}

function jsonnetVars(p: Problems, what: string, vars: readonly JsonnetVariable[] | undefined): JsonObject[] {
  const seen = new Set<string>();
  return (vars ?? []).map((v, i) => {
    if (v.name.trim().length === 0) p.add(`directory.jsonnet.${what}[${i}].name is empty: name the variable`);
    else if (seen.has(v.name)) p.add(`directory.jsonnet.${what} names "${v.name}" twice: give each variable once`);
    seen.add(v.name);
    return { name: v.name, value: v.value, ...(v.code ? { code: true } : {}) };
  });
}

function directoryJson(p: Problems, d: GitDirectoryOptions): JsonObject {
  const out: JsonObject = {};
  if (d.recurse !== undefined) out.recurse = d.recurse;
  p.nonEmpty('directory.include', d.include, "give a glob such as '*.yaml', or leave it out");
  p.nonEmpty('directory.exclude', d.exclude, "give a glob such as 'test-*.yaml', or leave it out");
  if (d.include !== undefined) out.include = d.include;
  if (d.exclude !== undefined) out.exclude = d.exclude;
  if (d.jsonnet) {
    const jsonnet: JsonObject = {};
    const extVars = jsonnetVars(p, 'extVars', d.jsonnet.extVars);
    const tlas = jsonnetVars(p, 'tlas', d.jsonnet.tlas);
    (d.jsonnet.libs ?? []).forEach((lib, i) =>
      p.nonEmpty(`directory.jsonnet.libs[${i}]`, lib, "give a path such as 'vendor'"),
    );
    if (extVars.length) jsonnet.extVars = extVars;
    if (tlas.length) jsonnet.tlas = tlas;
    if (d.jsonnet.libs?.length) jsonnet.libs = [...d.jsonnet.libs];
    if (Object.keys(jsonnet).length) out.jsonnet = jsonnet;
  }
  return out;
}

/** True when `path` (relative to `base`, or to the repository root when it starts with "/") leaves the repository. */
function leavesRepository(base: string, path: string): boolean {
  const parts: string[] = [];
  const start = path.startsWith('/') ? [] : base.split('/');
  for (const part of [...start, ...path.split('/')]) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (parts.length === 0) return true;
      parts.pop();
    } else parts.push(part);
  }
  return false;
}

/** The scheme of a value file given as a URL (`https`), or undefined for a path. */
function urlScheme(file: string): string | undefined {
  return /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(file)?.[1]?.toLowerCase();
}

/** `$name` of a value file that reads from a ref source, or undefined. */
function valueFileRef(file: string): string | undefined {
  return file.startsWith('$') ? file.split('/')[0].slice(1) : undefined;
}

/**
 * The Helm block of a source, and its problems. `base` is the chart's path in its repository (`.` for a chart
 * from a Helm repository), against which relative value files are resolved; `warnings` gets what is legal
 * but refused by Argo CD's default settings.
 */
function helmJson(p: Problems, h: HelmOptions, refs: Set<string>, base = '.', warnings: string[] = []): JsonObject {
  const out: JsonObject = {};
  if (h.releaseName !== undefined) {
    if (h.releaseName.length > 53 || !RELEASE_NAME.test(h.releaseName))
      p.add(
        `releaseName "${h.releaseName}" is not a Helm release name: use at most 53 lower-case letters, digits, "-" and "." (a DNS subdomain), for example "web"`,
      );
    if (h.releaseName) out.releaseName = h.releaseName;
  }
  if (h.namespace !== undefined) {
    const problem = dnsLabelProblem(h.namespace);
    if (problem) p.add(`namespace "${h.namespace}" ${problem}: give a namespace name such as "web"`);
    else out.namespace = h.namespace;
  }
  if (h.valueFiles) {
    h.valueFiles.forEach((file, i) => {
      if (file.trim().length === 0) {
        p.add(`valueFiles[${i}] is empty: give a path relative to the chart, a URL, or $<ref>/<path>`);
        return;
      }
      const scheme = urlScheme(file);
      if (scheme !== undefined) {
        if (scheme !== 'https' && scheme !== 'http')
          warnings.push(
            `valueFiles[${i}] "${file}" is a ${scheme}:// URL, which Argo CD refuses unless the spoke's argocd-cm lists "${scheme}" in helm.valuesFileSchemes (the default is https and http): serve it over https, or keep the file in the repository`,
          );
        return;
      }
      const name = valueFileRef(file);
      if (name === undefined) {
        if (leavesRepository(base, file))
          p.add(
            `valueFiles[${i}] "${file}" leads outside the ${base === '.' ? 'chart' : 'repository'}, which Argo CD refuses: keep value files inside it, or read them from another repository with a ref source ($<ref>/<path>)`,
          );
        return;
      }
      if (name && file.includes('/') && leavesRepository('.', file.slice(file.indexOf('/') + 1)))
        p.add(`valueFiles[${i}] "${file}" leads outside the repository of ref source "${name}", which Argo CD refuses`);
      if (!REF_NAME.test(name) || !file.includes('/'))
        p.add(
          `valueFiles[${i}] "${file}" reads from a ref source, so it must be written $<ref>/<path> with a ref name of letters, digits, "_" and "-": for example "$values/web/values-prod.yaml"`,
        );
      else refs.add(name);
    });
    if (h.valueFiles.length) out.valueFiles = [...h.valueFiles];
  }
  if (h.ignoreMissingValueFiles !== undefined) out.ignoreMissingValueFiles = h.ignoreMissingValueFiles;
  if (h.parameters) {
    const seen = new Set<string>();
    out.parameters = h.parameters.map((param, i) => {
      if (param.name.trim().length === 0 || /[\s=]/.test(param.name))
        p.add(
          `parameters[${i}].name "${param.name}" is not a Helm value path: write it as --set does, without spaces or "=", for example "image.tag"`,
        );
      else if (seen.has(param.name))
        p.add(`parameters names "${param.name}" twice (the last one wins): give each parameter once`);
      seen.add(param.name);
      return { name: param.name, value: param.value, ...(param.forceString ? { forceString: true } : {}) };
    });
    if (!h.parameters.length) delete out.parameters;
  }
  if (h.fileParameters) {
    out.fileParameters = h.fileParameters.map((param, i) => {
      if (param.name.trim().length === 0 || /[\s=]/.test(param.name))
        p.add(
          `fileParameters[${i}].name "${param.name}" is not a Helm value path: write it as --set-file does, for example "config"`,
        );
      p.nonEmpty(`fileParameters[${i}].path`, param.path, 'give the file, relative to the chart');
      return { name: param.name, path: param.path };
    });
    if (!h.fileParameters.length) delete out.fileParameters;
  }
  if (h.values !== undefined) {
    const problems = helmValueProblems(h.values);
    // Value problems keep their message of earlier releases (no factory prefix): `app "web": Helm value ...`.
    p.list.push(...problems);
    if (problems.length === 0 && p.list.length === 0) out.valuesObject = copyValues(h.values) as JsonObject;
  }
  if (h.skipCrds !== undefined) out.skipCrds = h.skipCrds;
  if (h.skipSchemaValidation !== undefined) out.skipSchemaValidation = h.skipSchemaValidation;
  if (h.version !== undefined) {
    if (h.version !== 'v3' && h.version !== 'v4')
      p.add(
        `version "${h.version}" is not a Helm version Argo CD renders with: use 'v3' ('v4' from Argo CD 3.5), or leave it out`,
      );
    else out.version = h.version;
  }
  if (h.passCredentials !== undefined) out.passCredentials = h.passCredentials;
  if (h.skipTests !== undefined) out.skipTests = h.skipTests;
  renderCapabilities(p, h, out);
  return out;
}

/** `kubeVersion` and `apiVersions` (Helm sources, and Helm charts a kustomization inflates) into `out`. */
function renderCapabilities(
  p: Problems,
  o: { readonly kubeVersion?: string; readonly apiVersions?: readonly string[] },
  out: JsonObject,
): void {
  if (o.kubeVersion !== undefined) {
    if (!KUBE_VERSION.test(o.kubeVersion))
      p.add(`kubeVersion "${o.kubeVersion}" is not a Kubernetes version: give one such as "1.30" or "v1.30.2"`);
    else out.kubeVersion = o.kubeVersion;
  }
  if (o.apiVersions?.length) {
    o.apiVersions.forEach((v, i) => {
      if (!API_VERSION.test(v))
        p.add(
          `apiVersions[${i}] "${v}" is not an API version: give "group/version" or "group/version/Kind", such as "monitoring.coreos.com/v1/ServiceMonitor" ("v1" for the core group)`,
        );
    });
    out.apiVersions = [...o.apiVersions];
  }
}

function kustomizeJson(p: Problems, k: KustomizeSourceProps): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of [
    ['namePrefix', k.namePrefix],
    ['nameSuffix', k.nameSuffix],
  ] as const) {
    if (value === undefined) continue;
    if (!/^[a-z0-9.-]*$/.test(value) || value.length > 200)
      p.add(
        `${key} "${value}" would make resource names that are not DNS names: use lower-case letters, digits, "-" and "."`,
      );
    if (value) out[key] = value;
  }
  if (k.images?.length) {
    k.images.forEach((image) => {
      const problem = kustomizeImageProblem(image);
      if (problem) p.add(problem);
    });
    out.images = [...k.images];
  }
  if (k.commonLabels && Object.keys(k.commonLabels).length) {
    for (const [key, value] of Object.entries(k.commonLabels)) {
      const problem = labelRule('commonLabels', key, value) ?? keyProblem('commonLabels', key);
      if (problem) p.add(problem);
    }
    out.commonLabels = sorted(k.commonLabels);
  }
  if (k.commonAnnotations && Object.keys(k.commonAnnotations).length) {
    for (const key of Object.keys(k.commonAnnotations)) {
      const problem = keyProblem('commonAnnotations', key);
      if (problem) p.add(problem);
    }
    out.commonAnnotations = sorted(k.commonAnnotations);
  }
  if (k.namespace !== undefined) {
    const problem = dnsLabelProblem(k.namespace);
    if (problem) p.add(`namespace "${k.namespace}" ${problem}: give a namespace name such as "web"`);
    else out.namespace = k.namespace;
  }
  if (k.replicas?.length) {
    const seen = new Set<string>();
    out.replicas = k.replicas.map((r, i) => {
      if (r.name.trim().length === 0) p.add(`replicas[${i}].name is empty: name the Deployment or StatefulSet`);
      else if (seen.has(r.name)) p.add(`replicas names "${r.name}" twice: give each workload once`);
      seen.add(r.name);
      if (!Number.isInteger(r.count) || r.count < 0)
        p.add(`replicas[${i}].count ${String(r.count)} is not a whole number of 0 or more: give a count such as 3`);
      return { name: r.name, count: r.count };
    });
  }
  if (k.patches?.length) {
    out.patches = k.patches.map((patch, i) => {
      const hasPath = patch.path !== undefined && patch.path.trim() !== '';
      const hasPatch = patch.patch !== undefined && patch.patch.trim() !== '';
      if (hasPath === hasPatch)
        p.add(
          `patches[${i}] ${hasPath ? 'has both path and patch' : 'has neither path nor patch'}: give exactly one (a file of the repository, or the patch text)`,
        );
      const json: JsonObject = {};
      if (patch.path !== undefined) json.path = patch.path;
      if (patch.patch !== undefined) json.patch = patch.patch;
      if (patch.target) {
        const target: JsonObject = {};
        for (const key of [
          'group',
          'version',
          'kind',
          'name',
          'namespace',
          'labelSelector',
          'annotationSelector',
        ] as const)
          if (patch.target[key] !== undefined) target[key] = patch.target[key];
        if (Object.keys(target).length) json.target = target;
      }
      if (patch.options && Object.keys(patch.options).length) {
        for (const key of Object.keys(patch.options))
          if (!PATCH_OPTIONS.includes(key))
            p.add(`patches[${i}].options.${key} is not a Kustomize patch option: use ${PATCH_OPTIONS.join(' or ')}`);
        json.options = Object.fromEntries(Object.entries(patch.options).sort(([a], [b]) => (a < b ? -1 : 1)));
      }
      return json;
    });
  }
  if (k.components?.length) {
    k.components.forEach((c, i) => p.nonEmpty(`components[${i}]`, c, "give a path such as '../components/monitoring'"));
    out.components = [...k.components];
  }
  if (k.version !== undefined) {
    if (k.version.trim().length === 0 || /\s/.test(k.version))
      p.add(
        `version "${k.version}" is not a Kustomize version name: give the name argocd-cm registers, such as "v5.4.3"`,
      );
    else out.version = k.version;
  }
  const needs = (flag: keyof KustomizeSourceProps, on: boolean | undefined, field: string, present: boolean) => {
    if (on === undefined) return;
    if (on && !present)
      p.add(`${flag} changes how ${field} is applied, and there is no ${field}: give ${field}, or leave ${flag} out`);
    out[flag] = on;
  };
  const labels = Object.keys(k.commonLabels ?? {}).length > 0;
  const annotations = Object.keys(k.commonAnnotations ?? {}).length > 0;
  needs('forceCommonLabels', k.forceCommonLabels, 'commonLabels', labels);
  needs('labelWithoutSelector', k.labelWithoutSelector, 'commonLabels', labels);
  if (k.labelIncludeTemplates !== undefined) {
    if (k.labelIncludeTemplates && k.labelWithoutSelector !== true)
      p.add(
        'labelIncludeTemplates puts the labels on pod templates only together with labelWithoutSelector: true (with selectors they are there already): set labelWithoutSelector, or leave labelIncludeTemplates out',
      );
    out.labelIncludeTemplates = k.labelIncludeTemplates;
  }
  needs('forceCommonAnnotations', k.forceCommonAnnotations, 'commonAnnotations', annotations);
  needs('commonAnnotationsEnvsubst', k.commonAnnotationsEnvsubst, 'commonAnnotations', annotations);
  needs('ignoreMissingComponents', k.ignoreMissingComponents, 'components', (k.components?.length ?? 0) > 0);
  renderCapabilities(p, k, out);
  return out;
}

function keyProblem(what: string, key: string): string | undefined {
  const problem = qualifiedNameProblem(key);
  return problem ? `${what} key "${key}" ${problem}: use a key such as "example.com/team" or "team"` : undefined;
}

/** What kind of source an AppSource is. */
type SourceKind = 'git' | 'kustomize' | 'helm' | 'helmGit' | 'ref' | 'plugin';

/** @internal an AppSource (made by one of the `AppSource` factories), recognised by its methods. */
export const APP_SOURCE_CHECK: Check<AppSource> = ref<AppSource>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { toJson?: unknown }).toJson === 'function' &&
    typeof (v as { _problems?: unknown })._problems === 'function',
  'an AppSource',
  'make it with AppSource.git({ repoURL, path }) or AppSource.helm({ repoURL, chart, targetRevision })',
);

/**
 * Where an app's manifests come from: a Git path (plain manifests, Jsonnet), a kustomization, a Helm chart
 * (from a chart repository, an OCI registry or Git), a Config Management Plugin, or a `ref` source other
 * sources of the same app read value files from.
 */
export class AppSource {
  /** Plain manifests or Jsonnet in a Git repository path (or whatever Argo CD detects there). */
  public static git(props: GitSourceProps): AppSource {
    const checked = checkPropsValue(GIT_SOURCE_PROPS, props);
    props = checked.props as GitSourceProps;
    // Problems are reported by the app using this source, with every other problem of the fleet.
    const p = new Problems('AppSource.git');
    p.list.push(...checked.errors.map((e) => `AppSource.git: ${e}`));
    checkRepoURL(p, props, checked.invalid, 'Git repository');
    checkPath(p, props, checked.invalid);
    const directory = props.directory ? directoryJson(p, props.directory) : undefined;
    if (props.directory && (props.releaseName !== undefined || props.values !== undefined))
      p.add(
        'directory cannot go with releaseName or values (Argo CD refuses a source of two kinds): for a Helm chart in Git use AppSource.helmGit({ repoURL, path, values })',
      );
    const refs = new Set<string>();
    const helm = helmJson(p, { releaseName: props.releaseName, values: props.values }, refs);
    return new AppSource(
      'git',
      {
        repoURL: props.repoURL ?? '',
        path: props.path,
        targetRevision: props.targetRevision ?? 'HEAD',
        ...(directory ? { directory } : {}),
        ...(Object.keys(helm).length ? { helm } : {}),
      },
      p.list,
      checked.warnings.map((w) => `AppSource.git: ${w}`),
    );
  }

  /** A kustomization in a Git repository, with Argo CD's Kustomize overrides. */
  public static kustomize(props: KustomizeSourceProps): AppSource {
    const checked = checkPropsValue(KUSTOMIZE_SOURCE_PROPS, props);
    props = checked.props as KustomizeSourceProps;
    const p = new Problems('AppSource.kustomize');
    p.list.push(...checked.errors.map((e) => `AppSource.kustomize: ${e}`));
    checkRepoURL(p, props, checked.invalid, 'Git repository');
    checkPath(p, props, checked.invalid);
    const kustomize = kustomizeJson(p, props);
    return new AppSource(
      'kustomize',
      {
        repoURL: props.repoURL ?? '',
        path: props.path ?? '',
        targetRevision: props.targetRevision ?? 'HEAD',
        // An empty kustomize block still tells Argo CD the source is a kustomization.
        kustomize,
      },
      p.list,
      checked.warnings.map((w) => `AppSource.kustomize: ${w}`),
    );
  }

  /**
   * A chart from a Helm repository or an OCI registry ({@link HelmSourceProps} lists the `repoURL` forms
   * and the Argo CD releases that read each).
   */
  public static helm(props: HelmSourceProps): AppSource {
    const checked = checkPropsValue(HELM_SOURCE_PROPS, props);
    props = checked.props as HelmSourceProps;
    // Problems are reported by the app using this source, with every other problem of the fleet.
    const p = new Problems('AppSource.helm');
    p.list.push(...checked.errors.map((e) => `AppSource.helm: ${e}`));
    checkRepoURL(p, props, checked.invalid, 'Helm repository');
    if (!props.chart && !checked.invalid.has('chart')) p.add('chart is empty: give the chart name');
    const refs = new Set<string>();
    const warnings = checked.warnings.map((w) => `AppSource.helm: ${w}`);
    const helmWarnings: string[] = [];
    const helm = helmJson(p, props, refs, '.', helmWarnings);
    warnings.push(...helmWarnings.map((w) => `AppSource.helm: ${w}`));
    const oci = (props.repoURL ?? '').startsWith('oci://');
    // (A chart source without a version is reported by synth validation; the OCI form has no chart field.)
    if (oci && !props.targetRevision && !checked.invalid.has('targetRevision'))
      p.add('targetRevision is empty: pin the chart version (the OCI tag), such as "1.2.3"');
    if (oci && props.chart && /[/\s]/.test(props.chart))
      p.add(`chart "${props.chart}" is not a chart name: give the name alone and the registry path in repoURL`);
    const where: JsonObject = oci
      ? // Argo CD 3.1+ reads an oci:// repoURL as an OCI artifact: the chart is the last path element, path '.'.
        { repoURL: `${(props.repoURL ?? '').replace(/\/+$/, '')}/${props.chart ?? ''}`, path: '.' }
      : { repoURL: props.repoURL ?? '', chart: props.chart ?? '' };
    return new AppSource(
      'helm',
      { ...where, targetRevision: props.targetRevision, ...(Object.keys(helm).length ? { helm } : {}) },
      p.list,
      warnings,
      refs,
    );
  }

  /** A Helm chart in a Git repository path, with every Helm option. */
  public static helmGit(props: HelmGitSourceProps): AppSource {
    const checked = checkPropsValue(HELM_GIT_SOURCE_PROPS, props);
    props = checked.props as HelmGitSourceProps;
    const p = new Problems('AppSource.helmGit');
    p.list.push(...checked.errors.map((e) => `AppSource.helmGit: ${e}`));
    checkRepoURL(p, props, checked.invalid, 'Git repository');
    checkPath(p, props, checked.invalid);
    const refs = new Set<string>();
    const helmWarnings: string[] = [];
    const helm = helmJson(p, props, refs, props.path || '.', helmWarnings);
    return new AppSource(
      'helmGit',
      {
        repoURL: props.repoURL ?? '',
        path: props.path ?? '',
        targetRevision: props.targetRevision ?? 'HEAD',
        // An empty helm block still tells Argo CD to render the path with Helm.
        helm,
      },
      p.list,
      [...checked.warnings, ...helmWarnings].map((w) => `AppSource.helmGit: ${w}`),
      refs,
    );
  }

  /**
   * A repository other sources of the same app read value files from, as `$<name>/<path>` (Argo CD's
   * `ref` sources). Only in `PullAppOptions.sources`; it renders nothing by itself.
   */
  public static ref(name: string, props: RefSourceProps): AppSource {
    const checked = checkPropsValue(REF_SOURCE_PROPS, props);
    props = checked.props as RefSourceProps;
    const p = new Problems(`AppSource.ref(${JSON.stringify(name)})`);
    p.list.push(...checked.errors.map((e) => `AppSource.ref(${JSON.stringify(name)}): ${e}`));
    if (typeof name !== 'string' || !REF_NAME.test(name))
      p.add(
        `the name ${JSON.stringify(name)} is not a ref name: use letters, digits, "_" and "-" (value files then read "$<name>/<path>")`,
      );
    checkRepoURL(p, props, checked.invalid, 'Git repository');
    return new AppSource(
      'ref',
      { repoURL: props.repoURL ?? '', targetRevision: props.targetRevision ?? 'HEAD', ref: String(name) },
      p.list,
      checked.warnings.map((w) => `AppSource.ref(${JSON.stringify(name)}): ${w}`),
    );
  }

  /** A Config Management Plugin renders a Git repository path. */
  public static plugin(props: PluginSourceProps): AppSource {
    const checked = checkPropsValue(PLUGIN_SOURCE_PROPS, props);
    props = checked.props as PluginSourceProps;
    const p = new Problems('AppSource.plugin');
    p.list.push(...checked.errors.map((e) => `AppSource.plugin: ${e}`));
    checkRepoURL(p, props, checked.invalid, 'Git repository');
    checkPath(p, props, checked.invalid);
    p.nonEmpty('name', props.name, 'give the plugin name, or leave it out to let discovery choose');
    const plugin: JsonObject = {};
    if (props.name) plugin.name = props.name;
    const env = Object.entries(sorted(props.env ?? {}));
    for (const [name] of env)
      if (!ENV_NAME.test(name))
        p.add(
          `env name "${name}" is not an environment variable name: use letters, digits and "_", not starting with a digit`,
        );
    if (env.length) plugin.env = env.map(([name, value]) => ({ name, value }));
    if (props.parameters?.length) {
      const seen = new Set<string>();
      plugin.parameters = props.parameters.map((param, i) => {
        p.nonEmpty(`parameters[${i}].name`, param.name, 'give the name the plugin announces');
        if (seen.has(param.name)) p.add(`parameters names "${param.name}" twice: give each parameter once`);
        seen.add(param.name);
        const values = (['string', 'array', 'map'] as const).filter((k) => param[k] !== undefined);
        if (values.length !== 1)
          p.add(
            `parameters[${i}] ("${param.name}") has ${values.length === 0 ? 'no value' : `${values.join(' and ')}`}: give exactly one of string, array or map`,
          );
        const json: JsonObject = { name: param.name };
        if (param.string !== undefined) json.string = param.string;
        if (param.array !== undefined) json.array = [...param.array];
        if (param.map !== undefined) json.map = sorted(param.map);
        return json;
      });
    }
    return new AppSource(
      'plugin',
      { repoURL: props.repoURL ?? '', path: props.path ?? '', targetRevision: props.targetRevision ?? 'HEAD', plugin },
      p.list,
      checked.warnings.map((w) => `AppSource.plugin: ${w}`),
    );
  }

  private constructor(
    private readonly kind: SourceKind,
    private readonly source: JsonObject,
    private readonly problems: readonly string[] = [],
    private readonly warnings: readonly string[] = [],
    private readonly refsRead: ReadonlySet<string> = new Set(),
  ) {}

  /**
   * Keys the factory does not know (ignored), for the app using this source to report as warnings.
   * @internal
   */
  public _warnings(): string[] {
    return [...this.warnings];
  }

  /**
   * What is wrong with this source (values that cannot be written), for the app using it to report.
   * @internal
   */
  public _problems(): string[] {
    return [...this.problems];
  }

  /**
   * The `ref` name of a source made by `AppSource.ref`, or undefined.
   * @internal
   */
  public _refName(): string | undefined {
    return this.kind === 'ref' ? (this.source.ref as string) : undefined;
  }

  /**
   * The ref names this source's value files read from (`$<name>/...`).
   * @internal
   */
  public _refsRead(): string[] {
    return [...this.refsRead].sort();
  }

  /**
   * This source with a name (`spec.sources[].name`): Argo CD shows it in its UI, and `argocd app` commands
   * pick a source of a multi-source app by it (`--source-name`). Each name once per app. The source itself is
   * not changed: a copy is returned.
   * @param name the name, not empty
   */
  public withName(name: string): AppSource {
    const problems = [...this.problems];
    if (typeof name !== 'string' || name.trim().length === 0 || name !== name.trim())
      problems.push(
        `withName(${JSON.stringify(name)}): a source name is not empty and has no leading or trailing spaces: give a name such as "values"`,
      );
    return new AppSource(this.kind, { ...this.toJson(), name }, problems, this.warnings, this.refsRead);
  }

  /**
   * The source's name given with {@link withName}, or undefined.
   * @internal
   */
  public _sourceName(): string | undefined {
    return typeof this.source.name === 'string' ? this.source.name : undefined;
  }

  /**
   * The factory that made this source (`git`, `kustomize`, `helm`, `helmGit`, `ref`, `plugin`).
   * @internal
   */
  public _kind(): string {
    return this.kind;
  }

  /** The Application `spec.source` (a copy). */
  public toJson(): JsonObject {
    return JSON.parse(JSON.stringify(this.source)) as JsonObject;
  }
}
