/**
 * The commands `pullfleet plan` gives for a move between delivery models are copied into a shell as
 * they are printed: each must be one line that the shell splits into the arguments kubectl needs.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, test } from '@jest/globals';
import { runBinary } from '../../support/cli.js';

const app = `${process.execPath} --import tsx test/fixtures/move-fleet.ts`;
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-plan-move-'));
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

/** Runs `command` with sh, a `kubectl` on PATH that prints the arguments it was given as JSON. */
function argumentsOf(command: string): string[] {
  const bin = path.join(scratch, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(
    path.join(bin, 'kubectl'),
    `#!/bin/sh\nexec "${process.execPath}" -e 'process.stdout.write(JSON.stringify(process.argv.slice(1)))' "$@"\n`,
    { mode: 0o755 },
  );
  const run = spawnSync('sh', ['-c', command], {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout) as string[];
}

describe('pullfleet plan: move instructions', () => {
  test('GIVEN step 1 of basic → agent-managed THEN the command to check the works is one line with the right resource, namespace and quoting', () => {
    const dist = path.join(scratch, 'dist');
    expect(runBinary(['synth', '-o', dist, '--app', app], { env: { PULLFLEET_TEST_MOVE: 'basic' } }).code).toBe(0);
    const plan = runBinary(['plan', dist, '--app', app], { env: { PULLFLEET_TEST_MOVE: 'agent-move' } });
    expect(plan.code).toBe(0);
    expect(plan.out).toContain('spoke east: move basic → agent-managed, step 1 of 3');
    const command = /\((kubectl get [^\n]*?) shows the two numbers equal/.exec(plan.out)?.[1];
    expect(command).toBe(
      'kubectl get manifestwork -n east -o jsonpath=\'{range .items[*]}{.metadata.name} {.metadata.generation} {.status.conditions[?(@.type=="Applied")].observedGeneration}{"\\n"}{end}\'',
    );
    expect(argumentsOf(command!)).toStrictEqual([
      'get',
      'manifestwork',
      '-n',
      'east',
      '-o',
      'jsonpath={range .items[*]}{.metadata.name} {.metadata.generation} {.status.conditions[?(@.type=="Applied")].observedGeneration}{"\\n"}{end}',
    ]);
  });
});
