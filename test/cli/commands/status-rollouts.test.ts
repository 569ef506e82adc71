/**
 * `pullfleet status` shows the rollout of each waved static app under the static applications of its
 * namespace: phase, and per wave the clusters done, in flight, failed and waiting, since when; a halted
 * rollout is a problem (exit 1) and says how to resume.
 */
import { describe, expect, test } from '@jest/globals';
import { collectStatus, type StatusSource } from '../../../src/cli/commands/status.js';
import { renderOutput, statusExitCode } from '../../../src/cli/support/status-render.js';
import type { Application } from '../../../src/model/core/types.js';
import type { ConfigMapObject } from '../../../src/model/delivery/appset.js';
import { AppSource, PullApplication, Rollout } from '../../../src/constructs/index.js';
import { testFleet } from '../../support/fleet-builder.js';

const NOW = new Date('2026-11-25T12:00:00Z');

/** The waved hub Applications synth renders for app `payments` on east and west. */
function wavedApps(): Application[] {
  const { fleet, hub, spokes } = testFleet({ sets: ['prod'], spokes: ['east', 'west'] });
  const [east, west] = spokes;
  new PullApplication(hub, 'payments', {
    source: AppSource.git({ repoURL: 'https://git.example/apps.git', path: 'payments' }),
    destinationNamespace: 'payments',
    spokes: [east, west],
    rollout: Rollout.waves([{ spokes: [east] }, { rest: true }]),
  });
  return [...fleet.renderObjects().values()]
    .flat()
    .filter((o) => (o as { kind: string }).kind === 'Application') as unknown as Application[];
}

function stateMap(progress: object): ConfigMapObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'pullfleet-rollout-payments-state',
      namespace: 'argocd',
      labels: { 'pullfleet.io/rollout-app': 'payments', 'pullfleet.io/rollout-kind': 'state' },
    },
    data: { 'state.json': '{}', 'progress.json': JSON.stringify(progress) },
  };
}

function source(states: ConfigMapObject[]): StatusSource {
  return {
    description: 'https://hub.example:6443',
    listReports: async () => [],
    listPullApplications: async () => wavedApps(),
    listStaticWorks: async () => [],
    listRolloutStates: async () => structuredClone(states),
    close: () => undefined,
  };
}

describe('pullfleet status with waved static apps', () => {
  test('GIVEN a rollout in its second wave WHEN shown THEN each wave says done, in flight, failed, waiting and since when', async () => {
    const groups = await collectStatus(
      source([
        stateMap({
          phase: 'progressing',
          waves: [
            {
              name: 'wave-1',
              clusters: 1,
              done: 1,
              inFlight: 0,
              failed: 0,
              waiting: 0,
              state: 'done',
              since: '2026-11-25T11:40:00Z',
            },
            {
              name: 'wave-2',
              clusters: 1,
              done: 0,
              inFlight: 1,
              failed: 0,
              waiting: 0,
              state: 'progressing',
              since: '2026-11-25T11:58:00Z',
            },
          ],
        }),
      ]),
      { now: NOW },
    );
    const text = renderOutput(groups, 'table', { now: NOW, color: false });
    expect(text).toContain('Static applications in argocd');
    expect(text).toContain('Rollout of payments: progressing');
    expect(text).toContain(
      '  wave 1 wave-1: done, 1/1 done, 0 in flight, 0 failed, 0 waiting since 2026-11-25T11:40:00Z (20m ago)',
    );
    expect(text).toContain(
      '  wave 2 wave-2: progressing, 0/1 done, 1 in flight, 0 failed, 0 waiting since 2026-11-25T11:58:00Z (2m ago)',
    );
    expect(JSON.parse(renderOutput(groups, 'json', { now: NOW, color: false })).items[0].rollouts[0].phase).toBe(
      'progressing',
    );
  });

  test('GIVEN a halted rollout WHEN shown THEN it says so with the way to resume, and the exit code is 1', async () => {
    const groups = await collectStatus(
      source([
        stateMap({
          phase: 'halted',
          waves: [{ name: 'wave-1', clusters: 1, done: 0, inFlight: 0, failed: 1, waiting: 0, state: 'halted' }],
          halted: {
            clusters: ['east'],
            message:
              'rollout of app "payments" halted: 1 cluster failed. Set annotation pullfleet.io/rollout-resume to retry.',
          },
        }),
      ]),
      { now: NOW },
    );
    const text = renderOutput(groups, 'table', { now: NOW, color: false });
    expect(text).toContain('Rollout of payments: halted');
    expect(text).toContain('  HALTED: rollout of app "payments" halted: 1 cluster failed.');
    expect(statusExitCode(groups)).toBe(1);
  });

  test('GIVEN a rollout waiting for a hub Application that does not exist yet WHEN shown THEN the wave counts it and the rollout names it', async () => {
    const message =
      'rollout of app "payments" waits for wave "wave-1": hub Application argocd/payments-east (cluster east) does not exist.';
    const groups = await collectStatus(
      source([
        stateMap({
          phase: 'progressing',
          waves: [
            {
              name: 'wave-1',
              clusters: 0,
              done: 0,
              inFlight: 0,
              failed: 0,
              waiting: 0,
              missing: ['argocd/payments-east'],
              state: 'progressing',
            },
            { name: 'wave-2', clusters: 1, done: 0, inFlight: 0, failed: 0, waiting: 1, state: 'waiting' },
          ],
          held: { wave: 'wave-1', applications: ['argocd/payments-east'], message },
        }),
      ]),
      { now: NOW },
    );
    const text = renderOutput(groups, 'table', { now: NOW, color: false });
    expect(text).toContain(
      '  wave 1 wave-1: progressing, 0/0 done, 0 in flight, 0 failed, 0 waiting, 1 without a hub Application',
    );
    expect(text).toContain(`  WAITING: ${message}`);
  });

  test('GIVEN an unreadable state WHEN shown THEN the rollout says why instead of failing the whole status', async () => {
    const broken = stateMap({});
    broken.data['progress.json'] = 'not json';
    const groups = await collectStatus(source([broken]), { now: NOW });
    expect(renderOutput(groups, 'table', { now: NOW, color: false })).toContain(
      'Rollout of payments: unknown (ConfigMap argocd/pullfleet-rollout-payments-state holds no readable progress.json',
    );
  });
});
