/**
 * The internal parts of a Hub, and the one accessor other constructs reach them through
 * ({@link hubParts}): the registry of its spokes, cluster sets and GitOpsClusters, the delivery ledger
 * (plan-state bookkeeping) and the render order. The Hub attaches its parts when it is created; a
 * construct holds its hub as an `IHub` and asks `hubParts(hub)` for what it needs, so no construct
 * imports another's class and the hub keeps a small public surface.
 */
import { mistake } from './_cli-session.js';
import { Construct, type IConstruct } from 'constructs';
import {
  buildGeneratorConfigMap,
  buildPlacementReaderRole,
  buildPlacementReaderRoleBinding,
} from '../model/delivery/appset.js';
import { buildAgentAppProject, spokeFolderPath } from '../model/delivery/delivery-model.js';
import { buildExpectedApplicationsConfigMap } from '../model/reconcile/expected-apps.js';
import type { HubFlavor, IHub, ISpoke } from './interfaces.js';
import { DeliveryLedger } from './_delivery-ledger.js';
import { apiObjectFrom } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import { HubRegistry } from './_registry.js';
import { RenderOrder } from './_render-order.js';

/** What the parts need to know about their hub. */
export interface HubSettings {
  readonly flavor: HubFlavor;
  /** Service account of the hub's applicationset-controller (bound to read placement decisions). */
  readonly applicationSetControllerServiceAccount: string;
}

/** The internal parts of one hub. */
export class HubParts {
  /** The hub's spokes, cluster sets and GitOpsClusters. */
  public readonly registry: HubRegistry;
  /** The hub's delivery decisions and plan-state bookkeeping. */
  public readonly ledger: DeliveryLedger;
  /** When the hub's constructs render. */
  public readonly order: RenderOrder;
  private appSetSupport?: Construct;

  constructor(
    /** The hub. */
    public readonly hub: Construct & IHub,
    /** The hub's settings. */
    public readonly settings: HubSettings,
    registry: HubRegistry<ISpoke> = new HubRegistry({ hub, flavor: settings.flavor }),
  ) {
    this.registry = registry;
    this.order = new RenderOrder(() => this.renderHubObjects());
    this.ledger = new DeliveryLedger(hub, this.registry, this.order);
  }

  /** The generator ConfigMap and applicationset-controller RBAC, created once per hub (by its first ApplicationSet). */
  public ensureApplicationSetSupport(): void {
    if (this.appSetSupport) return;
    const argoNamespace = this.hub.argoNamespace;
    this.appSetSupport = new Construct(this.hub, 'ApplicationSetSupport');
    routeOutput(this.appSetSupport, OutputFiles.APPLICATION_SETS);
    apiObjectFrom(this.appSetSupport, 'GeneratorConfigMap', buildGeneratorConfigMap(argoNamespace));
    apiObjectFrom(this.appSetSupport, 'PlacementReaderRole', buildPlacementReaderRole(argoNamespace));
    apiObjectFrom(
      this.appSetSupport,
      'PlacementReaderRoleBinding',
      buildPlacementReaderRoleBinding(argoNamespace, this.settings.applicationSetControllerServiceAccount),
    );
  }

  /**
   * The hub's own objects, once every app rendered: an AppProject per agent-managed project other than
   * `default`, and the Applications each agent-autonomous spoke should run (`hub/expected-applications.yaml`:
   * the hub cannot otherwise tell an Application that never showed up from one never meant to exist).
   */
  private renderHubObjects(): void {
    const argoNamespace = this.hub.argoNamespace;
    const projects = this.ledger.agentProjectDestinations();
    if (projects.length > 0) {
      const scope = new Construct(this.hub, 'AgentProjects');
      routeOutput(scope, OutputFiles.AGENT_PROJECTS);
      for (const [project, destinations] of projects)
        apiObjectFrom(scope, project, buildAgentAppProject(project, argoNamespace, destinations));
    }
    const expected = this.ledger.autonomousApplications();
    if (expected.length > 0) {
      const scope = new Construct(this.hub, 'ExpectedApplications');
      routeOutput(scope, OutputFiles.EXPECTED_APPLICATIONS);
      for (const [spoke, applications] of expected) {
        const gitOpsCluster = this.ledger.decisionFor(spoke).gitOpsCluster;
        const source = this.registry.gitOpsClusterAt(gitOpsCluster)?.spokeFolderSource;
        const folder = source ? spokeFolderPath(source, this.hub.name, spoke) : `dist/${this.hub.name}/spokes/${spoke}`;
        apiObjectFrom(
          scope,
          spoke,
          buildExpectedApplicationsConfigMap({ spoke, namespace: argoNamespace, applications, folder }),
        );
      }
    }
  }
}

const partsOfHub = new WeakMap<IConstruct, HubParts>();

/** Attaches `parts` to their hub (done once, by the Hub constructor). */
export function attachHubParts(parts: HubParts): void {
  partsOfHub.set(parts.hub, parts);
}

/** The internal parts of `hub`. Throws for a hub this copy of the library did not make. */
export function hubParts(hub: IHub): HubParts {
  const parts = partsOfHub.get(hub);
  if (!parts)
    throw new Error(
      `${hub.node.path}: hub "${hub.name}" was not made by this copy of pullfleet: build the whole fleet with one copy of the library`,
    );
  return parts;
}

/**
 * The parts of the hub `scope` belongs to (the nearest Hub among `scope` and its ancestors). Throws when
 * `scope` is not inside a Hub, as `Hub.of` does.
 */
export function hubOf(scope: IConstruct, made?: ConstructMade): HubParts {
  for (const s of [...scope.node.scopes].reverse()) {
    const parts = partsOfHub.get(s);
    if (parts) return parts;
  }
  throw notInsideHub(scope, made);
}

/** The construct being made, as a mistake about its scope names it: its class and the id given. */
export interface ConstructMade {
  readonly kind: string;
  readonly id: string;
}

/**
 * The mistake of making a construct (`made`, when known) in `scope`, which is not inside a Hub: names the
 * construct, where it was made, and the call that would work.
 */
export function notInsideHub(scope: IConstruct, made?: ConstructMade): Error {
  const where = scope.node.path ? `"${scope.node.path}"` : 'the Fleet itself';
  return mistake(
    made
      ? `${made.kind} "${made.id}" is made in ${where}, which is not inside a Hub: give a Hub (or one of its constructs) as its scope, for example new ${made.kind}(hub, '${made.id}')`
      : `${where} is not inside a Hub: give a Hub (or one of its constructs) as scope`,
  );
}
