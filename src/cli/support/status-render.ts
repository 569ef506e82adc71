/**
 * `pullfleet status` rendering: pure functions from fleet reports to text, JSON or YAML, and the exit
 * code. Reading the hub lives in status.ts; everything here is golden-testable.
 */
import { rolloutHasProblems, rolloutLines, type RolloutSummary } from './rollout-status.js';
import { stringify as toYaml } from 'yaml';
import {
  isProblemRow,
  placementNames,
  sortRowsProblemsFirst,
  summarize,
  type ApplicationSet,
  type FleetReport,
  type FleetReportRow,
  type FleetReportSummary,
} from '../../model/report/report.js';
import type { Condition } from '../../model/core/types.js';
import { isProblemResource, resourceRank, type SummaryResource } from '../../model/reconcile/resource-summary.js';
import type { AppResources } from '../../model/reconcile/resource-views.js';

/**
 * One table: a FleetReport of an ApplicationSet, the statically delivered Applications of a namespace,
 * or the agent-model Applications of a namespace that no ApplicationSet generates (rows from their status).
 */
export interface StatusGroup {
  readonly kind: 'ApplicationSet' | 'StaticApplications' | 'AgentApplications';
  readonly namespace: string;
  /** ApplicationSet name; empty for static applications. */
  readonly name: string;
  readonly placements?: readonly string[];
  readonly summary: FleetReportSummary;
  readonly conditions?: readonly Condition[];
  /** Rows in display order: problems first. */
  readonly rows: readonly FleetReportRow[];
  /** Rows the report left out to stay under the object size limit (the summary still counts them). */
  readonly omittedRows?: number;
  /** Static applications: the rollouts of the waved ones in this namespace. */
  readonly rollouts?: readonly RolloutSummary[];
  /** Why the table cannot be shown (an ApplicationSet without its FleetReport); the group counts as a problem. */
  readonly problem?: string;
}

/**
 * Exit codes: 0 all fine; 1 something degraded, missing, stale or unknown, or a name given matches nothing;
 * 2 the hub could not be read.
 */
export const EXIT_OK = 0;
export const EXIT_PROBLEMS = 1;
export const EXIT_ERROR = 2;

export function groupFromReport(report: FleetReport): StatusGroup {
  const status = report.status;
  const rows = status?.clusters ?? [];
  return {
    kind: 'ApplicationSet',
    namespace: report.metadata.namespace ?? '',
    name: report.spec?.applicationSet || report.metadata.name,
    placements: status?.placements ?? [],
    summary: status?.summary ?? summarize(rows),
    conditions: status?.conditions ?? [],
    rows: sortRowsProblemsFirst(rows),
    ...(status?.omittedRows ? { omittedRows: status.omittedRows } : {}),
  };
}

/**
 * An ApplicationSet that should have a FleetReport and has none: nothing is known of its clusters, so the
 * group is a problem (Unknown) that says why.
 */
export function groupFromUnreportedApplicationSet(appSet: ApplicationSet): StatusGroup {
  return {
    kind: 'ApplicationSet',
    namespace: appSet.metadata.namespace ?? '',
    name: appSet.metadata.name,
    placements: placementNames(appSet),
    summary: summarize([]),
    rows: [],
    problem: `no FleetReport for ApplicationSet ${appSet.metadata.namespace ?? ''}/${appSet.metadata.name}, so the state of its clusters is unknown: the pullfleet controller writes one for every pull ApplicationSet; check that it runs on this hub (its install is in dist/<hub>/) and what its log says about this ApplicationSet`,
  };
}

export function groupFromStaticRows(namespace: string, rows: readonly FleetReportRow[]): StatusGroup {
  return {
    kind: 'StaticApplications',
    namespace,
    name: '',
    summary: summarize(rows),
    rows: sortRowsProblemsFirst(rows),
  };
}

export function groupFromAgentRows(namespace: string, rows: readonly FleetReportRow[]): StatusGroup {
  return {
    kind: 'AgentApplications',
    namespace,
    name: '',
    summary: summarize(rows),
    rows: sortRowsProblemsFirst(rows),
  };
}

const GROUP_SORT_SUFFIX: Record<StatusGroup['kind'], string | undefined> = {
  ApplicationSet: undefined,
  StaticApplications: '~static',
  AgentApplications: '~~agent',
};

function groupHasProblems(group: StatusGroup): boolean {
  return (
    group.problem !== undefined || group.rows.some(isProblemRow) || (group.rollouts ?? []).some(rolloutHasProblems)
  );
}

/** Groups in display order: groups with problems first, then by namespace and name. */
export function sortGroups(groups: readonly StatusGroup[]): StatusGroup[] {
  const text = (group: StatusGroup): string => `${group.namespace}/${GROUP_SORT_SUFFIX[group.kind] ?? group.name}`;
  return [...groups].sort(
    (a, b) =>
      Number(groupHasProblems(b)) - Number(groupHasProblems(a)) || (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0),
  );
}

/** 1 when any row is degraded, missing, stale or unknown (or an ApplicationSet has no report), else 0. */
export function statusExitCode(groups: readonly StatusGroup[]): number {
  return groups.some(groupHasProblems) ? EXIT_PROBLEMS : EXIT_OK;
}

/** A compact age: 45s, 12m, 3h, 2d. Negative ages (clock skew) show as 0s. */
export function formatAge(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours}h`;
  return `${Math.floor(hours / 24)}d`;
}

/** Git SHAs shortened to 7 characters; other revisions (tags, chart versions) kept up to 16. */
export function shortRevision(revision: string | undefined): string {
  if (!revision) return '-';
  if (/^[0-9a-f]{40}$/.test(revision)) return revision.slice(0, 7);
  return revision.length <= 16 ? revision : `${revision.slice(0, 15)}…`;
}

export interface RenderOptions {
  readonly now: Date;
  /** ANSI colour. Callers decide (TTY and NO_COLOR); tests pass false. */
  readonly color: boolean;
  /** Longest message shown in the table. @default 80 */
  readonly messageWidth?: number;
}

type Style = 'bold' | 'red' | 'green' | 'yellow' | 'cyan' | 'gray';

/** Plain ANSI SGR codes (node:util styleText decides on its own whether stdout is a terminal; the caller already did). */
const ANSI: Record<Style, [number, number]> = {
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  gray: [90, 39],
};

function paint(style: Style, text: string): string {
  const [open, close] = ANSI[style];
  return `\u001b[${open}m${text}\u001b[${close}m`;
}

const STATE_STYLE: Record<FleetReportRow['state'], Style> = {
  Healthy: 'green',
  Progressing: 'cyan',
  Unknown: 'gray',
  Stale: 'yellow',
  Missing: 'red',
  Degraded: 'red',
};

const SYNC_STYLE: Record<string, Style> = { Synced: 'green', OutOfSync: 'yellow' };
const HEALTH_STYLE: Record<string, Style> = {
  Healthy: 'green',
  Progressing: 'cyan',
  Degraded: 'red',
  Missing: 'red',
  Suspended: 'gray',
};

interface Cell {
  readonly text: string;
  readonly style?: Style;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function clip(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, width - 1)}…`;
}

function rowMessage(row: FleetReportRow): string {
  if (row.operationMessage && (row.operationPhase === 'Failed' || row.operationPhase === 'Error'))
    return `${row.operationPhase}: ${row.operationMessage}`;
  return row.message ?? row.operationMessage ?? '';
}

function renderTable(header: readonly string[], rows: readonly Cell[][], color: boolean): string[] {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i].text.length)));
  const line = (cells: readonly Cell[], bold: boolean): string => {
    const last = cells.length - 1;
    return cells
      .map((cell, i) => {
        const padded = i === last ? cell.text : cell.text.padEnd(widths[i]);
        if (!color) return padded;
        if (bold) return paint('bold', padded);
        // Pad first, then colour, so ANSI codes never shift the columns.
        return cell.style ? paint(cell.style, cell.text) + padded.slice(cell.text.length) : padded;
      })
      .join('  ')
      .trimEnd();
  };
  return [
    line(
      header.map((text) => ({ text })),
      true,
    ),
    ...rows.map((row) => line(row, false)),
  ];
}

function summaryLine(group: StatusGroup): string {
  const s = group.summary;
  const parts = [`${s.clusters} ${s.clusters === 1 ? 'cluster' : 'clusters'}`];
  const states: Array<[number, string]> = [
    [s.healthy, 'healthy'],
    [s.progressing, 'progressing'],
    [s.degraded, 'degraded'],
    [s.missing, 'missing'],
    [s.stale, 'stale'],
    [s.unknown, 'unknown'],
  ];
  const stateText = states.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  if (stateText.length) parts.push(stateText.join(', '));
  parts.push(`${s.synced} synced, ${s.outOfSync} out of sync`);
  if (group.omittedRows) parts.push(`${group.omittedRows} least interesting rows not stored (report size limit)`);
  return parts.join(' · ');
}

function groupTitle(group: StatusGroup): string {
  if (group.kind === 'StaticApplications') return `Static applications in ${group.namespace}`;
  if (group.kind === 'AgentApplications')
    return `Agent applications in ${group.namespace} (status mirrored by the argocd-agent principal)`;
  const placements = group.placements?.length ? ` (placement ${group.placements.join(', ')})` : '';
  return `ApplicationSet ${group.namespace}/${group.name}${placements}`;
}

function conditionText(group: StatusGroup): string | undefined {
  const ready = group.conditions?.find((c) => c.type === 'Ready');
  return ready ? `Ready=${ready.status}` : undefined;
}

/** One group as a titled table. */
export function renderGroup(group: StatusGroup, options: RenderOptions): string {
  const { color, now } = options;
  const width = options.messageWidth ?? 80;
  const title = color ? paint('bold', groupTitle(group)) : groupTitle(group);
  const ready = conditionText(group);
  const lines = [`${title}${ready ? `  ${ready}` : ''}`];
  if (group.problem !== undefined) {
    lines.push(`Unknown: ${group.problem}`);
    return lines.join('\n');
  }
  lines.push(summaryLine(group));
  if (group.rows.length === 0) {
    lines.push('no clusters selected');
    return lines.join('\n');
  }
  const withApp = group.kind !== 'ApplicationSet';
  const header = [
    'CLUSTER',
    ...(withApp ? ['APPLICATION'] : []),
    'STATE',
    'SYNC',
    'HEALTH',
    'REVISION',
    'AGE',
    'MESSAGE',
  ];
  const cells = group.rows.map((row): Cell[] => {
    const feedbackAt = row.lastFeedbackTime ? Date.parse(row.lastFeedbackTime) : NaN;
    const sync = row.syncStatus ?? '-';
    const health = row.healthStatus ?? '-';
    return [
      { text: row.cluster || '-' },
      ...(withApp ? [{ text: row.application ?? '-' }] : []),
      { text: row.state, style: STATE_STYLE[row.state] },
      { text: sync, style: SYNC_STYLE[sync] },
      { text: health, style: HEALTH_STYLE[health] },
      { text: shortRevision(row.revision) },
      { text: Number.isNaN(feedbackAt) ? '-' : formatAge(now.getTime() - feedbackAt) },
      { text: clip(oneLine(rowMessage(row)), width) },
    ];
  });
  lines.push(...renderTable(header, cells, color));
  for (const rollout of group.rollouts ?? [])
    lines.push(...rolloutLines(rollout, (since) => formatAge(now.getTime() - Date.parse(since))));
  return lines.join('\n');
}

/** Every group as text, problems first, separated by blank lines. */
export function renderStatus(groups: readonly StatusGroup[], options: RenderOptions): string {
  if (groups.length === 0) return 'No fleet reports found.\n';
  return `${sortGroups(groups)
    .map((group) => renderGroup(group, options))
    .join('\n\n')}\n`;
}

/** The machine-readable document for `-o json|yaml`. */
export function statusDocument(groups: readonly StatusGroup[]): { items: StatusGroup[]; problems: number } {
  const sorted = sortGroups(groups);
  return {
    items: sorted,
    problems: sorted.reduce(
      (n, group) =>
        n +
        (group.problem !== undefined ? 1 : 0) +
        group.rows.filter(isProblemRow).length +
        (group.rollouts ?? []).filter(rolloutHasProblems).length,
      0,
    ),
  };
}

export type OutputFormat = 'table' | 'json' | 'yaml';

export function renderOutput(groups: readonly StatusGroup[], format: OutputFormat, options: RenderOptions): string {
  switch (format) {
    case 'json':
      return `${JSON.stringify(statusDocument(groups), null, 2)}\n`;
    case 'yaml':
      return toYaml(statusDocument(groups));
    default:
      return renderStatus(groups, options);
  }
}

/** Whether to colour: only on a TTY, never with NO_COLOR set (any value) or TERM=dumb; FORCE_COLOR forces it. */
export function useColor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false') return true;
  if (env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

/** What to show of the resources: filters given on the command line. */
export interface ResourceQuery {
  readonly cluster?: string;
  readonly app?: string;
  /** `kind/name` or `kind/namespace/name`; kind compared without case. */
  readonly resource?: string;
  /** Part of an image reference. */
  readonly image?: string;
}

/** One line of the resource table (also the shape of `-o json|yaml`). */
export interface ResourceRow {
  readonly cluster: string;
  readonly application: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly group?: string;
  readonly version?: string;
  readonly health?: string;
  readonly sync?: string;
  readonly image?: string;
  readonly message?: string;
  /** 1 Degraded, 2 Missing, 3 OutOfSync, 4 other attention, 5 fine (the display order). */
  readonly rank: number;
  /** Whether the row makes the exit code 1: a Degraded or Missing resource, or such ones left out. */
  readonly problem: boolean;
}

/** Why `--resource` does not parse, or undefined. */
export function resourceQueryProblem(resource: string): string | undefined {
  const parts = resource.split('/');
  if ((parts.length === 2 || parts.length === 3) && parts.every((part) => part.length > 0)) return undefined;
  return `--resource must be kind/name or kind/namespace/name (such as deployment/cart or Deployment/shop/cart), got "${resource}"`;
}

function matchesResource(resource: SummaryResource, query: string): boolean {
  const parts = query.split('/');
  const kind = parts[0].toLowerCase();
  const name = parts[parts.length - 1];
  const namespace = parts.length === 3 ? parts[1] : undefined;
  return (
    resource.kind.toLowerCase() === kind &&
    resource.name === name &&
    (namespace === undefined || resource.namespace === namespace)
  );
}

/** Whether a row is a resource or an image (not a line about what the hub cannot see). */
function isMatch(row: ResourceRow): boolean {
  return row.kind !== undefined || row.image !== undefined;
}

/** The rows to show for `apps` under `query`, problems first; under `--resource` / `--image`, matches first. */
export function resourceRows(apps: readonly AppResources[], query: ResourceQuery): ResourceRow[] {
  const rows: ResourceRow[] = [];
  const filtering = query.resource !== undefined || query.image !== undefined;
  for (const app of apps) {
    const base = { cluster: app.cluster, application: app.application };
    if (query.image !== undefined) {
      for (const image of app.images)
        if (image.includes(query.image)) rows.push({ ...base, image, rank: 5, problem: false });
    } else {
      for (const resource of app.resources) {
        if (query.resource !== undefined && !matchesResource(resource, query.resource)) continue;
        const rank = resourceRank(resource);
        rows.push({
          ...base,
          kind: resource.kind,
          ...(resource.namespace ? { namespace: resource.namespace } : {}),
          name: resource.name,
          ...(resource.group ? { group: resource.group } : {}),
          ...(resource.version ? { version: resource.version } : {}),
          ...(resource.health ? { health: resource.health } : {}),
          ...(resource.sync ? { sync: resource.sync } : {}),
          ...(resource.message ? { message: resource.message } : {}),
          rank,
          problem: isProblemResource(resource),
        });
      }
      if (app.omitted && (!filtering || app.omitted.problems))
        rows.push({ ...base, message: app.omitted.text, rank: app.omitted.rank, problem: app.omitted.problems });
    }
    // What the hub cannot see is said, also under a filter: the resource or image may be there.
    if (app.note) rows.push({ ...base, message: app.note, rank: 4, problem: false });
  }
  const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  // Under --resource or --image what matched comes first, then the apps the hub cannot see into.
  const unmatched = (row: ResourceRow): number => (filtering && !isMatch(row) ? 1 : 0);
  return rows
    .map((row, index) => ({ row, index }))
    .sort(
      (a, b) =>
        unmatched(a.row) - unmatched(b.row) ||
        a.row.rank - b.row.rank ||
        compare(a.row.cluster, b.row.cluster) ||
        compare(a.row.application, b.row.application) ||
        a.index - b.index,
    )
    .map(({ row }) => row);
}

/** 1 when a row is a problem, or a `--resource` / `--image` filter matched nothing; else 0. */
export function resourceExitCode(rows: readonly ResourceRow[], query: ResourceQuery): number {
  if (rows.some((row) => row.problem)) return EXIT_PROBLEMS;
  if (query.resource !== undefined && !rows.some((row) => row.kind !== undefined)) return EXIT_PROBLEMS;
  if (query.image !== undefined && !rows.some((row) => row.image !== undefined)) return EXIT_PROBLEMS;
  return EXIT_OK;
}

function queryTitle(query: ResourceQuery): string {
  const where = [
    ...(query.app !== undefined ? [`of application ${query.app}`] : []),
    ...(query.cluster !== undefined ? [`on cluster ${query.cluster}`] : []),
  ].join(' ');
  if (query.image !== undefined) return `Where images matching "${query.image}" run${where ? ` (apps ${where})` : ''}`;
  if (query.resource !== undefined) return `Where ${query.resource} runs${where ? ` (apps ${where})` : ''}`;
  return `Resources ${where}`;
}

function resourceSummaryLine(
  apps: readonly AppResources[],
  rows: readonly ResourceRow[],
  query: ResourceQuery,
): string {
  const resources = rows.filter((row) => row.kind !== undefined);
  const count = (test: (row: ResourceRow) => boolean) => resources.filter(test).length;
  const clusters = new Set(apps.map((app) => app.cluster)).size;
  const parts = [
    `${apps.length} ${apps.length === 1 ? 'application' : 'applications'} on ${clusters} ${clusters === 1 ? 'cluster' : 'clusters'}`,
  ];
  const states = [
    [count((row) => row.health === 'Degraded'), 'Degraded'],
    [count((row) => row.health === 'Missing'), 'Missing'],
    [count((row) => row.health === 'Progressing'), 'Progressing'],
    [count((row) => row.sync === 'OutOfSync'), 'OutOfSync'],
  ] as const;
  const stateText = states.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
  const images = new Set(apps.flatMap((app) => app.images)).size;
  const matching = new Set(rows.filter((row) => row.image !== undefined).map((row) => row.image)).size;
  parts.push(
    rows.some((row) => row.image !== undefined)
      ? `${matching} matching ${matching === 1 ? 'image' : 'images'}`
      : `${resources.length} ${resources.length === 1 ? 'resource' : 'resources'}${stateText.length ? `: ${stateText.join(', ')}` : ''}`,
  );
  if (resources.length > 0) parts.push(`${images} ${images === 1 ? 'image' : 'images'}`);
  if (query.resource !== undefined || query.image !== undefined) {
    const notes = rows.filter((row) => !isMatch(row)).length;
    if (notes > 0) parts.push(`${notes} ${notes === 1 ? 'note' : 'notes'} on what the hub cannot see (listed last)`);
  }
  return parts.join(' · ');
}

/** The resource view as one table, problems first (`--image`: which cluster and app run which matching image). */
export function renderResources(apps: readonly AppResources[], query: ResourceQuery, options: RenderOptions): string {
  const { color } = options;
  const width = options.messageWidth ?? 80;
  const rows = resourceRows(apps, query);
  const title = color ? paint('bold', queryTitle(query)) : queryTitle(query);
  const lines = [title, resourceSummaryLine(apps, rows, query)];
  if (apps.length === 0) {
    lines.push('no application found');
    return `${lines.join('\n')}\n`;
  }
  if (rows.length === 0) {
    lines.push(
      query.image !== undefined
        ? 'no matching image'
        : query.resource !== undefined
          ? 'no matching resource'
          : 'no resources reported',
    );
    return `${lines.join('\n')}\n`;
  }
  const withCluster = query.cluster === undefined;
  const withApp = !(query.app !== undefined && new Set(apps.map((app) => app.application)).size === 1);
  const header = [
    ...(withCluster ? ['CLUSTER'] : []),
    ...(withApp ? ['APPLICATION'] : []),
    ...(query.image !== undefined ? ['IMAGE'] : ['KIND', 'NAMESPACE', 'NAME', 'HEALTH', 'SYNC']),
    'MESSAGE',
  ];
  const cells = rows.map((row): Cell[] => {
    const health = row.health ?? '-';
    const sync = row.sync ?? '-';
    const resourceCells: Cell[] =
      query.image !== undefined
        ? [{ text: row.image ?? '-' }]
        : [
            { text: row.kind ?? '-' },
            { text: row.namespace ?? '-' },
            { text: row.name ?? '-' },
            { text: health, style: HEALTH_STYLE[health] },
            { text: sync, style: SYNC_STYLE[sync] },
          ];
    return [
      ...(withCluster ? [{ text: row.cluster || '-' }] : []),
      ...(withApp ? [{ text: row.application }] : []),
      ...resourceCells,
      { text: clip(oneLine(row.message ?? ''), width) },
    ];
  });
  lines.push(...renderTable(header, cells, color));
  if (query.image === undefined && query.resource === undefined) {
    const withImages = [...apps]
      .filter((app) => app.images.length > 0)
      .sort((a, b) => (`${a.cluster}/${a.application}` < `${b.cluster}/${b.application}` ? -1 : 1));
    if (withImages.length > 0) {
      lines.push('');
      lines.push(
        ...renderTable(
          [...(withCluster ? ['CLUSTER'] : []), 'APPLICATION', 'IMAGES'],
          withImages.map((app) => [
            ...(withCluster ? [{ text: app.cluster }] : []),
            { text: app.application },
            { text: app.images.join(' ') },
          ]),
          color,
        ),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The resource view in any output format. */
export function renderResourceOutput(
  apps: readonly AppResources[],
  query: ResourceQuery,
  format: OutputFormat,
  options: RenderOptions,
): string {
  if (format === 'table') return renderResources(apps, query, options);
  const rows = resourceRows(apps, query);
  const document = { query, rows, problems: rows.filter((row) => row.problem).length };
  return format === 'json' ? `${JSON.stringify(document, null, 2)}\n` : toYaml(document);
}
