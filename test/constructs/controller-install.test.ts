import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from '@jest/globals';
import { Chart, Duration, Testing } from 'cdk8s';
import { FeedbackScrape, ControllerInstall } from '../../src/constructs/controller-install.js';
import { buildCommand, configFromOptions, controllerEnv } from '../../src/controller/cli.js';
import { resolveConfig } from '../../src/controller/runtime/config.js';
import { allObjects, smallFleet } from './helpers.js';

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string }; [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any

function render(props: ConstructorParameters<typeof ControllerInstall>[2] = {}): Obj[] {
  const app = Testing.app();
  const chart = new Chart(app, 'hub');
  new ControllerInstall(chart, 'Controller', props);
  return Testing.synth(chart) as Obj[];
}

const find = (objects: Obj[], kind: string, name?: string) =>
  objects.find((o) => o.kind === kind && (!name || o.metadata.name === name))!;

describe('ControllerInstall', () => {
  test('GIVEN defaults WHEN synthesized THEN it renders the install objects in its namespace', () => {
    const objects = render();
    expect(objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toStrictEqual([
      'Namespace//pullfleet-system',
      'CustomResourceDefinition//fleetreports.pullfleet.io',
      'ServiceAccount/pullfleet-system/pullfleet-controller',
      'ClusterRole//pullfleet-controller',
      'ClusterRoleBinding//pullfleet-controller',
      'Role/argocd/pullfleet-controller-cluster-secrets',
      'RoleBinding/argocd/pullfleet-controller-cluster-secrets',
      'Role/pullfleet-system/pullfleet-controller-leader-election',
      'RoleBinding/pullfleet-system/pullfleet-controller-leader-election',
      'Deployment/pullfleet-system/pullfleet-controller',
      'PodDisruptionBudget/pullfleet-system/pullfleet-controller',
      'Service/pullfleet-system/pullfleet-controller-metrics',
    ]);
  });

  test('GIVEN defaults WHEN synthesized THEN the pod runs restricted: non-root, read-only root, no escalation, no capabilities, RuntimeDefault seccomp', () => {
    const deployment = find(render(), 'Deployment');
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0];
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.securityContext).toStrictEqual({
      runAsGroup: 65532,
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toStrictEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.livenessProbe.httpGet).toStrictEqual({ path: '/healthz', port: 'http' });
    expect(container.readinessProbe.httpGet).toStrictEqual({ path: '/readyz', port: 'http' });
    expect(container.resources).toStrictEqual({
      limits: { cpu: '1', memory: '512Mi' },
      requests: { cpu: '100m', memory: '256Mi' },
    });
    expect(container.image).toBe('ghcr.io/pullfleet/pullfleet-controller:0.1.0');
  });

  test('GIVEN defaults WHEN synthesized THEN RBAC has no wildcard and exactly the verbs each duty needs', () => {
    const objects = render();
    const rules = objects
      .filter((o) => o.kind === 'ClusterRole' || o.kind === 'Role')
      .flatMap((o) => o.rules.map((rule: Obj) => ({ ...rule, scope: o.metadata.namespace ?? 'cluster' })));
    expect(JSON.stringify(rules)).not.toContain('*');
    const table = Object.fromEntries(
      rules.flatMap((rule) =>
        rule.resources.map((resource: string) => [
          `${rule.scope}:${rule.apiGroups[0] || 'core'}/${resource}`,
          rule.verbs.join(','),
        ]),
      ),
    );
    expect(table).toStrictEqual({
      'cluster:argoproj.io/applications': 'get,list,patch,watch',
      'cluster:work.open-cluster-management.io/manifestworks': 'create,delete,get,list,patch,watch',
      'cluster:cluster.open-cluster-management.io/managedclusters': 'get,list,watch',
      'cluster:core/namespaces': 'get,list,watch',
      'cluster:cluster.open-cluster-management.io/managedclustersetbindings': 'get,list,watch',
      'cluster:cluster.open-cluster-management.io/managedclustersets': 'get,list,watch',
      'cluster:argoproj.io/applicationsets': 'get,list,watch',
      'cluster:cluster.open-cluster-management.io/placementdecisions': 'get,list,watch',
      'cluster:apps.open-cluster-management.io/gitopsclusters': 'get,list,watch',
      // The report reconciler keeps its own state and never reads reports back (src/model/report/report-crd.ts).
      'cluster:pullfleet.io/fleetreports': 'create,delete,patch',
      'cluster:pullfleet.io/fleetreports/status': 'patch',
      'argocd:core/configmaps': 'create,delete,get,list,patch,watch',
      'argocd:core/secrets': 'create,delete,get,list,patch,watch',
      'pullfleet-system:coordination.k8s.io/leases': 'create,get,update',
    });
  });

  test('GIVEN settings WHEN synthesized THEN they become controller flags', () => {
    const objects = render({
      argoNamespace: 'openshift-gitops',
      namespace: 'openshift-gitops',
      imageRepository: 'quay.io/acme/pullfleet-controller',
      imageTag: '1.2.3',
      replicas: 3,
      feedbackScrape: FeedbackScrape.WATCH,
      staleAfter: Duration.minutes(5),
      relaxTenancy: true,
      acmTenancyWarnings: true,
      resync: Duration.minutes(10),
    });
    expect(objects.some((o) => o.kind === 'Namespace')).toBe(false);
    const deployment = find(objects, 'Deployment');
    expect(deployment.spec.replicas).toBe(3);
    expect(deployment.spec.template.spec.containers[0].image).toBe('quay.io/acme/pullfleet-controller:1.2.3');
    expect(deployment.spec.template.spec.containers[0].args).toStrictEqual([
      '--namespace=openshift-gitops',
      '--argo-namespace=openshift-gitops',
      '--feedback-scrape-type=Watch',
      '--stale-after=300',
      '--relax-tenancy=true',
      '--acm-tenancy-warnings=true',
      '--resync=600',
      '--workers=32',
      '--multicluster-reports=false',
      '--port=8080',
      '--log-level=info',
    ]);
  });

  test('GIVEN ACM report compatibility WHEN synthesized THEN the role may write MulticlusterApplicationSetReports', () => {
    const role = find(render({ multiclusterReports: true }), 'ClusterRole');
    expect(role.rules.at(-1)).toStrictEqual({
      apiGroups: ['apps.open-cluster-management.io'],
      resources: ['multiclusterapplicationsetreports'],
      verbs: ['create', 'delete', 'patch'],
    });
  });

  test.each([
    [{ imageTag: 'latest' }, 'imageTag "latest" makes the install unreproducible: pin a version such as "0.1.0"'],
    [{ replicas: 0 }, 'replicas 0 must be an integer >= 1'],
    [{ namespace: 'Bad_NS' }, 'namespace "Bad_NS" must consist of lower-case letters'],
    [{ resync: Duration.seconds(1) }, 'resync 1s is too short: use at least 10 seconds'],
    [{ logLevel: 'loud' }, 'logLevel "loud" must be one of trace, debug, info, warn, error'],
  ])('fails validation when given %j, and renders nothing', (props, message) => {
    const install = new ControllerInstall(new Chart(Testing.app(), 'hub'), 'Controller', props);
    expect(install.node.validate()).toContainEqual(expect.stringContaining(message));
    expect(install.apiObjects).toStrictEqual([]);
  });

  test('GIVEN the same props WHEN synthesized twice THEN the output is identical', () => {
    expect(JSON.stringify(render())).toBe(JSON.stringify(render()));
  });
});

describe('ControllerInstall and the controller agree', () => {
  test('every flag the Deployment passes parses into the configuration it describes', () => {
    const install = new ControllerInstall(new Chart(Testing.app(), 'hub'), 'Controller', {
      argoNamespace: 'gitops',
      feedbackScrape: FeedbackScrape.WATCH,
      staleAfter: Duration.minutes(20),
      relaxTenancy: true,
      resync: Duration.minutes(2),
      workers: 3,
      multiclusterReports: true,
      resourceSummaries: false,
      logLevel: 'debug',
    });
    const command = buildCommand().exitOverride();
    command.parse(install.args(), { from: 'user' });
    expect(resolveConfig(configFromOptions(command.opts()))).toMatchObject({
      argoNamespace: 'gitops',
      feedbackScrapeType: 'Watch',
      staleAfterSeconds: 1200,
      relaxTenancy: true,
      resyncSeconds: 120,
      workers: 3,
      multiclusterReports: true,
      resourceSummaries: false,
      httpPort: 8080,
    });
    expect(command.opts().logLevel).toBe('debug');
  });

  /** The container's env as the kubelet would set it: downward API fields resolved for a pod of the Deployment. */
  function podEnv(deployment: Obj, podName: string): Record<string, string> {
    const fields: Record<string, string> = {
      'metadata.name': podName,
      'metadata.namespace': deployment.metadata.namespace!,
    };
    const env: Record<string, string> = {};
    for (const entry of deployment.spec.template.spec.containers[0].env as Array<{
      name: string;
      value?: string;
      valueFrom?: { fieldRef?: { fieldPath: string } };
    }>) {
      const value = entry.value ?? fields[entry.valueFrom?.fieldRef?.fieldPath ?? ''];
      if (value === undefined) throw new Error(`env ${entry.name} has a source this test does not resolve`);
      env[entry.name] = value;
    }
    return env;
  }

  test('GIVEN namespace "platform" WHEN the rendered args and env are resolved by the controller THEN its Lease lives in "platform", as the Role grants', () => {
    const objects = render({ namespace: 'platform' });
    const deployment = find(objects, 'Deployment');
    const container = deployment.spec.template.spec.containers[0];
    const env = podEnv(deployment, 'pullfleet-controller-7d9f-abcde');
    const command = buildCommand(env).exitOverride();
    command.parse(container.args, { from: 'user' });
    const config = resolveConfig(configFromOptions(command.opts()));
    expect(config.namespace).toBe('platform');
    expect(config.identity).toBe('pullfleet-controller-7d9f-abcde');
    expect(find(objects, 'Role', 'pullfleet-controller-leader-election').metadata.namespace).toBe(config.namespace);
    expect(find(objects, 'ServiceAccount').metadata.namespace).toBe(config.namespace);
  });

  test('GIVEN a Hub with controller namespace "platform" WHEN its controller.yaml is resolved by the controller THEN the Lease namespace is "platform"', () => {
    const { fleet } = smallFleet({ controller: { namespace: 'platform' } });
    const rendered = allObjects(fleet).filter(({ file }) => file.endsWith('controller.yaml'));
    const deployment: Obj = rendered.find(({ obj }) => obj.kind === 'Deployment')!.obj;
    const command = buildCommand(podEnv(deployment, 'pullfleet-controller-0')).exitOverride();
    command.parse(deployment.spec.template.spec.containers[0].args, { from: 'user' });
    const config = resolveConfig(configFromOptions(command.opts()));
    expect(config.namespace).toBe('platform');
    const leaseRole = rendered.find(
      ({ obj }) => obj.kind === 'Role' && obj.metadata.name === 'pullfleet-controller-leader-election',
    )!.obj;
    expect(leaseRole.metadata.namespace).toBe(config.namespace);
  });

  test('GIVEN acmTenancyWarnings WHEN the controller reads the rendered flags THEN the warnings are on; without it they are off and no flag is rendered', () => {
    const configOf = (props: Parameters<typeof render>[0]) => {
      const deployment = find(render(props), 'Deployment');
      const command = buildCommand({}).exitOverride();
      command.parse(deployment.spec.template.spec.containers[0].args, { from: 'user' });
      return {
        args: deployment.spec.template.spec.containers[0].args as string[],
        config: resolveConfig(configFromOptions(command.opts())),
      };
    };
    expect(configOf({ acmTenancyWarnings: true }).config.acmTenancyWarnings).toBe(true);
    const off = configOf({});
    expect(off.config.acmTenancyWarnings).toBe(false);
    expect(off.args.some((a) => a.startsWith('--acm-tenancy-warnings'))).toBe(false);
  });

  test('GIVEN namespace "platform" THEN the flag alone and the downward-API env alone each give the Lease namespace', () => {
    const deployment = find(render({ namespace: 'platform' }), 'Deployment');
    const args: string[] = deployment.spec.template.spec.containers[0].args;
    const onlyFlag = buildCommand({}).exitOverride();
    onlyFlag.parse(args, { from: 'user' });
    expect(resolveConfig(configFromOptions(onlyFlag.opts())).namespace).toBe('platform');
    const onlyEnv = buildCommand(podEnv(deployment, 'pod-0')).exitOverride();
    onlyEnv.parse(
      args.filter((arg) => !arg.startsWith('--namespace=')),
      { from: 'user' },
    );
    expect(resolveConfig(configFromOptions(onlyEnv.opts())).namespace).toBe('platform');
  });

  test('GIVEN environment variables THEN flags win over PULLFLEET_*, which win over POD_NAMESPACE and the defaults', () => {
    const parse = (env: NodeJS.ProcessEnv, args: string[]) => {
      const command = buildCommand(env).exitOverride();
      command.parse(args, { from: 'user' });
      return resolveConfig(configFromOptions(command.opts()));
    };
    expect(parse({ POD_NAMESPACE: 'a' }, []).namespace).toBe('a');
    expect(parse({ POD_NAMESPACE: 'a', PULLFLEET_NAMESPACE: 'b' }, []).namespace).toBe('b');
    expect(parse({ POD_NAMESPACE: 'a', PULLFLEET_NAMESPACE: 'b' }, ['--namespace=c']).namespace).toBe('c');
    expect(parse({}, []).namespace).toBe('pullfleet-system');
    expect(
      parse({ PULLFLEET_LEASE_DURATION: '30', PULLFLEET_RENEW_DEADLINE: '20' }, [
        '--retry-period=4',
        '--request-timeout=5',
      ]),
    ).toMatchObject({
      leaseDurationSeconds: 30,
      renewDeadlineSeconds: 20,
      retryPeriodSeconds: 4,
      requestTimeoutSeconds: 5,
    });
  });

  test('GIVEN a pod without POD_NAMESPACE THEN the service account namespace is used; outside a pod nothing is guessed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pullfleet-sa-'));
    try {
      const file = join(dir, 'namespace');
      writeFileSync(file, 'platform\n');
      expect(controllerEnv({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, file).POD_NAMESPACE).toBe('platform');
      expect(controllerEnv({ KUBERNETES_SERVICE_HOST: '10.0.0.1', POD_NAMESPACE: 'other' }, file).POD_NAMESPACE).toBe(
        'other',
      );
      expect(controllerEnv({}, file).POD_NAMESPACE).toBeUndefined();
      expect(
        controllerEnv({ KUBERNETES_SERVICE_HOST: '10.0.0.1' }, join(dir, 'missing')).POD_NAMESPACE,
      ).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('fails naming the variable when an environment value is invalid', () => {
    expect(() => buildCommand({ PULLFLEET_RELAX_TENANCY: 'ture' })).toThrow(
      'environment variable PULLFLEET_RELAX_TENANCY: expected true or false, got "ture"',
    );
  });

  test('a boolean flag that is neither true nor false is refused, not read as false', () => {
    const command = buildCommand()
      .exitOverride()
      .configureOutput({ writeErr: () => undefined });
    expect(() => command.parse(['--relax-tenancy=ture'], { from: 'user' })).toThrow(
      'expected true or false, got "ture"',
    );
  });
});
