/**
 * The findings of the rendered objects as fleet problems (internal): each reported under the construct that
 * made the object, once per construct and problem, and left out when the construct already reported the value.
 */
import type { ApiObject } from 'cdk8s';
import { type ObjectFinding } from '../model/validation/object-rules.js';
import { type FleetProblem } from '../model/validation/rules.js';
import { kindOf } from './_ids.js';

/** The construct a rendered object is reported under: the nearest pullfleet construct (Spoke, PullApplication...). */
export function ownerPath(obj: ApiObject): string {
  const scopes = obj.node.scopes;
  for (let i = scopes.length - 2; i >= 0; i--) if (kindOf(scopes[i]) !== undefined) return scopes[i].node.path;
  return obj.node.path;
}

/** The messages of `problems` by construct path. */
export function messagesByPath(problems: readonly FleetProblem[]): Map<string, string[]> {
  const messages = new Map<string, string[]>();
  for (const p of problems) {
    const list = messages.get(p.path);
    if (list) list.push(p.message);
    else messages.set(p.path, [p.message]);
  }
  return messages;
}

/**
 * The errors and warnings the findings of `objects` (one hub's, from `found`) add, one message per owner
 * construct and problem, however many objects repeat it. `constructMessages` are the problems the constructs
 * reported themselves, by construct path.
 */
export function objectFindingProblems(
  objects: readonly ApiObject[],
  found: ReadonlyMap<ApiObject, ObjectFinding[]>,
  constructMessages: ReadonlyMap<string, string[]>,
): { errors: FleetProblem[]; warnings: FleetProblem[] } {
  const allConstructMessages = [...constructMessages.values()].flat();
  const errors: FleetProblem[] = [];
  const warnings: FleetProblem[] = [];
  const repeats = new Map<string, { problem: FleetProblem; more: number; list: FleetProblem[] }>();
  for (const obj of objects) {
    const objectFindings = found.get(obj);
    if (!objectFindings) continue;
    const owner = ownerPath(obj);
    // A bad value a construct already reported (with its fix) is not reported again for every
    // object made from it, whichever construct made the object (an app's namespace lands in each
    // spoke's bootstrap); synth fails on the construct's problem either way.
    // An empty value matches too much (`""` is in every message about any empty value): it counts as
    // reported only by the construct that made the object.
    for (const finding of objectFindings) {
      const value = finding.value;
      const already = value === '' ? (constructMessages.get(owner) ?? []) : allConstructMessages;
      if (
        value !== undefined &&
        already.some((m) => m.includes(`"${value}"`) || m.includes(`${value} bytes`) || m.includes(` ${value} `))
      )
        continue;
      const generic = finding.message.slice(finding.message.indexOf(': ') + 2);
      const key = `${finding.severity}|${owner}|${generic}`;
      const seen = repeats.get(key);
      if (seen) {
        seen.more++;
        continue;
      }
      const problem = { path: owner, message: finding.message };
      repeats.set(key, { problem, more: 0, list: finding.severity === 'error' ? errors : warnings });
    }
  }
  for (const { problem, more, list } of repeats.values()) {
    list.push(
      more
        ? {
            path: problem.path,
            message: `${problem.message} (and ${more} more object${more === 1 ? '' : 's'} made by this construct)`,
          }
        : problem,
    );
  }
  return { errors, warnings };
}
