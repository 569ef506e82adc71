import type { JsonObject } from '../model/core/types.js';
import { checkPropsValue, plainObject, propsOf, ref, str, type Check } from './_props-check.js';

/** A Git source of an app (`AppSource.git`). */
export interface GitSourceProps {
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
   * Helm release name, when the path holds a Helm chart.
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

/** A Helm chart source of an app (`AppSource.helm`). */
export interface HelmSourceProps {
  /** Helm repository URL (or OCI registry without the `oci://` scheme). */
  readonly repoURL: string;
  /** Chart name. */
  readonly chart: string;
  /** Chart version. */
  readonly targetRevision: string;
  /**
   * Helm release name.
   * @default - the Application name
   */
  readonly releaseName?: string;
  /**
   * Inline values (counted against the ManifestWork size budget). Plain objects, arrays, strings,
   * finite numbers, booleans and `null` (Helm's way to remove a chart default, kept as written);
   * anything else (BigInt, NaN, Infinity, functions, symbols, `undefined` in an array, class
   * instances, cycles) fails validation naming the app and the key.
   * @default - the chart's defaults
   */
  readonly values?: Record<string, unknown>;
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
 */
function helmValueProblems(values: unknown): string[] {
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

/** A copy of plain JSON data that keeps `null` (and leaves `undefined` properties out). */
function copyValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => (item === undefined ? null : copyValues(item)));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== undefined) out[key] = copyValues(item);
  return out;
}

/** The runtime type of every {@link GitSourceProps} key (see props-check.ts). */
const GIT_SOURCE_PROPS = propsOf<GitSourceProps>('AppSource.git', {
  repoURL: str(),
  path: str(),
  targetRevision: str(),
  releaseName: str(),
  values: plainObject(),
});

/** The runtime type of every {@link HelmSourceProps} key (see props-check.ts). */
const HELM_SOURCE_PROPS = propsOf<HelmSourceProps>('AppSource.helm', {
  repoURL: str(),
  chart: str(),
  targetRevision: str(),
  releaseName: str(),
  values: plainObject(),
});

/** @internal an AppSource (made by `AppSource.git` or `AppSource.helm`), recognised by its methods. */
export const APP_SOURCE_CHECK: Check<AppSource> = ref<AppSource>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as { toJson?: unknown }).toJson === 'function' &&
    typeof (v as { _problems?: unknown })._problems === 'function',
  'an AppSource',
  'make it with AppSource.git({ repoURL, path }) or AppSource.helm({ repoURL, chart, targetRevision })',
);

/** Where an app's manifests come from: a Git path or a Helm chart. */
export class AppSource {
  /** Plain manifests, Kustomize or a Helm chart in a Git repository path. */
  public static git(props: GitSourceProps): AppSource {
    const checked = checkPropsValue(GIT_SOURCE_PROPS, props);
    props = checked.props as GitSourceProps;
    // Problems are reported by the app using this source, with every other problem of the fleet.
    const problems = [
      ...checked.errors.map((e) => `AppSource.git: ${e}`),
      ...(props.repoURL || checked.invalid.has('repoURL')
        ? []
        : ['AppSource.git: repoURL is empty: give the Git repository URL']),
      ...(props.values === undefined ? [] : helmValueProblems(props.values)),
    ];
    const helm: JsonObject = {};
    if (props.releaseName) helm.releaseName = props.releaseName;
    if (props.values && problems.length === 0) helm.valuesObject = copyValues(props.values) as JsonObject;
    return new AppSource(
      {
        repoURL: props.repoURL ?? '',
        path: props.path,
        targetRevision: props.targetRevision ?? 'HEAD',
        ...(Object.keys(helm).length ? { helm } : {}),
      },
      problems,
      checked.warnings.map((w) => `AppSource.git: ${w}`),
    );
  }

  /** A chart from a Helm repository. */
  public static helm(props: HelmSourceProps): AppSource {
    const checked = checkPropsValue(HELM_SOURCE_PROPS, props);
    props = checked.props as HelmSourceProps;
    const helm: JsonObject = {};
    if (props.releaseName) helm.releaseName = props.releaseName;
    // Problems are reported by the app using this source, with every other problem of the fleet.
    const problems = [
      ...checked.errors.map((e) => `AppSource.helm: ${e}`),
      ...(props.repoURL || checked.invalid.has('repoURL')
        ? []
        : ['AppSource.helm: repoURL is empty: give the Helm repository URL']),
      ...(props.chart || checked.invalid.has('chart') ? [] : ['AppSource.helm: chart is empty: give the chart name']),
      ...(props.values === undefined ? [] : helmValueProblems(props.values)),
    ];
    if (props.values && problems.length === 0) helm.valuesObject = copyValues(props.values) as JsonObject;
    return new AppSource(
      {
        repoURL: props.repoURL ?? '',
        chart: props.chart ?? '',
        targetRevision: props.targetRevision,
        ...(Object.keys(helm).length ? { helm } : {}),
      },
      problems,
      checked.warnings.map((w) => `AppSource.helm: ${w}`),
    );
  }

  private constructor(
    private readonly source: JsonObject,
    private readonly problems: readonly string[] = [],
    private readonly warnings: readonly string[] = [],
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

  /** The Application `spec.source` (a copy). */
  public toJson(): JsonObject {
    return JSON.parse(JSON.stringify(this.source)) as JsonObject;
  }
}
