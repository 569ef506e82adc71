/**
 * Construct ids and kinds of pullfleet constructs. A pullfleet construct's id is its name (scoped by kind
 * for everything but hubs and spokes), and its kind marks it as the owner of the objects it renders (the
 * report names the owner of an object, see Fleet). Both are internal: the package exports neither.
 */
import type { IConstruct } from 'constructs';
import { recordProblem } from './_problems.js';
import { assertNotRendered } from './_render-order.js';

const kindSymbol = Symbol.for('pullfleet.kind');

/** The pullfleet kind of a construct (Hub, Spoke, Placement...), or undefined. */
export function kindOf(c: IConstruct): string | undefined {
  return (c as unknown as Record<symbol, string | undefined>)[kindSymbol];
}

/** Marks a construct as a pullfleet construct of `kind` (the owner of what it renders). */
export function markKind(c: IConstruct, kind: string): void {
  Object.defineProperty(c, kindSymbol, { value: kind });
}

/**
 * The name a construct takes from its id: the id itself, or, for an empty id that {@link claimId}
 * already reported, the placeholder id it was given (so nothing else fails on it).
 */
export function nameFromId(c: IConstruct, id: string): string {
  return typeof id === 'string' && id !== '' ? id : c.node.id;
}

/**
 * Kinds whose construct id is their name. Every other kind is scoped by kind (`Placement:prod`), as
 * Kubernetes names are, so a ClusterSet, a Placement and a GitOpsCluster may all be called `prod`.
 * Spokes keep their name because cluster names are the fleet's key (bootstrap folders, work namespaces).
 */
const BARE_ID_KINDS: ReadonlySet<string> = new Set(['Hub', 'Spoke']);

/**
 * The construct id for a pullfleet construct of `kind` called `name` under `scope`: the name for a Hub
 * or a Spoke, `<Kind>:<name>` for every other kind. The id depends on the kind and the name only, never
 * on what was declared before, so reordering declarations never changes a construct path. The id is a
 * name, so an empty or duplicate one is a problem of the fleet's content: reported with every other
 * problem, not thrown; the construct gets a placeholder or numbered id so the rest of the fleet can
 * still be checked. Declaring after the fleet rendered throws (see _render-order.ts).
 */
export function claimId(scope: IConstruct, kind: string, name: string): string {
  const wanted = typeof name === 'string' && name !== '' ? (BARE_ID_KINDS.has(kind) ? name : `${kind}:${name}`) : '';
  assertNotRendered(
    scope,
    `${kind} "${String(name)}" declared`,
    [scope.node.path, wanted].filter((part) => part !== '').join('/'),
  );
  if (wanted === '') {
    // The constructs library refuses an empty id with a bare stack trace; say what the id is for instead.
    const examples: Record<string, string> = {
      Hub: 'hub',
      ClusterSet: 'prod',
      Placement: 'all-prod',
      Spoke: 'prod-east',
      GitOpsCluster: 'agents',
    };
    const make = kind === 'GitOpsCluster' ? 'GitOpsCluster.ocm' : `new ${kind}`;
    const example = `${make}(${kind === 'Hub' ? 'fleet' : 'hub'}, '${examples[kind] ?? 'guestbook'}'${kind === 'Hub' ? '' : ', …'})`;
    recordProblem(
      scope,
      scope.node.path || kind,
      `a ${kind} was given ${name === '' ? 'an empty id' : `the id ${JSON.stringify(name) ?? String(name)}`}: the id is its name (a DNS label), for example ${example}`,
    );
    let n = 1;
    while (scope.node.tryFindChild(`unnamed-${kind.toLowerCase()}-${n}`)) n++;
    return `unnamed-${kind.toLowerCase()}-${n}`;
  }
  const holder = scope.node.tryFindChild(wanted);
  if (!holder) return wanted;
  const holderKind = kindOf(holder);
  const at = scope.node.path ? `${scope.node.path}/${wanted}` : wanted;
  recordProblem(
    scope,
    at,
    `${scope.node.path ? `"${scope.node.path}"` : 'the fleet'} already has ${holderKind === kind ? `a ${kind}` : 'a construct'} with the id "${name}" (${holder.node.path}): give each ${kind} its own name`,
  );
  let n = 2;
  while (scope.node.tryFindChild(`${wanted}#${n}`)) n++;
  return `${wanted}#${n}`;
}
