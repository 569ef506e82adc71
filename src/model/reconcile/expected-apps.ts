/**
 * What an agent-autonomous spoke should run, recorded on the hub. The spoke's own Argo CD syncs its
 * folder (`dist/<hub>/spokes/<spoke>/`) and the argocd-agent principal mirrors the Applications it runs
 * onto the hub, in a namespace named after the agent; an Application that never shows up there would
 * otherwise go unnoticed. Synth therefore renders one ConfigMap per autonomous spoke in the hub's Argo CD
 * namespace (`pullfleet-expected-<spoke>`, label {@link EXPECTED_APPLICATIONS_LABEL}: `<spoke>`) whose
 * data key {@link EXPECTED_APPLICATIONS_KEY} lists the expected Application names, sorted, one per line;
 * {@link EXPECTED_FOLDER_KEY} names the spoke's folder in the fleet repository.
 */
import type { ConfigMapObject } from '../delivery/appset.js';
import { MANAGED_BY_LABEL, MANAGED_BY_VALUE } from '../core/keys.js';
import type { ConfigMapLike } from '../core/types.js';
import { dnsLabelProblem, dnsSubdomainProblem, fitName, MAX_NAME_LENGTH } from '../core/names.js';

/** Label marking a ConfigMap as the expected-Application list of one agent-autonomous spoke; the value is the spoke name. */
export const EXPECTED_APPLICATIONS_LABEL = 'pullfleet.io/expected-applications-for';
/** Data key holding the expected Application names: sorted, one per line, each line ending in a newline. */
export const EXPECTED_APPLICATIONS_KEY = 'applications';
/** Data key holding the spoke's folder in the fleet repository (`<outputPath>/<hub>/spokes/<spoke>`). */
export const EXPECTED_FOLDER_KEY = 'folder';
/** Prefix of the expectation ConfigMap names. */
export const EXPECTED_APPLICATIONS_PREFIX = 'pullfleet-expected-';

/** The Applications one agent-autonomous spoke is expected to run (as read back from its ConfigMap). */
export interface ExpectedApplications {
  /** The spoke (agent) name; the principal mirrors its Applications into the namespace of this name. */
  readonly cluster: string;
  /** Expected Application names, sorted, without duplicates. */
  readonly applications: readonly string[];
  /** The spoke's folder in the fleet repository, when recorded. */
  readonly folder?: string;
  /** `<namespace>/<name>` of the ConfigMap the list came from (the hub's Argo CD namespace). */
  readonly source: string;
}

/** The result of reading one expectation ConfigMap: the list, or why it cannot be used. */
export type ExpectedApplicationsParse =
  | { readonly expected: ExpectedApplications; readonly problem?: undefined; readonly cluster?: undefined }
  | { readonly expected?: undefined; readonly problem: string; readonly cluster?: string; readonly source: string };

/** Name of the expectation ConfigMap of `spoke`, fitted to 253 characters. */
export function expectedApplicationsName(spoke: string): string {
  return fitName(`${EXPECTED_APPLICATIONS_PREFIX}${spoke}`, MAX_NAME_LENGTH);
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The expectation ConfigMap of an agent-autonomous spoke: the names of the Applications rendered into
 * its folder, sorted and de-duplicated. Names are taken as given: the spoke and its Applications are
 * validated where they are rendered, and synth fails there.
 */
export function buildExpectedApplicationsConfigMap(options: {
  readonly spoke: string;
  readonly namespace: string;
  readonly applications: readonly string[];
  readonly folder: string;
}): ConfigMapObject {
  const names = [...new Set(options.applications)].sort(compareText);
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: expectedApplicationsName(options.spoke),
      namespace: options.namespace,
      labels: { [MANAGED_BY_LABEL]: MANAGED_BY_VALUE, [EXPECTED_APPLICATIONS_LABEL]: options.spoke },
    },
    data: {
      [EXPECTED_APPLICATIONS_KEY]: names.map((name) => `${name}\n`).join(''),
      [EXPECTED_FOLDER_KEY]: options.folder,
    },
  };
}

/**
 * Reads an expectation ConfigMap back. A list with any unreadable part (no spoke label, no
 * `applications` key, a line that is not an Application name) is refused as a whole with a problem that
 * names the ConfigMap and the fix: a half-read list would report Applications missing that are not.
 * Blank lines and surrounding spaces are ignored; duplicates collapse.
 */
export function parseExpectedApplications(configMap: ConfigMapLike): ExpectedApplicationsParse {
  const source = `${configMap.metadata?.namespace ?? ''}/${configMap.metadata?.name ?? '(unnamed)'}`;
  const fix =
    'sync the hub Application that applies dist/<hub>/hub/ (the file hub/expected-applications.yaml) so synth output replaces it';
  const label = configMap.metadata?.labels?.[EXPECTED_APPLICATIONS_LABEL];
  const cluster = typeof label === 'string' ? label.trim() : '';
  const clusterProblem = dnsLabelProblem(cluster);
  if (clusterProblem) {
    return {
      problem: `expected-Application list ${source}: label ${EXPECTED_APPLICATIONS_LABEL} "${cluster}" is not a spoke name (${clusterProblem}): ${fix}`,
      source,
    };
  }
  const raw = configMap.data?.[EXPECTED_APPLICATIONS_KEY];
  if (typeof raw !== 'string') {
    return {
      problem: `expected-Application list ${source} of spoke "${cluster}" has no data key "${EXPECTED_APPLICATIONS_KEY}": ${fix}`,
      cluster,
      source,
    };
  }
  const names = new Set<string>();
  const lines = raw.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const name = lines[index].trim();
    if (name === '') continue;
    const problem = dnsSubdomainProblem(name);
    if (problem) {
      const shown = name.length > 80 ? `${name.slice(0, 79)}…` : name;
      return {
        problem: `expected-Application list ${source} of spoke "${cluster}", line ${index + 1}: "${shown}" is not an Application name (${problem}): ${fix}`,
        cluster,
        source,
      };
    }
    names.add(name);
  }
  const folder = configMap.data?.[EXPECTED_FOLDER_KEY];
  return {
    expected: {
      cluster,
      applications: [...names].sort(compareText),
      ...(typeof folder === 'string' && folder.trim() ? { folder: folder.trim() } : {}),
      source,
    },
  };
}
