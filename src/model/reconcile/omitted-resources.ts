/**
 * What a resource list leaves out, as data (docs/controller/resource-summaries.md). The spoke's summary is capped
 * in size, so the hub may list only part of an app's resources; the model knows how many more there are and how
 * many of those are Degraded, Missing or OutOfSync. Everything shown of it is rendered here from that data: the
 * "and 312 more, 3 of them Degraded" text ({@link omittedText}) and the message of the hub Application's
 * `ResourceListTruncated` condition ({@link truncatedListMessage}). Where only the text has travelled (the
 * condition on a hub Application), it is read back by the parsers next to the writers ({@link parseOmittedText},
 * {@link parseTruncatedListMessage}); a test renders and parses every shape, so rewording a message fails a test
 * instead of changing what `pullfleet status` counts as a problem.
 *
 * This module imports nothing: resource-summary.ts builds on it.
 */

/** Resources a list leaves out: how many, and how many of them are Degraded, Missing or OutOfSync. */
export interface OmittedResources {
  /** Resources the list had no room for. */
  readonly omitted: number;
  /** Of those, how many are Degraded. */
  readonly omittedDegraded: number;
  /** Of those, how many are Missing. */
  readonly omittedMissing: number;
  /** Of those, how many are OutOfSync. */
  readonly omittedOutOfSync: number;
}

/** A hub Application's `status.resources` that lists only part of the app's resources, and what it leaves out. */
export interface TruncatedResourceList extends OmittedResources {
  /** Resources `status.resources` lists. */
  readonly listed: number;
  /** Resources the app has. */
  readonly total: number;
  /** The size cap of the spoke's summary, in characters, that cut the list. */
  readonly capChars: number;
}

/** The left-out resources as `pullfleet status` shows them: the text, its display rank, and whether it is a problem. */
export interface OmittedView {
  /** "and 312 more, 3 of them Degraded". */
  readonly text: string;
  /** 1 when Degraded resources are left out, 2 Missing, 3 OutOfSync, else 5 (the display order of resources). */
  readonly rank: number;
  /** Whether Degraded or Missing resources are left out (the exit code of `pullfleet status` is then 1). */
  readonly problems: boolean;
}

/** The problem states the text names, in the order it names them. */
const NAMED = [
  ['Degraded', 'omittedDegraded'],
  ['Missing', 'omittedMissing'],
  ['OutOfSync', 'omittedOutOfSync'],
] as const;

/** "and 312 more, 3 of them Degraded" (", 1 Missing, 5 OutOfSync"), or undefined when nothing was left out. */
export function omittedText(summary: OmittedResources): string | undefined {
  if (summary.omitted <= 0) return undefined;
  const problems = NAMED.filter(([, key]) => summary[key] > 0).map(([state, key]) => `${summary[key]} ${state}`);
  if (problems.length === 0) return `and ${summary.omitted} more`;
  const [first, ...rest] = problems;
  return `and ${summary.omitted} more, ${first.replace(/^(\d+) /, '$1 of them ')}${rest.length > 0 ? `, ${rest.join(', ')}` : ''}`;
}

const OMITTED_TEXT = /^and (\d+) more(?:, (\d+) of them (\w+)((?:, \d+ \w+)*))?$/;

/** The data {@link omittedText} rendered, or undefined when `text` is not its output. */
export function parseOmittedText(text: string): OmittedResources | undefined {
  const match = OMITTED_TEXT.exec(text);
  if (!match) return undefined;
  const [, omitted, firstCount, firstState, rest] = match;
  const named = firstState === undefined ? [] : [`${firstCount} ${firstState}`, ...rest.split(', ').slice(1)];
  const counts = { omittedDegraded: 0, omittedMissing: 0, omittedOutOfSync: 0 };
  let last = -1;
  for (const part of named) {
    const [count, state] = part.split(' ');
    const index = NAMED.findIndex(([name]) => name === state);
    // Each state at most once, in the writer's order, with a count above 0.
    if (index <= last || Number(count) <= 0) return undefined;
    counts[NAMED[index][1]] = Number(count);
    last = index;
  }
  const result = { omitted: Number(omitted), ...counts };
  return result.omitted > 0 ? result : undefined;
}

/** Display rank of left-out resources: 1 when Degraded ones are left out, 2 Missing, 3 OutOfSync, else 5. */
export function omittedRank(omitted: OmittedResources): Pick<OmittedView, 'rank' | 'problems'> {
  if (omitted.omittedDegraded > 0) return { rank: 1, problems: true };
  if (omitted.omittedMissing > 0) return { rank: 2, problems: true };
  if (omitted.omittedOutOfSync > 0) return { rank: 3, problems: false };
  return { rank: 5, problems: false };
}

/** How `pullfleet status` shows the left-out resources, or undefined when nothing was left out. */
export function omittedView(omitted: OmittedResources): OmittedView | undefined {
  const text = omittedText(omitted);
  return text === undefined ? undefined : { text, ...omittedRank(omitted) };
}

/** What a summary of `total` resources listing `resources` leaves out; undefined when it lists them all. */
export function truncatedResourceList(
  summary: OmittedResources & { readonly resources: readonly unknown[]; readonly counts: { readonly total: number } },
  capChars: number,
): TruncatedResourceList | undefined {
  if (summary.omitted <= 0) return undefined;
  return {
    listed: summary.resources.length,
    total: summary.counts.total,
    capChars,
    omitted: summary.omitted,
    omittedDegraded: summary.omittedDegraded,
    omittedMissing: summary.omittedMissing,
    omittedOutOfSync: summary.omittedOutOfSync,
  };
}

/** The message of the hub Application's `ResourceListTruncated` condition. */
export function truncatedListMessage(list: TruncatedResourceList): string {
  return `status.resources lists ${list.listed} of ${list.total} resources, problems first (the spoke's summary is capped at ${list.capChars} characters): ${omittedText(list) ?? ''}`;
}

const TRUNCATED_LIST_MESSAGE =
  /^status\.resources lists (\d+) of (\d+) resources, problems first \(the spoke's summary is capped at (\d+) characters\): (.*)$/s;

/** The data {@link truncatedListMessage} rendered, or undefined when `message` is not its output. */
export function parseTruncatedListMessage(message: string): TruncatedResourceList | undefined {
  const match = TRUNCATED_LIST_MESSAGE.exec(message);
  const omitted = match ? parseOmittedText(match[4]) : undefined;
  if (!match || !omitted) return undefined;
  return { listed: Number(match[1]), total: Number(match[2]), capChars: Number(match[3]), ...omitted };
}
