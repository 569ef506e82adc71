/**
 * The project's cdk8s.yaml, as far as pullfleet reads it: `app` (the command that runs the fleet),
 * `output` (the output folder when `pullfleet synth` is given no -o), and whether it asks the cdk8s CLI for
 * more than running the app.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

export interface Cdk8sConfig {
  /** Command that runs the cdk8s app. */
  readonly app?: string;
  /** Output folder, relative to the project folder. */
  readonly output?: string;
  /**
   * Keys that ask the cdk8s CLI for more than running the app (`validations` plugins, a Helm chart through
   * `synthConfig`); without any, synth runs the app itself, as the cdk8s CLI would.
   */
  readonly cdk8sCliKeys?: readonly string[];
}

/** cdk8s.yaml keys only the cdk8s CLI acts on (validation plugins, Helm chart output). */
const CDK8S_CLI_KEYS = ['validations', 'synthConfig'] as const;

/** Reads `<cwd>/cdk8s.yaml` ({} when there is none). Throws a message naming the file and key on bad content. */
export function readCdk8sConfig(cwd: string): Cdk8sConfig {
  const file = path.join(cwd, 'cdk8s.yaml');
  if (!fs.existsSync(file)) return {};
  let doc: unknown;
  try {
    doc = parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`cdk8s.yaml is not valid YAML (${(error as Error).message.split('\n')[0]}): fix the file`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new Error('cdk8s.yaml must be a mapping (app: ..., output: ...): fix the file');
  const out: { app?: string; output?: string; cdk8sCliKeys?: string[] } = {};
  for (const key of ['app', 'output'] as const) {
    const value = (doc as Record<string, unknown>)[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || value.trim() === '')
      throw new Error(`cdk8s.yaml: ${key} is ${JSON.stringify(value)}: give a non-empty string`);
    out[key] = value;
  }
  const cliKeys = CDK8S_CLI_KEYS.filter((key) => {
    const value = (doc as Record<string, unknown>)[key];
    return value !== undefined && value !== null;
  });
  if (cliKeys.length > 0) out.cdk8sCliKeys = cliKeys;
  return out;
}
