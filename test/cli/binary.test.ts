/**
 * The commands as users run them: `node bin/pullfleet.js …`, the file npm links as `pullfleet`. Every
 * command README.md and the pages under docs/ show answers from the binary (one registry: the binary and
 * the in-process runner of the tests, src/cli/main.ts, both build from src/cli/program.ts). The
 * cluster-facing commands are run against a real API server in test/envtest/cli.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { allCommands, buildProgram } from '../../src/cli/main.js';

const BIN = resolve('bin/pullfleet.js');
const tmp = mkdtempSync(join(tmpdir(), 'pullfleet-binary-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function pullfleet(args: readonly string[]): { code: number | null; out: string; err: string } {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, NO_COLOR: '1' },
  });
  if (result.error) throw result.error;
  return { code: result.status, out: result.stdout, err: result.stderr };
}

/** README.md and every Markdown page under docs/ except the generated API reference (docs/api/). */
function documentationPages(): string[] {
  const pages = ['README.md'];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (full !== join('docs', 'api')) walk(full);
      } else if (entry.name.endsWith('.md')) pages.push(full);
    }
  };
  walk('docs');
  return pages;
}

/** The lines of the shell blocks (```sh, ```console, ```bash, ```shell) of a Markdown page. */
function shellLines(page: string): string {
  return [...page.matchAll(/^```(?:sh|console|bash|shell)\n([\s\S]*?)^```/gm)].map((m) => m[1]).join('\n');
}

const COMMAND = /(?:npx (?:--no-install )?|`)pullfleet ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g;
const SHELL_COMMAND = /^(?:\$ )?pullfleet ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/gm;

/**
 * `pullfleet <command> [<subcommand>]` as README.md and docs/ write them: after `npx` or in inline code
 * anywhere, and at the start of a line (or after `$ `) in shell blocks.
 */
async function documentedCommands(): Promise<string[]> {
  const program = await buildProgram();
  const found = new Set<string>();
  const matches = documentationPages().flatMap((file) => {
    const page = readFileSync(file, 'utf8');
    return [...page.matchAll(COMMAND), ...shellLines(page).matchAll(SHELL_COMMAND)];
  });
  for (const match of matches) {
    const [, command, sub] = match;
    const known = program.commands.find((c) => c.name() === command);
    if (!known) {
      found.add(command);
      continue;
    }
    const subcommand = sub ? known.commands.find((c) => c.name() === sub) : undefined;
    found.add(subcommand ? `${command} ${sub}` : command);
  }
  return [...found].sort();
}

describe('the pullfleet binary', () => {
  test('--help lists every registered command, and the registry is the one the binary runs', async () => {
    const help = pullfleet(['--help']);
    expect(help.code).toBe(0);
    const names = (await buildProgram()).commands.map((c) => c.name());
    expect(names).toStrictEqual(['init', 'synth', 'validate', 'plan', 'status', 'inventory', 'migrate']);
    expect(await allCommands()).toHaveLength(names.length);
    for (const name of names) expect(help.out).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  });

  test('every command README.md and docs/ show answers --help from the binary (none is an unknown command)', async () => {
    const commands = await documentedCommands();
    expect(commands).toEqual(
      expect.arrayContaining([
        'init',
        'synth',
        'validate',
        'plan',
        'status',
        'inventory pull',
        'inventory diff',
        'migrate subscriptions',
      ]),
    );
    for (const command of commands) {
      const result = pullfleet([...command.split(' '), '--help']);
      expect({ command, code: result.code, err: result.err }).toStrictEqual({ command, code: 0, err: '' });
      expect(result.out).toContain(`Usage: pullfleet ${command}`);
    }
  });

  test('status --resource that does not parse is a usage error (exit 2) saying what it must be, before any cluster is asked', () => {
    const result = pullfleet(['status', '--kubeconfig', join(tmp, 'no-such-kubeconfig'), '--resource', 'deployment']);
    expect(result.code).toBe(2);
    expect(result.out).toBe('');
    expect(result.err).toContain(
      '--resource must be kind/name or kind/namespace/name (such as deployment/cart or Deployment/shop/cart), got "deployment"',
    );
    expect(result.err).not.toContain('    at ');
  });

  test('migrate subscriptions translates ACM Subscription YAML from the binary into the golden code and report', () => {
    const output = join(tmp, 'migrated.ts');
    const report = join(tmp, 'report.txt');
    const result = pullfleet([
      'migrate',
      'subscriptions',
      'test/migrate/fixtures/helm-placement.yaml',
      '-o',
      output,
      '--report',
      report,
      '--import',
      '../../../src/constructs/index.js',
    ]);
    expect(result).toStrictEqual({ code: 0, out: '', err: `wrote ${output} and ${report}\n` });
    expect(readFileSync(output, 'utf8')).toBe(readFileSync('test/migrate/fixtures/helm-placement.golden.ts', 'utf8'));
    expect(readFileSync(report, 'utf8')).toBe(readFileSync('test/migrate/fixtures/helm-placement.report.txt', 'utf8'));
  });

  test.each([
    ['/proc/migrated.ts', 'proc'],
    ['/sys/migrated.ts', 'sysfs'],
  ])(
    'migrate subscriptions -o %s fails naming the file, the folder and what to do, not a bare ENOENT or EPERM',
    (output, type) => {
      if (!existsSync(dirname(output))) return; // not Linux
      const result = pullfleet([
        'migrate',
        'subscriptions',
        'test/migrate/fixtures/helm-placement.yaml',
        '-o',
        output,
        '--report',
        join(tmp, 'proc-report.txt'),
      ]);
      expect(result.code).not.toBe(0);
      expect(result.err).toContain(`cannot write ${output}: writing in ${dirname(output)} failed (`);
      expect(result.err).toContain(
        `${dirname(output)} is a ${type} file system of the kernel that holds no ordinary files or folders: choose a file in your project`,
      );
      expect(existsSync(output)).toBe(false);
    },
  );

  test('inventory pull without a reachable hub exits 2 from the binary, naming the server, and writes nothing', () => {
    const kubeconfig = join(tmp, 'nowhere.kubeconfig');
    const file = join(tmp, 'inventory', 'hub.yaml');
    const config = [
      'apiVersion: v1',
      'kind: Config',
      'clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]',
      'users: [{name: u, user: {token: t}}]',
      'contexts: [{name: x, context: {cluster: c, user: u}}]',
      'current-context: x',
      '',
    ].join('\n');
    writeFileSync(kubeconfig, config);
    const result = pullfleet([
      'inventory',
      'pull',
      '--kubeconfig',
      kubeconfig,
      '--hub',
      'hub',
      '-o',
      file,
      '--timeout',
      '5',
    ]);
    expect(result.code).toBe(2);
    expect(result.out + result.err).toContain('127.0.0.1:1');
    expect(() => readFileSync(file)).toThrow();
  });
});
