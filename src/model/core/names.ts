/** Deterministic names and the Kubernetes length and syntax rules they must satisfy. */
import { createHash } from 'node:crypto';

/** Maximum length of a label value, a DNS-1123 label, and a ManifestWork name. */
export const MAX_LABEL_LENGTH = 63;
/** Maximum length of a DNS-1123 subdomain (most object names). */
export const MAX_NAME_LENGTH = 253;
/** Length of the hash suffix appended when a name has to be shortened. */
export const HASH_LENGTH = 8;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** A short, stable, DNS-safe digest of `input` (hex of SHA-256). */
export function shortHash(input: string, length = HASH_LENGTH): string {
  return createHash('sha256').update(input).digest('hex').slice(0, length);
}

/**
 * Fits `base` into `max` characters. Names that already fit are returned unchanged; longer ones keep
 * a prefix and end in `-<hash of the full name>`, so two long names with a common prefix stay distinct.
 */
export function fitName(base: string, max: number = MAX_LABEL_LENGTH): string {
  if (base.length <= max) return base;
  const prefix = base.slice(0, max - HASH_LENGTH - 1).replace(/[-.]+$/, '');
  return `${prefix}-${shortHash(base)}`;
}

/** Lower-cases and replaces every run of characters a DNS label forbids with `-`. */
export function toDnsLabel(input: string, max: number = MAX_LABEL_LENGTH): string {
  const cleaned = input
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return fitName(cleaned || 'x', max);
}

/** Why `name` is not a valid DNS-1123 label, or undefined when it is. */
export function dnsLabelProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_LABEL_LENGTH) return `is ${name.length} characters long; the limit is ${MAX_LABEL_LENGTH}`;
  if (!DNS_LABEL.test(name))
    return 'must consist of lower-case letters, digits and "-", and start and end with a letter or digit';
  return undefined;
}

/** Why `name` is not a valid DNS-1123 subdomain, or undefined when it is. */
export function dnsSubdomainProblem(name: string): string | undefined {
  if (name.length === 0) return 'must not be empty';
  if (name.length > MAX_NAME_LENGTH) return `is ${name.length} characters long; the limit is ${MAX_NAME_LENGTH}`;
  if (!DNS_SUBDOMAIN.test(name))
    return 'must consist of lower-case letters, digits, "-" and ".", and start and end with a letter or digit';
  return undefined;
}

/** Why `value` is not a valid label value, or undefined when it is. */
export function labelValueProblem(value: string): string | undefined {
  if (value.length > MAX_LABEL_LENGTH) return `is ${value.length} characters long; the limit is ${MAX_LABEL_LENGTH}`;
  if (!LABEL_VALUE.test(value))
    return 'must consist of letters, digits, "-", "_" and ".", and start and end with a letter or digit';
  return undefined;
}

/** Parses a boolean string exactly like Go's strconv.ParseBool; anything else is false. */
export function parseBool(value: string | undefined): boolean {
  return value !== undefined && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
}

/**
 * The ManifestWork name for a hub Application: `<namespace>-<name>`, derived from the app's identity
 * (never its UID, so re-creating the app keeps the name) and fitted to 63 characters.
 */
export function manifestWorkName(hubNamespace: string, appName: string): string {
  return fitName(`${hubNamespace}-${appName}`, MAX_LABEL_LENGTH);
}
