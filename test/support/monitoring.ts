/**
 * The controller install's monitoring as files for Prometheus' own tools: the PrometheusRule that
 * ControllerInstall renders, its `spec` written out as a rules file (what the Prometheus Operator hands
 * Prometheus), and where promtool and prometheus are.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Chart, Testing } from 'cdk8s';
import { stringify } from 'yaml';
import { ControllerInstall, type ControllerInstallProps } from '../../src/constructs/controller-install.js';

/** The install the rule tests (test/monitoring/alerts.promtool.yaml) are written against. */
export const RULES_UNDER_TEST: ControllerInstallProps = {
  namespace: 'pullfleet-system',
  shards: 3,
  monitoring: { runbookUrl: 'https://runbooks.example.com/pullfleet' },
};

/** The rendered PrometheusRule's `spec` (`{ groups: [...] }`), the content of a Prometheus rules file. */
export function renderRuleSpec(props: ControllerInstallProps = RULES_UNDER_TEST): Record<string, unknown> {
  const chart = new Chart(Testing.app(), 'hub');
  new ControllerInstall(chart, 'Controller', props);
  const rule = Testing.synth(chart).find((o: { kind?: string }) => o.kind === 'PrometheusRule') as
    { spec: Record<string, unknown> } | undefined;
  if (!rule) throw new Error('ControllerInstall rendered no PrometheusRule: give it monitoring with alerts');
  return rule.spec;
}

/** Writes the rules file of `props` (YAML) to `file`. */
export function writeRuleFile(file: string, props: ControllerInstallProps = RULES_UNDER_TEST): void {
  writeFileSync(file, stringify(renderRuleSpec(props), { lineWidth: 0 }));
}

/** The path of `tool` on PATH, or undefined. */
export function findTool(tool: 'promtool' | 'prometheus'): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Set by the CI stage that installs Prometheus (.ci/run, "monitoring"): the monitoring tests must run, and
 * a missing promtool, prometheus or API server fails them instead of skipping them.
 */
export const MONITORING_REQUIRED = process.env.PULLFLEET_MONITORING_REQUIRED === '1';
