/**
 * `pullfleet status` rendering: pure functions from fleet reports to text, JSON or YAML, and the exit
 * code. Reading the hub lives in status.ts; everything here is golden-testable.
 */
import { stringify as toYaml } from 'yaml';
import {
  isProblemRow,
  sortRowsProblemsFirst,
  summarize,
  type FleetReport,
  type FleetReportRow,
  type FleetReportSummary,
} from '../../model/report/report.js';
import type { Condition } from '../../model/core/types.js';

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
}

/** Exit codes: 0 all fine, 1 something degraded, missing or stale, 2 the hub could not be read. */
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
  return group.rows.some(isProblemRow);
}

/** Groups in display order: groups with problems first, then by namespace and name. */
export function sortGroups(groups: readonly StatusGroup[]): StatusGroup[] {
  const text = (group: StatusGroup): string => `${group.namespace}/${GROUP_SORT_SUFFIX[group.kind] ?? group.name}`;
  return [...groups].sort(
    (a, b) =>
      Number(groupHasProblems(b)) - Number(groupHasProblems(a)) || (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0),
  );
}

/** 1 when any row is degraded, missing or stale, else 0. */
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
  const lines = [`${title}${ready ? `  ${ready}` : ''}`, summaryLine(group)];
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
  return { items: sorted, problems: sorted.reduce((n, group) => n + group.rows.filter(isProblemRow).length, 0) };
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
