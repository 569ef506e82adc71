/**
 * `pullfleet plan`: what a change to the fleet does to the committed output. Deleting a ManifestWork
 * deletes the spoke Application (and, with the resources finalizer, its workload), so work deletions are
 * listed apart from every other change.
 */

/** An object of a synthesized tree with the file it came from. */
export interface PlannedObject {
  readonly file: string;
  readonly object: { apiVersion?: string; kind?: string; metadata?: { name?: string; namespace?: string } };
}

export interface PlanChange {
  /** `<hub>|<target>|<group>/<kind>|<namespace>/<name>` identity. */
  readonly key: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
  readonly file: string;
}

export interface FleetPlan {
  readonly added: PlanChange[];
  readonly changed: PlanChange[];
  /** Removed objects except ManifestWorks. */
  readonly removed: PlanChange[];
  /** Removed ManifestWorks: each one deletes what it delivered on its spoke. */
  readonly workDeletions: PlanChange[];
}

function identity(entry: PlannedObject): PlanChange {
  const o = entry.object;
  const apiVersion = o.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const hub = entry.file.split('/')[0];
  const target = entry.file.split('/')[1] === 'bootstrap' ? entry.file : 'hub';
  const kind = o.kind ?? '';
  const name = o.metadata?.name ?? '';
  const namespace = o.metadata?.namespace;
  return { key: `${hub}|${target}|${group}/${kind}|${namespace ?? ''}/${name}`, kind, name, file: entry.file, ...(namespace ? { namespace } : {}) };
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const byKey = (a: PlanChange, b: PlanChange) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

/** Compares the committed output (`before`) with a fresh synth (`after`). */
export function planFleet(before: readonly PlannedObject[], after: readonly PlannedObject[]): FleetPlan {
  const index = (list: readonly PlannedObject[]) => new Map(list.map((e) => [identity(e).key, { change: identity(e), text: canonical(e.object) }]));
  const old = index(before);
  const next = index(after);
  const plan: FleetPlan = { added: [], changed: [], removed: [], workDeletions: [] };
  for (const [key, entry] of next) {
    const prior = old.get(key);
    if (!prior) plan.added.push(entry.change);
    else if (prior.text !== entry.text) plan.changed.push(entry.change);
  }
  for (const [key, entry] of old) {
    if (next.has(key)) continue;
    if (entry.change.kind === 'ManifestWork') plan.workDeletions.push(entry.change);
    else plan.removed.push(entry.change);
  }
  plan.added.sort(byKey);
  plan.changed.sort(byKey);
  plan.removed.sort(byKey);
  plan.workDeletions.sort(byKey);
  return plan;
}

function describe(c: PlanChange): string {
  return `${c.kind} ${c.namespace ? `${c.namespace}/` : ''}${c.name}  (${c.file})`;
}

/** The plan as text for a terminal or a pull-request comment. */
export function formatPlan(plan: FleetPlan): string {
  const lines: string[] = [];
  if (plan.workDeletions.length) {
    lines.push(`DELETIONS ON SPOKES (${plan.workDeletions.length}): deleting these ManifestWorks deletes what they delivered`);
    for (const c of plan.workDeletions) lines.push(`  - ${describe(c)}`);
  }
  const section = (title: string, sign: string, list: PlanChange[]) => {
    if (!list.length) return;
    lines.push(`${title} (${list.length}):`);
    for (const c of list) lines.push(`  ${sign} ${describe(c)}`);
  };
  section('added', '+', plan.added);
  section('changed', '~', plan.changed);
  section('removed', '-', plan.removed);
  if (lines.length === 0) lines.push('no changes: dist/ matches fleet.config.ts');
  return `${lines.join('\n')}\n`;
}
