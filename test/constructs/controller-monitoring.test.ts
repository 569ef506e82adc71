/** ControllerInstall's opt-in monitoring: ServiceMonitor, PrometheusRule and Grafana dashboard. */
import { describe, expect, test } from '@jest/globals';
import { ApiObject, Chart, Duration, JsonPatch, Testing } from 'cdk8s';
import { ControllerInstall, type ControllerInstallProps } from '../../src/constructs/controller-install.js';
import { checkObject } from '../../src/validate/schema.js';
import { pullfleetVersion } from '../../src/version.js';
import { allObjects, smallFleet, synthError } from './helpers.js';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  [key: string]: any;
};

function render(props: ControllerInstallProps = {}): { install: ControllerInstall; objects: Obj[] } {
  const chart = new Chart(Testing.app(), 'hub');
  const install = new ControllerInstall(chart, 'Controller', props);
  return { install, objects: Testing.synth(chart) as Obj[] };
}

const kinds = (objects: Obj[]) => objects.map((o) => o.kind);
const find = (objects: Obj[], kind: string) => objects.find((o) => o.kind === kind)!;
type Rule = {
  alert: string;
  expr: string;
  for: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
};
const rules = (objects: Obj[]) => find(objects, 'PrometheusRule').spec.groups[0].rules as Rule[];

describe('ControllerInstall monitoring', () => {
  test('without monitoring the install renders no monitoring object', () => {
    // GIVEN an install with its defaults
    const { install, objects } = render();
    // THEN none of the three objects exists, and the install is what it always was
    expect(kinds(objects).filter((k) => ['ServiceMonitor', 'PrometheusRule'].includes(k))).toStrictEqual([]);
    expect(objects.filter((o) => o.metadata.labels?.grafana_dashboard)).toStrictEqual([]);
    expect([install.serviceMonitor, install.prometheusRule, install.dashboard]).toStrictEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  test('monitoring: {} renders a ServiceMonitor of the metrics Service', () => {
    // GIVEN monitoring with its defaults
    const { objects } = render({ monitoring: {} });
    // THEN the ServiceMonitor scrapes the metrics port of the Service every 30 s
    expect(find(objects, 'ServiceMonitor')).toStrictEqual({
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: {
        name: 'pullfleet-controller',
        namespace: 'pullfleet-system',
        labels: {
          'app.kubernetes.io/name': 'pullfleet-controller',
          'app.kubernetes.io/component': 'controller',
          'app.kubernetes.io/managed-by': 'pullfleet',
        },
        annotations: { 'pullfleet.io/construct-path': 'hub/Controller/ServiceMonitor' },
      },
      spec: {
        selector: {
          matchLabels: {
            'app.kubernetes.io/name': 'pullfleet-controller',
            'app.kubernetes.io/component': 'controller',
          },
        },
        namespaceSelector: { matchNames: ['pullfleet-system'] },
        endpoints: [{ port: 'metrics', path: '/metrics', scheme: 'http', interval: '30s' }],
      },
    });
  });

  test('the ServiceMonitor selects exactly the metrics Service, whose name is the job the alerts select', () => {
    const { objects } = render({ namespace: 'platform', monitoring: {} });
    const monitor = find(objects, 'ServiceMonitor');
    const services = objects.filter(
      (o) =>
        o.kind === 'Service' &&
        Object.entries(monitor.spec.selector.matchLabels as Record<string, string>).every(
          ([k, v]) => o.metadata.labels?.[k] === v,
        ),
    );
    expect(services.map((s) => s.metadata.name)).toStrictEqual(['pullfleet-controller-metrics']);
    expect(services[0].spec.ports.map((p: { name: string }) => p.name)).toContain(monitor.spec.endpoints[0].port);
    for (const rule of rules(objects))
      expect(rule.expr).toContain('job="pullfleet-controller-metrics",namespace="platform"');
  });

  test('every alert has a for duration, a severity, a summary, a description and a runbook link to its section', () => {
    const { objects } = render({ monitoring: {} });
    const all = rules(objects);
    expect(all.map((r) => r.alert)).toStrictEqual([
      'PullfleetControllerDown',
      'PullfleetNoLeader',
      'PullfleetLeaseUnreachable',
      'PullfleetControllerRestarting',
      'PullfleetNotCaughtUp',
      'PullfleetReconcileErrors',
      'PullfleetApiThrottled',
      'PullfleetClientSaturated',
      'PullfleetStatusWriteBackSlow',
      'PullfleetFeedbackStale',
      'PullfleetDeliveryErrors',
    ]);
    for (const rule of all) {
      expect(rule.for).toMatch(/^\d+m$/);
      expect(['critical', 'warning']).toContain(rule.labels.severity);
      expect(rule.annotations.summary).toMatch(/\.$/);
      expect(rule.annotations.description.length).toBeGreaterThan(40);
      expect(rule.annotations.runbook_url).toBe(
        `https://github.com/pullfleet/pullfleet/blob/v${pullfleetVersion()}/docs/controller/metrics.md#${rule.alert.toLowerCase()}`,
      );
    }
  });

  test('a sharded install also alerts on shards no replica holds, counting its own shards', () => {
    const { objects } = render({ shards: 4, monitoring: {} });
    const shard = rules(objects).find((r) => r.alert === 'PullfleetShardsUnheld')!;
    expect(shard.expr).toContain('< 4');
    expect(shard.labels.severity).toBe('critical');
  });

  test('the dashboard is a ConfigMap the Grafana sidecar picks up, with panels of this install only', () => {
    const { objects } = render({ namespace: 'platform', monitoring: {} });
    const configMap = objects.find(
      (o) => o.kind === 'ConfigMap' && o.metadata.name === 'pullfleet-controller-dashboard',
    )!;
    expect(configMap.metadata.namespace).toBe('platform');
    expect(configMap.metadata.labels?.grafana_dashboard).toBe('1');
    const dashboard = JSON.parse(configMap.data['pullfleet-controller.json'] as string);
    expect(dashboard.title).toBe('pullfleet controller (platform)');
    expect(dashboard.uid).toBe('pullfleet-platform');
    const exprs: string[] = dashboard.panels.flatMap((p: { targets: Array<{ expr: string }> }) =>
      p.targets.map((t) => t.expr),
    );
    expect(exprs.length).toBeGreaterThan(15);
    for (const expr of exprs) expect(expr).toContain('job="pullfleet-controller-metrics",namespace="platform"');
    // panels do not overlap
    const cells = new Set<string>();
    for (const { gridPos: g } of dashboard.panels as Array<{ gridPos: { x: number; y: number; w: number; h: number } }>)
      for (let x = g.x; x < g.x + g.w; x++)
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`)).toBe(false);
          cells.add(`${x},${y}`);
        }
  });

  test('labels reach the ServiceMonitor and the PrometheusRule; the interval, dashboard namespace and runbook are honoured', () => {
    const { objects } = render({
      monitoring: {
        labels: { release: 'kube-prometheus-stack' },
        scrapeInterval: Duration.seconds(15),
        dashboardNamespace: 'grafana',
        runbookUrl: 'https://wiki.example.com/pullfleet',
      },
    });
    expect(find(objects, 'ServiceMonitor').metadata.labels?.release).toBe('kube-prometheus-stack');
    expect(find(objects, 'PrometheusRule').metadata.labels?.release).toBe('kube-prometheus-stack');
    expect(find(objects, 'ServiceMonitor').spec.endpoints[0].interval).toBe('15s');
    const dashboard = objects.find((o) => o.metadata.name === 'pullfleet-controller-dashboard')!;
    expect(dashboard.metadata.namespace).toBe('grafana');
    expect(dashboard.metadata.labels?.release).toBeUndefined();
    expect(rules(objects)[0].annotations.runbook_url).toBe(
      'https://wiki.example.com/pullfleet#pullfleetcontrollerdown',
    );
  });

  test('each object can be left out', () => {
    const { install, objects } = render({ monitoring: { serviceMonitor: false, dashboard: false } });
    expect(kinds(objects)).toContain('PrometheusRule');
    expect(kinds(objects)).not.toContain('ServiceMonitor');
    expect(install.dashboard).toBeUndefined();
    expect(kinds(render({ monitoring: { alerts: false } }).objects)).not.toContain('PrometheusRule');
  });

  test('the objects are reachable: fields, apiObjects, and patches reach the output', () => {
    // GIVEN an install with monitoring
    const chart = new Chart(Testing.app(), 'hub');
    const install = new ControllerInstall(chart, 'Controller', { monitoring: {} });
    // WHEN a user patches the rule through the escape hatch
    install.prometheusRule!.addJsonPatch(JsonPatch.add('/spec/groups/0/interval', '1m'));
    // THEN the objects are among apiObjects under their ids, and the patch is rendered
    expect(install.apiObjects).toEqual(
      expect.arrayContaining([install.serviceMonitor, install.prometheusRule, install.dashboard]),
    );
    expect(install.node.findChild('PrometheusRule')).toBe(install.prometheusRule);
    expect(ApiObject.isApiObject(install.dashboard)).toBe(true);
    const rule = (Testing.synth(chart) as Obj[]).find((o) => o.kind === 'PrometheusRule')!;
    expect(rule.spec.groups[0].interval).toBe('1m');
  });

  test('a Hub passes monitoring to its install, into the controller file', () => {
    const { fleet } = smallFleet({ controller: { monitoring: { dashboard: false } } });
    const monitoring = allObjects(fleet).filter(({ obj }) => obj.apiVersion === 'monitoring.coreos.com/v1');
    expect(monitoring.map(({ file, obj }) => `${file} ${obj.kind}`)).toStrictEqual([
      'hub/hub/controller.yaml ServiceMonitor',
      'hub/hub/controller.yaml PrometheusRule',
    ]);
  });

  test('fails when the scrape interval is not a whole number of seconds', () => {
    const { fleet } = smallFleet({ controller: { monitoring: { scrapeInterval: Duration.millis(500) } } });
    expect(synthError(fleet)).toContain(
      'monitoring.scrapeInterval 0.5s must be a whole number of seconds >= 1: use for example Duration.seconds(30)',
    );
  });

  test('fails when the dashboard namespace is not a namespace name', () => {
    const { fleet } = smallFleet({ controller: { monitoring: { dashboardNamespace: 'Grafana_NS' } } });
    expect(synthError(fleet)).toContain('monitoring.dashboardNamespace "Grafana_NS"');
  });

  test('fails when the runbook address is not an http(s) address without a fragment', () => {
    const { fleet } = smallFleet({ controller: { monitoring: { runbookUrl: 'wiki/pullfleet#alerts' } } });
    expect(synthError(fleet)).toContain(
      'monitoring.runbookUrl "wiki/pullfleet#alerts" must be an http(s) address without a fragment',
    );
  });

  test('fails when a label is not a valid label', () => {
    const { fleet } = smallFleet({ controller: { monitoring: { labels: { 'team name': 'platform' } } } });
    expect(synthError(fleet)).toContain('monitoring.labels key "team name" is not a valid label key');
  });

  test('fails when monitoring is given a value of the wrong type', () => {
    const { fleet } = smallFleet({
      controller: { monitoring: { labels: 'release=prom' as unknown as Record<string, string> } },
    });
    expect(synthError(fleet)).toContain('monitoring.labels is "release=prom" (a string)');
  });

  test('GIVEN monitoring on THEN its Prometheus Operator objects pass their schema, and a patch that breaks one is caught', () => {
    const { install, objects } = render({ monitoring: {} });
    for (const kind of ['ServiceMonitor', 'PrometheusRule']) expect(checkObject(find(objects, kind))).toStrictEqual([]);
    install.serviceMonitor!.addJsonPatch(JsonPatch.replace('/spec/endpoints', 'not-a-list'));
    const chart = install.node.scope as Chart;
    const broken = (Testing.synth(chart) as Obj[]).find((o) => o.kind === 'ServiceMonitor')!;
    expect(checkObject(broken).map((f) => f.severity)).toContain('error');
  });
});
