/**
 * Checks of an app's grants (`resources` of PullApplication and PullApplicationSet) against the API
 * resources Kubernetes serves and the custom resources the fleet knows (api-resources.ts). RBAC takes
 * any name, so a misspelled grant renders a Role that grants nothing, and the spoke's Argo CD cannot
 * create the app's objects; these checks catch it at synth, with the name meant.
 *
 * - A group Kubernetes serves: each resource must be one of it; a misspelling (case, singular, a typo)
 *   gets "did you mean", a resource another group serves names that group.
 * - A group of known custom resources: a misspelling of one listed is a problem; any other name may
 *   come from another CRD and passes.
 * - Any other group: a misspelling of a known group gets "did you mean"; the rest are the user's own
 *   CRDs and pass.
 */
import { dnsSubdomainProblem } from '../core/names.js';
import { editDistance } from '../core/nearest.js';
import { BUILT_IN_API_RESOURCES, KNOWN_CUSTOM_API_RESOURCES, KUBERNETES_VERSIONS } from './api-resources.js';
import { RESOURCE_NAME } from './object-rules.js';

/** A grant as the app declares it. */
export interface GrantToCheck {
  readonly apiGroup: string;
  readonly resources: readonly string[];
}

const KNOWN_GROUPS = [...Object.keys(BUILT_IN_API_RESOURCES), ...Object.keys(KNOWN_CUSTOM_API_RESOURCES)].sort();
/** The most resources a message lists; a longer group points at `kubectl api-resources`. */
const LISTED = 8;

/** The typos tolerated in a name of `length` characters: none in very short names, two in long ones. */
function tolerance(length: number): number {
  return length < 4 ? 0 : length < 9 ? 1 : 2;
}

/** `name` in lower case and the plurals a kind or a singular makes (`Deployment`, `ingress`, `NetworkPolicy`). */
function pluralForms(name: string): string[] {
  const lower = name.toLowerCase();
  return [lower, `${lower}s`, `${lower}es`, ...(lower.endsWith('y') ? [`${lower.slice(0, -1)}ies`] : [])];
}

/**
 * The name of `names` that `given` most likely means: the same in lower case, its plural (a kind or a
 * singular: `Deployment`, `ingress`, `NetworkPolicy`), or the closest within a typo or two.
 */
function meant(given: string, names: readonly string[]): string | undefined {
  const lower = given.toLowerCase();
  const exact = pluralForms(given).find((f) => names.includes(f));
  if (exact !== undefined) return exact;
  let best: string | undefined;
  let bestDistance = tolerance(lower.length) + 1;
  for (const name of names) {
    const distance = editDistance(lower, name);
    if (distance < bestDistance) [best, bestDistance] = [name, distance];
  }
  return best;
}

/** The group as messages show it: the core group is `""`, which says little on its own. */
function shownGroup(group: string): string {
  return group === '' ? '"" (the core group)' : `"${group}"`;
}

/** A problem with the grant's API group itself, or undefined when its resources can be checked (or passed). */
function groupProblem(group: string): string | undefined {
  if (group in BUILT_IN_API_RESOURCES || group in KNOWN_CUSTOM_API_RESOURCES) return undefined;
  const at = `resources grant API group "${group}"`;
  if (group.includes('/')) {
    const alone = group.slice(0, group.indexOf('/'));
    const bare = alone === 'v1' || alone === 'core' ? '' : alone;
    return `${at} includes a version: give the group alone, as in apiVersion before the "/": apiGroup: "${bare}"`;
  }
  if (group === 'core' || group === 'v1')
    return `${at} is not a group name: the core group (apiVersion v1: pods, services, configmaps...) is "", so write apiGroup: ""`;
  const lower = group.toLowerCase();
  const prefixed = KNOWN_GROUPS.find((known) => known.startsWith(`${lower}.`));
  // Groups under x-k8s.io belong to Kubernetes SIG projects' CRDs, close to built-in names on purpose.
  const close = lower.endsWith('x-k8s.io') ? undefined : meant(lower, KNOWN_GROUPS);
  const suggestion = KNOWN_GROUPS.includes(lower) ? lower : (prefixed ?? close);
  if (suggestion !== undefined)
    return `${at} is not an API group of Kubernetes ${KUBERNETES_VERSIONS} or of the custom resources pullfleet knows: did you mean ${shownGroup(suggestion)}?`;
  const syntax = dnsSubdomainProblem(group);
  if (syntax) return `${at} ${syntax}: use the group as in apiVersion, for example "apps" or "" for the core group`;
  return undefined;
}

/** Where a resource missing from its group is served instead: `[group, resource]`, built-in groups first. */
function servedElsewhere(group: string, base: string): [string, string] | undefined {
  const forms = pluralForms(base);
  for (const table of [BUILT_IN_API_RESOURCES, KNOWN_CUSTOM_API_RESOURCES]) {
    for (const other of Object.keys(table).sort()) {
      if (other === group) continue;
      const found = forms.find((f) => table[other].includes(f));
      if (found !== undefined) return [other, found];
    }
  }
  return undefined;
}

/** The problem of one resource of a grant on `group`, or undefined. */
function resourceProblem(group: string, resource: string): string | undefined {
  const slash = resource.indexOf('/');
  const base = slash < 0 ? resource : resource.slice(0, slash);
  const sub = slash < 0 ? '' : resource.slice(slash);
  const at = `resources grant for API group ${shownGroup(group)} names "${resource}"`;
  const builtIn = BUILT_IN_API_RESOURCES[group];
  const custom = KNOWN_CUSTOM_API_RESOURCES[group];
  const names = builtIn ?? custom;
  if (names === undefined) {
    if (RESOURCE_NAME.test(resource)) return undefined;
    return `${at}, which is not a resource name: name the lower-case plural, as kubectl api-resources lists it (for example "widgets" or "widgets/status")`;
  }
  if (names.includes(base)) return undefined;
  const spelled = meant(base, names);
  if (spelled !== undefined)
    return `${at}, which is not a resource of that group: did you mean "${spelled}${sub}"? A grant names the lower-case plural, as kubectl api-resources lists it`;
  // Custom resources of a known group may come from CRDs pullfleet does not know.
  if (!builtIn) return undefined;
  const elsewhere = servedElsewhere(group, base);
  if (elsewhere) {
    const [other, name] = elsewhere;
    return `${at}, which that group does not serve: ${name} are in API group ${shownGroup(other)}; grant them there: { apiGroup: '${other}', resources: ['${name}${sub}'] }`;
  }
  if (builtIn.length === 0)
    return `${at}, but Kubernetes ${KUBERNETES_VERSIONS} serve nothing in API group ${shownGroup(group)}: grant the resource in the group of the apiVersion the manifests use`;
  const listed =
    builtIn.length <= LISTED
      ? `use one of ${builtIn.join(', ')}`
      : `see kubectl api-resources --api-group=${group === '' ? "''" : group}`;
  return `${at}, which Kubernetes ${KUBERNETES_VERSIONS} do not serve in that group: ${listed}`;
}

/**
 * The problems of one grant: its API group misspelled or malformed, or a resource its group does not
 * serve. Each message names the group and the resource given and what to write instead.
 */
export function grantProblems(grant: GrantToCheck): string[] {
  const group = String(grant.apiGroup);
  const problem = groupProblem(group);
  if (problem) return [problem];
  const problems: string[] = [];
  for (const resource of grant.resources) {
    const p = resourceProblem(group, String(resource));
    if (p) problems.push(p);
  }
  return problems;
}
