/**
 * The controller's Deployment (internal): a restricted security context, spread over nodes, probes on the
 * HTTP port, fixed resources and a writable /tmp on a read-only root filesystem. Its signature names no
 * generated type (those stay out of every published declaration).
 */
import type { ApiObject } from 'cdk8s';
import { k8s } from 'cdk8s-plus-28';
import type { Construct } from 'constructs';

/** What the Deployment is made from. */
export interface ControllerPod {
  /** Name of the Deployment and of the ServiceAccount the pod runs as. */
  readonly name: string;
  /** Namespace of the Deployment. */
  readonly namespace: string;
  /** Replicas. */
  readonly replicas: number;
  /** Shards (more than one: replicas are recreated, not rolled). */
  readonly shards: number;
  /** Full image reference. */
  readonly image: string;
  /** The controller's flags. */
  readonly args: string[];
  /** Labels of the Deployment and its pods. */
  readonly labels: Record<string, string>;
  /** Labels that select the controller's pods (anti-affinity). */
  readonly selector: Record<string, string>;
  /** The HTTP port (health, readiness, metrics). */
  readonly port: number;
}

/** The controller's container. */
function controllerContainer(pod: ControllerPod): k8s.Container {
  return {
    name: 'controller',
    image: pod.image,
    imagePullPolicy: 'IfNotPresent',
    args: pod.args,
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    ],
    ports: [{ name: 'http', containerPort: pod.port, protocol: 'TCP' }],
    livenessProbe: {
      httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('http') },
      initialDelaySeconds: 10,
      periodSeconds: 20,
    },
    readinessProbe: {
      httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('http') },
      periodSeconds: 10,
    },
    resources: {
      requests: { cpu: k8s.Quantity.fromString('100m'), memory: k8s.Quantity.fromString('256Mi') },
      limits: { cpu: k8s.Quantity.fromString('1'), memory: k8s.Quantity.fromString('512Mi') },
    },
    securityContext: {
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    // tsx compiles into a cache under the temp directory; the root filesystem stays read-only.
    volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
  };
}

/** The controller's Deployment, `Deployment` in `scope`. */
export function controllerDeployment(scope: Construct, pod: ControllerPod): ApiObject {
  return new k8s.KubeDeployment(scope, 'Deployment', {
    metadata: { name: pod.name, namespace: pod.namespace, labels: pod.labels },
    spec: {
      replicas: pod.replicas,
      selector: { matchLabels: pod.selector },
      // Sharded, replicas started with another shard count would split the clusters another way while
      // the old ones still run: a rollout stops every old replica before the new ones start.
      strategy:
        pod.shards > 1
          ? { type: 'Recreate' }
          : {
              type: 'RollingUpdate',
              rollingUpdate: { maxUnavailable: k8s.IntOrString.fromNumber(0), maxSurge: k8s.IntOrString.fromNumber(1) },
            },
      template: podTemplate(pod),
    },
  });
}

/** The pod template of the controller's Deployment. */
function podTemplate(pod: ControllerPod): k8s.PodTemplateSpec {
  return {
    metadata: { labels: pod.labels },
    spec: {
      serviceAccountName: pod.name,
      automountServiceAccountToken: true,
      terminationGracePeriodSeconds: 30,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 65532,
        runAsGroup: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      affinity: {
        podAntiAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 100,
              podAffinityTerm: {
                topologyKey: 'kubernetes.io/hostname',
                labelSelector: { matchLabels: pod.selector },
              },
            },
          ],
        },
      },
      containers: [controllerContainer(pod)],
      volumes: [{ name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('64Mi') } }],
    },
  };
}
