/**
 * The terminal reconcile result: a key that failed in a way retrying cannot fix is not retried with
 * backoff, counts as terminal in the metrics, and its reason is logged once per key (again when it
 * changes, or after the key succeeded).
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { startController, type RunningController } from '../../../src/controller/runtime/manager.js';
import { WorkQueue } from '../../../src/controller/runtime/queue.js';
import { settleReconcile, TerminalRecord, type ReconcilerFactory } from '../../../src/controller/runtime/reconciler.js';
import { startFakeApiServer, type FakeApiServer } from '../../double/fake-apiserver.js';
import { ManualClock } from '../../support/clock.js';
import { waitFor } from '../../support/wait.js';

describe('settleReconcile', () => {
  let clock: ManualClock;
  let queue: WorkQueue;
  let terminals: TerminalRecord;
  beforeEach(() => {
    clock = new ManualClock();
    queue = new WorkQueue({ timers: clock });
    terminals = new TerminalRecord();
  });

  test('GIVEN a key that failed twice WHEN it returns terminal THEN its backoff is forgotten, nothing is scheduled, and the reason is to be logged', () => {
    queue.addRateLimited('argocd/app');
    queue.addRateLimited('argocd/app');
    clock.tick(60_000);
    const settled = settleReconcile('application', 'argocd/app', { terminal: 'invalid spec' }, queue, terminals);
    expect(settled).toStrictEqual({ result: 'terminal', whenIdle: false, logTerminal: 'invalid spec' });
    expect(queue.failureCount('argocd/app')).toBe(0);
    expect(queue.delayed).toBe(0);
  });

  test('GIVEN a terminal key WHEN it ends terminal again for the same reason THEN it is not logged again; a new reason is', () => {
    settleReconcile('application', 'argocd/app', { terminal: 'invalid spec' }, queue, terminals);
    expect(
      settleReconcile('application', 'argocd/app', { terminal: 'invalid spec' }, queue, terminals).logTerminal,
    ).toBeUndefined();
    expect(
      settleReconcile('application', 'argocd/app', { terminal: 'cluster gone' }, queue, terminals).logTerminal,
    ).toBe('cluster gone');
    // The same key of another reconciler is another record.
    expect(settleReconcile('rollout', 'argocd/app', { terminal: 'cluster gone' }, queue, terminals).logTerminal).toBe(
      'cluster gone',
    );
  });

  test('GIVEN a terminal key WHEN it succeeds and later fails the same way THEN the reason is logged again', () => {
    settleReconcile('application', 'argocd/app', { terminal: 'invalid spec' }, queue, terminals);
    expect(settleReconcile('application', 'argocd/app', undefined, queue, terminals)).toStrictEqual({
      result: 'success',
      whenIdle: false,
    });
    expect(terminals.size).toBe(0);
    expect(
      settleReconcile('application', 'argocd/app', { terminal: 'invalid spec' }, queue, terminals).logTerminal,
    ).toBe('invalid spec');
  });

  test('GIVEN a terminal result that also asks for a requeue WHEN settled THEN the requeue is scheduled all the same', () => {
    const settled = settleReconcile(
      'application',
      'argocd/app',
      { terminal: 'invalid spec', requeueAfterMs: 10_000, whenIdle: true },
      queue,
      terminals,
    );
    expect(settled.whenIdle).toBe(true);
    expect(queue.delayed).toBe(1);
    clock.tick(10_000);
    expect(queue.depth).toBe(1);
  });
});

describe('the manager and a terminal result', () => {
  let server: FakeApiServer;
  let controller: RunningController | undefined;
  beforeEach(async () => {
    server = await startFakeApiServer();
  });
  afterEach(async () => {
    await controller?.stop();
    controller = undefined;
    await server.close();
  });

  test('GIVEN a reconciler whose key fails terminally WHEN the controller runs it THEN it counts as terminal, is logged once, and is not retried as an error', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const runs: string[] = [];
    const doomed: ReconcilerFactory = () => ({
      name: 'doomed',
      watches: [],
      workers: 1,
      resyncKeys: () => ['argocd/broken'],
      reconcile(key) {
        runs.push(key);
        return Promise.resolve({ terminal: 'spec.source is missing: add one' });
      },
    });
    controller = await startController({
      kubeConfig: server.kubeConfig(),
      config: { leaderElection: false, clusterSecrets: false, fleetReports: false },
      logger,
      reconcilers: [doomed],
    });
    await controller.ready();
    const metrics = await waitFor('the terminal reconcile counted', async () => {
      const text = await controller!.metrics();
      return text.includes('pullfleet_reconcile_total{controller="doomed",result="terminal"} 1') ? text : undefined;
    });
    expect(metrics).toContain('pullfleet_reconcile_errors_total{controller="doomed"} 1');
    expect(metrics).not.toMatch(/pullfleet_reconcile_total\{controller="doomed",result="(error|success)"\}/);
    expect(runs).toStrictEqual(['argocd/broken']);
    const doomedLines = lines.filter((line) => line.controller === 'doomed');
    expect(doomedLines).toStrictEqual([
      expect.objectContaining({
        key: 'argocd/broken',
        reason: 'spec.source is missing: add one',
        msg: 'reconcile failed permanently: not retried until its objects change',
      }),
    ]);
  });
});
