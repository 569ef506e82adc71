/**
 * Label and field selectors as the Kubernetes API server parses them (the subset clients send:
 * equality, inequality, set-based `in` / `notin`, existence and non-existence).
 */

type LabelRequirement =
  | { op: 'eq'; key: string; value: string }
  | { op: 'ne'; key: string; value: string }
  | { op: 'in'; key: string; values: string[] }
  | { op: 'notin'; key: string; values: string[] }
  | { op: 'exists'; key: string }
  | { op: 'absent'; key: string };

export type LabelSelector = (labels: Record<string, string> | undefined) => boolean;
export type FieldSelector = (object: Record<string, unknown>) => boolean;

/** Splits on commas that are not inside parentheses. */
function splitTerms(text: string): string[] {
  const terms: string[] = [];
  let depth = 0;
  let current = '';
  for (const ch of text) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      terms.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  terms.push(current);
  return terms.map((t) => t.trim()).filter((t) => t.length > 0);
}

export class SelectorError extends Error {}

function parseLabelTerm(term: string): LabelRequirement {
  const setMatch = /^([^\s!=]+)\s+(in|notin)\s+\((.*)\)$/.exec(term);
  if (setMatch) {
    const values = setMatch[3]
      .split(',')
      .map((v) => v.trim())
      .filter((v) => v.length > 0);
    return setMatch[2] === 'in' ? { op: 'in', key: setMatch[1], values } : { op: 'notin', key: setMatch[1], values };
  }
  const neMatch = /^([^\s!=]+)\s*!=\s*(\S*)$/.exec(term);
  if (neMatch) return { op: 'ne', key: neMatch[1], value: neMatch[2] };
  const eqMatch = /^([^\s!=]+)\s*==?\s*(\S*)$/.exec(term);
  if (eqMatch) return { op: 'eq', key: eqMatch[1], value: eqMatch[2] };
  const absent = /^!\s*([^\s!=]+)$/.exec(term);
  if (absent) return { op: 'absent', key: absent[1] };
  if (/^[^\s!=(),]+$/.test(term)) return { op: 'exists', key: term };
  throw new SelectorError(`unable to parse requirement: ${term}`);
}

export function parseLabelSelector(text: string | null | undefined): LabelSelector {
  if (!text) return () => true;
  const requirements = splitTerms(text).map(parseLabelTerm);
  return (labels) => {
    const l = labels ?? {};
    return requirements.every((r) => {
      const has = Object.prototype.hasOwnProperty.call(l, r.key);
      switch (r.op) {
        case 'eq':
          return has && l[r.key] === r.value;
        case 'ne':
          return !has || l[r.key] !== r.value;
        case 'in':
          return has && r.values.includes(l[r.key]);
        case 'notin':
          return !has || !r.values.includes(l[r.key]);
        case 'exists':
          return has;
        case 'absent':
          return !has;
      }
    });
  };
}

function fieldAt(object: Record<string, unknown>, path: string): string {
  let cursor: unknown = object;
  for (const part of path.split('.')) {
    if (cursor === null || typeof cursor !== 'object') return '';
    cursor = (cursor as Record<string, unknown>)[part];
  }
  if (cursor === undefined || cursor === null) return '';
  return typeof cursor === 'string' ? cursor : String(cursor);
}

/** Field selectors on any dotted path (the real server allows metadata.name / metadata.namespace for every kind). */
export function parseFieldSelector(text: string | null | undefined): FieldSelector {
  if (!text) return () => true;
  const terms = splitTerms(text).map((term) => {
    const ne = /^([^\s!=]+)\s*!=\s*(.*)$/.exec(term);
    if (ne) return { path: ne[1], value: ne[2].trim(), equal: false };
    const eq = /^([^\s!=]+)\s*==?\s*(.*)$/.exec(term);
    if (eq) return { path: eq[1], value: eq[2].trim(), equal: true };
    throw new SelectorError(`invalid field selector: ${term}`);
  });
  return (object) => terms.every((t) => (fieldAt(object, t.path) === t.value) === t.equal);
}
