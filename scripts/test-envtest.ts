/**
 * `npm run test:envtest [-- <jest args>]`: the real-server suites (test/envtest/), on one API server for
 * the whole run.
 *
 * - With KUBEBUILDER_ASSETS (`export KUBEBUILDER_ASSETS=$(../shared/envtest/setup)`), starts etcd and
 *   kube-apiserver on free loopback ports (test/support/envtest.ts), installs the CRDs, runs jest with
 *   PULLFLEET_E2E_KUBECONFIG pointing at it, and stops both processes afterwards, also on failure and
 *   Ctrl-C. A loopback control endpoint (PULLFLEET_ENVTEST_CONTROL) lets suites restart the API server.
 * - With PULLFLEET_E2E_KUBECONFIG instead, runs the suites against that cluster.
 * - With neither, prints how to enable them and exits 0; under CI=true (or PULLFLEET_ENVTEST_REQUIRED=1)
 *   that is a failure, and so is a run in which any real-server test was skipped.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENVTEST_SKIP_MESSAGE, startEnvtest, type Envtest } from '../test/support/envtest.js';
import { installCrds, loadKubeConfig } from '../test/support/envtest-cluster.js';

const required = process.env.CI === 'true' || process.env.PULLFLEET_ENVTEST_REQUIRED === '1';
const jestArgs = process.argv.slice(2);
/** The jest config of the suites run on the server (`npm run test:ocm` names its own). */
const jestConfig = process.env.PULLFLEET_JEST_CONFIG || 'jest.envtest.config.js';

function say(line: string): void {
  process.stderr.write(`test:envtest: ${line}\n`);
}

/** Serves POST /apiserver/{restart,stop,start} on loopback, one at a time. */
function controlServer(env: Envtest): Promise<{ server: Server; url: string }> {
  let busy: Promise<void> = Promise.resolve();
  const actions: Record<string, () => Promise<void>> = {
    '/apiserver/restart': () => env.restartApiServer(),
    '/apiserver/stop': () => env.stopApiServer(),
    '/apiserver/start': () => env.startApiServer(),
  };
  const server = createServer((req, res) => {
    const action = req.method === 'POST' ? actions[req.url ?? ''] : undefined;
    if (!action) {
      res.writeHead(404).end('unknown control action');
      return;
    }
    busy = busy.then(action).then(
      () => void res.writeHead(200).end('ok'),
      (error: unknown) => void res.writeHead(500).end(String((error as Error)?.message ?? error)),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` });
    }),
  );
}

function runJest(env: NodeJS.ProcessEnv, resultsFile: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        '--experimental-vm-modules',
        'node_modules/jest/bin/jest.js',
        '-c',
        jestConfig,
        '--json',
        `--outputFile=${resultsFile}`,
        ...jestArgs,
      ],
      { stdio: 'inherit', env },
    );
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
    process.on('SIGINT', forward('SIGINT'));
    process.on('SIGTERM', forward('SIGTERM'));
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Fails a required run in which real-server tests were skipped (or none ran). */
function checkNothingSkipped(resultsFile: string): string | undefined {
  const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
    numTotalTests: number;
    numPendingTests: number;
    numPassedTests: number;
    numFailedTests: number;
  };
  say(
    `${results.numPassedTests} passed, ${results.numFailedTests} failed, ${results.numPendingTests} skipped on the real API server`,
  );
  if (results.numTotalTests === 0) return 'no real-server test ran';
  if (results.numPendingTests > 0) return `${results.numPendingTests} real-server test(s) were skipped`;
  return undefined;
}

async function main(): Promise<number> {
  const assets = process.env.KUBEBUILDER_ASSETS;
  const external = process.env.PULLFLEET_E2E_KUBECONFIG;
  if (!assets && !external) {
    say(ENVTEST_SKIP_MESSAGE);
    if (required) {
      say('CI requires the real-server suites: set KUBEBUILDER_ASSETS');
      return 1;
    }
    return 0;
  }
  const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-envtest-run-'));
  const resultsFile = join(scratch, 'results.json');
  let env: Envtest | undefined;
  let control: Server | undefined;
  try {
    const childEnv: NodeJS.ProcessEnv = { ...process.env };
    if (external) {
      say(`against the cluster in ${external}`);
      await installCrds(loadKubeConfig(external));
    } else {
      const started = Date.now();
      env = await startEnvtest();
      await installCrds(loadKubeConfig(env.kubeconfigPath));
      const ctl = await controlServer(env);
      control = ctl.server;
      childEnv.PULLFLEET_E2E_KUBECONFIG = env.kubeconfigPath;
      childEnv.PULLFLEET_ENVTEST_CONTROL = ctl.url;
      say(
        `kube-apiserver ${env.server} ready with CRDs in ${((Date.now() - started) / 1000).toFixed(1)} s (data in ${env.dir})`,
      );
    }
    const code = await runJest(childEnv, resultsFile);
    let skipped: string | undefined;
    try {
      skipped = checkNothingSkipped(resultsFile);
    } catch (error) {
      skipped = `jest wrote no results (${(error as Error).message})`;
    }
    if (code === 0 && skipped && required) {
      say(`${skipped}; CI requires every real-server test to run`);
      return 1;
    }
    return code;
  } finally {
    control?.close();
    await env?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    say(String((error as Error)?.stack ?? error));
    process.exit(1);
  },
);
