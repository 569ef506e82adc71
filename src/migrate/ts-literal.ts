/**
 * TypeScript source for JSON-like data, as the migrate commands write it into generated fleet code:
 * single-quoted strings, bare keys where allowed, keys in the order given, one line while it fits.
 */

/** An identifier that can stand as a bare object key. */
export const IDENT = /^[A-Za-z_$][\w$]*$/;

/** Code written as it is inside a literal (a factory call, an enum member). */
export class TsCode {
  constructor(readonly code: string) {}
}

/** How {@link tsLiteral} writes what JSON alone does not decide. */
export interface TsLiteralOptions {
  /** Widest literal kept on one line. @default 100 */
  readonly width?: number;
  /** What `null` becomes. @default 'null' */
  readonly nullAs?: 'null' | 'undefined';
}

/** `value` as a TypeScript literal; a {@link TsCode} is written as its code, indented with its place. */
export function tsLiteral(value: unknown, indent = '', options: TsLiteralOptions = {}): string {
  const width = options.width ?? 100;
  if (value instanceof TsCode) return value.code.split('\n').join(`\n${indent}`);
  if (value === null) return options.nullAs ?? 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string')
    return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t')}'`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const items = value.map((v) => tsLiteral(v, inner, options));
    const flat = `[${items.join(', ')}]`;
    return flat.length <= width && !flat.includes('\n')
      ? flat
      : `[\n${items.map((i) => `${inner}${i},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  const parts = entries.map(([k, v]) => `${IDENT.test(k) ? k : tsLiteral(k)}: ${tsLiteral(v, inner, options)}`);
  const flat = `{ ${parts.join(', ')} }`;
  return flat.length <= width && !flat.includes('\n')
    ? flat
    : `{\n${parts.map((p) => `${inner}${p},`).join('\n')}\n${indent}}`;
}
