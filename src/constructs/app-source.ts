import type { JsonObject } from '../model/index.js';

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
}

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
   * Inline values (counted against the ManifestWork size budget).
   * @default - the chart's defaults
   */
  readonly values?: Record<string, unknown>;
}

/** Where an app's manifests come from: a Git path or a Helm chart. */
export class AppSource {
  /** Plain manifests, Kustomize or a Helm chart in a Git repository path. */
  public static git(props: GitSourceProps): AppSource {
    if (!props.repoURL) throw new Error('AppSource.git: repoURL is empty: give the Git repository URL');
    return new AppSource({ repoURL: props.repoURL, path: props.path, targetRevision: props.targetRevision ?? 'HEAD' });
  }

  /** A chart from a Helm repository. */
  public static helm(props: HelmSourceProps): AppSource {
    if (!props.repoURL) throw new Error('AppSource.helm: repoURL is empty: give the Helm repository URL');
    if (!props.chart) throw new Error('AppSource.helm: chart is empty: give the chart name');
    const helm: JsonObject = {};
    if (props.releaseName) helm.releaseName = props.releaseName;
    if (props.values) helm.valuesObject = JSON.parse(JSON.stringify(props.values)) as JsonObject;
    return new AppSource({
      repoURL: props.repoURL,
      chart: props.chart,
      targetRevision: props.targetRevision,
      ...(Object.keys(helm).length ? { helm } : {}),
    });
  }

  private constructor(private readonly source: JsonObject) {}

  /** The Application `spec.source` (a copy). */
  public toJson(): JsonObject {
    return JSON.parse(JSON.stringify(this.source)) as JsonObject;
  }
}
