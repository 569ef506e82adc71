/**
 * Problems recorded while the fleet is being built, for the one report synth and validate give (see
 * docs/reference/errors.md). A construct reports the problems of its own values through
 * `node.addValidation`; this list holds the rest: problems found before a construct exists (an empty or
 * duplicate name, given before `super()`), and problems one construct finds about another while
 * rendering (two deliveries of one Application in different models).
 */
import type { IConstruct } from 'constructs';

/** One recorded problem: the construct path it is about and the message. */
export interface RecordedProblem {
  readonly path: string;
  readonly message: string;
}

const recorded = new WeakMap<IConstruct, RecordedProblem[]>();

/** Records a problem about the construct at `path` for the report of the fleet `scope` belongs to. */
export function recordProblem(scope: IConstruct, path: string, message: string): void {
  const root = scope.node.root;
  const list = recorded.get(root);
  if (list) list.push({ path, message });
  else recorded.set(root, [{ path, message }]);
}

/** The problems recorded under `root` by {@link recordProblem}, in the order they were found. */
export function recordedProblems(root: IConstruct): ReadonlyArray<RecordedProblem> {
  return recorded.get(root) ?? [];
}
