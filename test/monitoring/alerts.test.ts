/**
 * The alerts ControllerInstall renders, checked by Prometheus' own tool: `promtool check rules` on the rules
 * file written from the rendered PrometheusRule, and `promtool test rules` with the series of
 * alerts.promtool.yaml, which make each alert fire and not fire. Without promtool these two tests skip
 * (`npm test` on a machine without the Debian `prometheus` package); the CI stage "monitoring" installs it
 * and sets PULLFLEET_MONITORING_REQUIRED=1, which turns a missing promtool into a failure.
 *
 * The tests that need no promtool hold the rules to what the controller exports and the docs describe.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, test } from '@jest/globals';
import { Chart, Testing } from 'cdk8s';
import { parse } from 'yaml';
import { ControllerInstall } from '../../src/constructs/controller-install.js';
import { ControllerMetrics } from '../../src/controller/runtime/metrics.js';
import {
  MONITORING_REQUIRED,
  RULES_UNDER_TEST,
  findTool,
  renderRuleSpec,
  writeRuleFile,
} from '../support/monitoring.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = join(HERE, '..', '..');
const PROMTOOL_TESTS = join(HERE, 'alerts.promtool.yaml');
const run = promisify(execFile);

const promtool = findTool('promtool');
if (!promtool && MONITORING_REQUIRED)
  throw new Error('promtool is not installed: the monitoring stage needs the Debian package prometheus');
const withPromtool = promtool ? test : test.skip;
if (!promtool)
  process.stderr.write('alerts.test.ts: promtool not found, its tests skip (apt-get install prometheus to run them)\n');

type Rule = { alert: string; expr: string };
const rulesOf = (spec: Record<string, unknown>) =>
  (spec as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((g) => g.rules);

const scratch = mkdtempSync(join(tmpdir(), 'pullfleet-alerts-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the controller alerts under promtool', () => {
  withPromtool('promtool check rules accepts the rules file written from the rendered PrometheusRule', async () => {
    const file = join(scratch, 'check-rules.yaml');
    writeRuleFile(file, { shards: 2, monitoring: {} });
    const { stdout } = await run(promtool!, ['check', 'rules', file]);
    expect(stdout).toContain('SUCCESS: 12 rules found');
  });

  withPromtool('promtool test rules: every alert fires on its series and stays quiet on healthy ones', async () => {
    // GIVEN the rules of the install under test beside a copy of the promtool tests
    writeRuleFile(join(scratch, 'pullfleet-rules.yaml'));
    copyFileSync(PROMTOOL_TESTS, join(scratch, 'alerts.promtool.yaml'));
    // WHEN promtool runs them
    const result = await run(promtool!, ['test', 'rules', 'alerts.promtool.yaml'], { cwd: scratch }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: `${error.stdout}${error.stderr}`,
      }),
    );
    // THEN every case passes
    expect(result).toStrictEqual({ code: 0, stdout: expect.stringContaining('SUCCESS') });
  });
});

describe('the controller alerts', () => {
  test('every alert the install renders is tested firing by alerts.promtool.yaml, and quiet when healthy', () => {
    const alerts = rulesOf(renderRuleSpec()).map((r) => r.alert);
    const tests = (
      parse(readFileSync(PROMTOOL_TESTS, 'utf8')) as {
        tests: Array<{ name: string; alert_rule_test: Array<{ alertname: string; exp_alerts: unknown[] }> }>;
      }
    ).tests;
    const fired = new Set(
      tests.flatMap((t) => t.alert_rule_test.filter((c) => c.exp_alerts.length > 0).map((c) => c.alertname)),
    );
    const quiet = new Set(
      tests
        .find((t) => t.name === 'healthy install raises nothing')!
        .alert_rule_test.filter((c) => c.exp_alerts.length === 0)
        .map((c) => c.alertname),
    );
    expect(alerts.filter((a) => !fired.has(a))).toStrictEqual([]);
    expect(alerts.filter((a) => !quiet.has(a))).toStrictEqual([]);
    expect(RULES_UNDER_TEST.shards).toBeGreaterThan(1); // so the shard alert is among them
  });

  test('every metric an alert or a dashboard panel reads is one the controller exports', async () => {
    // GIVEN the controller's registry (its own metrics and the process metrics) and Prometheus' `up`
    const registry = new ControllerMetrics().registry;
    const exported = new Set(['up']);
    for (const metric of await registry.getMetricsAsJSON()) {
      exported.add(metric.name);
      if (String(metric.type) === 'histogram')
        for (const suffix of ['_bucket', '_sum', '_count']) exported.add(`${metric.name}${suffix}`);
    }
    // WHEN the names are taken from every expression
    const chart = new Chart(Testing.app(), 'hub');
    new ControllerInstall(chart, 'Controller', { shards: 3, monitoring: {} });
    const objects = Testing.synth(chart) as Array<{ kind: string; spec?: unknown; data?: Record<string, string> }>;
    const exprs = [
      ...rulesOf(objects.find((o) => o.kind === 'PrometheusRule')!.spec as Record<string, unknown>).map((r) => r.expr),
      ...(
        JSON.parse(
          objects.find((o) => o.kind === 'ConfigMap' && o.data?.['pullfleet-controller.json'])!.data![
            'pullfleet-controller.json'
          ],
        ) as { panels: Array<{ targets: Array<{ expr: string }> }> }
      ).panels.flatMap((p) => p.targets.map((t) => t.expr)),
    ];
    const read = new Set(exprs.flatMap((expr) => [...expr.matchAll(/\b(pullfleet_[a-z_]+|up)\{/g)].map((m) => m[1])));
    // THEN each is exported
    expect([...read].filter((name) => !exported.has(name))).toStrictEqual([]);
    expect(read.size).toBeGreaterThan(15);
  });

  test('docs/controller/metrics.md has a section for every alert, the anchor its runbook_url points at', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'controller', 'metrics.md'), 'utf8');
    const headings = new Set([...doc.matchAll(/^### (\w+)$/gm)].map((m) => m[1]));
    const alerts = rulesOf(renderRuleSpec()).map((r) => r.alert);
    expect(alerts.filter((a) => !headings.has(a))).toStrictEqual([]);
  });
});
