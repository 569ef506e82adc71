/**
 * Operating the controller: `--version`, `--bind-address` (the address of /metrics, /healthz and /readyz)
 * and the count of hub Applications by condition that the feedback-stale and delivery-error alerts read.
 */
import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { destination, pino } from 'pino';
import { buildCommand, configFromOptions } from '../../../src/controller/cli.js';
import { resolveConfig } from '../../../src/controller/runtime/config.js';
import { startController, type RunningController } from '../../../src/controller/runtime/manager.js';
import { COUNTED_CONDITIONS, countConditions } from '../../../src/controller/runtime/metrics.js';
import type { Application } from '../../../src/model/core/types.js';
import { startFakeApiServer, type FakeApiServer } from '../../double/fake-apiserver.js';
import { freePort } from '../../support/envtest.js';

const silent = pino({ level: 'silent' }, destination(2));
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

function parsed(args: string[], env: NodeJS.ProcessEnv = {}) {
  const command = buildCommand(env)
    .exitOverride()
    .configureOutput({ writeErr: () => undefined });
  command.parse(args, { from: 'user' });
  return resolveConfig(configFromOptions(command.opts()));
}

/** GET http://<host>:<port><path>: the status, or the error code of a refused connection. */
function get(host: string, port: number, path: string): Promise<{ status?: number; body?: string; error?: string }> {
  return new Promise((resolve) => {
    const req = request({ host, port, path, timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
    req.end();
  });
}

describe('pullfleet-controller --version', () => {
  test('prints the package version and exits 0', () => {
    const result = spawnSync(process.execPath, ['bin/pullfleet-controller.js', '--version'], { encoding: 'utf8' });
    expect({ status: result.status, stdout: result.stdout }).toStrictEqual({ status: 0, stdout: `${version}\n` });
  });
});

describe('--bind-address', () => {
  test('defaults to every IPv4 interface, as before the flag', () => {
    expect(parsed([]).httpHost).toBe('0.0.0.0');
  });

  test('takes an address from the flag, over PULLFLEET_BIND_ADDRESS', () => {
    expect(parsed(['--bind-address=127.0.0.1']).httpHost).toBe('127.0.0.1');
    expect(parsed([], { PULLFLEET_BIND_ADDRESS: '::' }).httpHost).toBe('::');
    expect(parsed(['--bind-address', '[::1]'], { PULLFLEET_BIND_ADDRESS: '::' }).httpHost).toBe('::1');
    expect(parsed(['--bind-address=metrics.internal']).httpHost).toBe('metrics.internal');
  });

  test('fails when the value is not an address', () => {
    expect(() => parsed(['--bind-address=0.0.0.0:8080'])).toThrow(
      'expected an IP address or host name such as 0.0.0.0, :: or 127.0.0.1, got "0.0.0.0:8080"',
    );
    expect(() => buildCommand({ PULLFLEET_BIND_ADDRESS: 'a b' })).toThrow(
      'environment variable PULLFLEET_BIND_ADDRESS',
    );
  });

  describe('the endpoints listen on that address only', () => {
    let server: FakeApiServer;
    let controller: RunningController | undefined;
    let port: number;

    beforeAll(async () => {
      server = await startFakeApiServer();
      port = await freePort();
      controller = await startController({
        kubeConfig: server.kubeConfig(),
        config: { ...parsed(['--bind-address=127.0.0.2', '--leader-elect=false']), httpPort: port },
        logger: silent,
      });
      await controller.ready();
    });

    afterAll(async () => {
      await controller?.stop();
      await server.close();
    });

    test('answers on the bound address and refuses connections on another', async () => {
      expect(await get('127.0.0.2', port, '/healthz')).toStrictEqual({ status: 200, body: 'ok\n' });
      expect(await get('127.0.0.1', port, '/healthz')).toStrictEqual({ error: 'ECONNREFUSED' });
    });

    test('/metrics exports the count of hub Applications by condition, 0 for each counted type on an empty hub', async () => {
      const { body } = await get('127.0.0.2', port, '/metrics');
      for (const type of COUNTED_CONDITIONS)
        expect(body).toContain(`pullfleet_applications_with_condition{type="${type}"} 0\n`);
    });
  });
});

describe('countConditions', () => {
  const app = (...types: string[]): Pick<Application, 'status'> => ({
    status: { conditions: types.map((type) => ({ type, message: 'm' })) },
  });

  test('counts each Application once per counted condition type, and 0 for the types none carries', () => {
    const counts = countConditions([
      app('FeedbackStaleWarning', 'DeliveryError'),
      app('FeedbackStaleWarning', 'FeedbackStaleWarning'),
      app('SkipReconcileWarning'),
      { status: undefined },
      app(),
    ]);
    expect(Object.fromEntries(counts)).toStrictEqual({
      DeliveryError: 1,
      FeedbackStaleWarning: 2,
      InvalidFeedbackWarning: 0,
      OperationPendingWarning: 0,
      RolloutHalted: 0,
    });
  });
});
