/**
 * The API resources a grant (`resources` of PullApplication and PullApplicationSet) may name: API group
 * → plural resource names, as `kubectl api-resources` lists them. Data only; the checks are in
 * grants.ts.
 *
 * The fleet declares no Kubernetes version of its spokes, so the built-in table is the union of what
 * Kubernetes 1.28 to 1.31 serve, alpha APIs included (a cluster may enable them). Resources that only
 * some of those versions serve say so in a comment.
 */

/** The Kubernetes versions the built-in table covers, as messages name them. */
export const KUBERNETES_VERSIONS = '1.28 to 1.31';

/**
 * Every API group Kubernetes 1.28 to 1.31 serve, with every resource in it. No CustomResourceDefinition
 * may add a resource to these groups (`*.k8s.io` groups need the API review of the Kubernetes
 * project), so a name missing here does not exist. `''` is the core group.
 */
export const BUILT_IN_API_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  '': [
    'bindings',
    'componentstatuses',
    'configmaps',
    'endpoints',
    'events',
    'limitranges',
    'namespaces',
    'nodes',
    'persistentvolumeclaims',
    'persistentvolumes',
    'pods',
    'podtemplates',
    'replicationcontrollers',
    'resourcequotas',
    'secrets',
    'serviceaccounts',
    'services',
  ],
  'admissionregistration.k8s.io': [
    'mutatingwebhookconfigurations',
    // v1beta1 in 1.28 and 1.29, v1 from 1.30.
    'validatingadmissionpolicies',
    'validatingadmissionpolicybindings',
    'validatingwebhookconfigurations',
  ],
  'apiextensions.k8s.io': ['customresourcedefinitions'],
  'apiregistration.k8s.io': ['apiservices'],
  apps: ['controllerrevisions', 'daemonsets', 'deployments', 'replicasets', 'statefulsets'],
  'authentication.k8s.io': ['selfsubjectreviews', 'tokenreviews'],
  'authorization.k8s.io': [
    'localsubjectaccessreviews',
    'selfsubjectaccessreviews',
    'selfsubjectrulesreviews',
    'subjectaccessreviews',
  ],
  autoscaling: ['horizontalpodautoscalers'],
  batch: ['cronjobs', 'jobs'],
  // clustertrustbundles: alpha.
  'certificates.k8s.io': ['certificatesigningrequests', 'clustertrustbundles'],
  // leasecandidates: alpha from 1.31.
  'coordination.k8s.io': ['leasecandidates', 'leases'],
  'discovery.k8s.io': ['endpointslices'],
  'events.k8s.io': ['events'],
  // Served by no version in the range: Deployments went to apps, Ingresses to networking.k8s.io.
  extensions: [],
  'flowcontrol.apiserver.k8s.io': ['flowschemas', 'prioritylevelconfigurations'],
  // alpha.
  'internal.apiserver.k8s.io': ['storageversions'],
  'networking.k8s.io': [
    // alpha, 1.28 only.
    'clustercidrs',
    'ingressclasses',
    'ingresses',
    // alpha from 1.27 (ipaddresses) and 1.29 (servicecidrs), beta from 1.31.
    'ipaddresses',
    'networkpolicies',
    'servicecidrs',
  ],
  'node.k8s.io': ['runtimeclasses'],
  policy: ['poddisruptionbudgets'],
  'rbac.authorization.k8s.io': ['clusterrolebindings', 'clusterroles', 'rolebindings', 'roles'],
  // alpha: v1alpha2 up to 1.30, v1alpha3 in 1.31 (deviceclasses from 1.31; resourceclasses and the
  // parameters kinds up to 1.30, resourceslices from 1.30).
  'resource.k8s.io': [
    'deviceclasses',
    'podschedulingcontexts',
    'resourceclaimparameters',
    'resourceclaims',
    'resourceclaimtemplates',
    'resourceclasses',
    'resourceclassparameters',
    'resourceslices',
  ],
  'scheduling.k8s.io': ['priorityclasses'],
  'storage.k8s.io': [
    'csidrivers',
    'csinodes',
    'csistoragecapacities',
    'storageclasses',
    'volumeattachments',
    // alpha from 1.29, beta from 1.31.
    'volumeattributesclasses',
  ],
  // alpha from 1.30.
  'storagemigration.k8s.io': ['storageversionmigrations'],
};

/**
 * API groups of custom resources the fleet knows: the CRDs pullfleet renders for or imports (Argo CD,
 * OCM and ACM, its own FleetReport) and the APIs OpenShift spokes serve. Other CRDs may add resources
 * to these groups, so a name missing here is suspicious only when it is a misspelling of one listed.
 */
export const KNOWN_CUSTOM_API_RESOURCES: Readonly<Record<string, readonly string[]>> = {
  'addon.open-cluster-management.io': [
    'addondeploymentconfigs',
    'addontemplates',
    'clustermanagementaddons',
    'managedclusteraddons',
  ],
  'apps.open-cluster-management.io': [
    'channels',
    'gitopsclusters',
    'helmreleases',
    'multiclusterapplicationsetreports',
    'placementrules',
    'subscriptionreports',
    'subscriptions',
  ],
  'apps.openshift.io': ['deploymentconfigs'],
  'argoproj.io': [
    'analysisruns',
    'analysistemplates',
    'applications',
    'applicationsets',
    'appprojects',
    'argocdexports',
    'argocds',
    'clusteranalysistemplates',
    'experiments',
    'rollouts',
  ],
  'build.openshift.io': ['buildconfigs', 'builds'],
  'cluster.open-cluster-management.io': [
    'addonplacementscores',
    'clusterclaims',
    'managedclusters',
    'managedclustersetbindings',
    'managedclustersets',
    'placementdecisions',
    'placements',
  ],
  'image.openshift.io': [
    'images',
    'imagesignatures',
    'imagestreamimages',
    'imagestreamimports',
    'imagestreammappings',
    'imagestreams',
    'imagestreamtags',
    'imagetags',
  ],
  'project.openshift.io': ['projectrequests', 'projects'],
  'pullfleet.io': ['fleetreports'],
  'route.openshift.io': ['routes'],
  'security.openshift.io': ['rangeallocations', 'securitycontextconstraints'],
  'template.openshift.io': ['brokertemplateinstances', 'templateinstances', 'templates'],
  'work.open-cluster-management.io': ['appliedmanifestworks', 'manifestworkreplicasets', 'manifestworks'],
};
