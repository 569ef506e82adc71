/**
 * When a hub renders. Spokes, cluster sets and placements render as they are declared (a placement adds
 * at render time only what the whole hub decides: the tolerations an OCM GitOpsCluster on it adds); apps render late,
 * once the whole hub is declared (an app's objects depend on every spoke, placement and GitOpsCluster),
 * and spokes' bootstraps after the apps (a bootstrap carries every app's namespace). Only the Fleet
 * renders, once, when it synthesizes or validates: escape hatches never do (see _hatch.ts). After that,
 * declaring a construct or calling a method that changes the fleet throws, because it would be left out
 * of what was already rendered and checked.
 */
import type { IConstruct } from 'constructs';

/** A construct that renders once the whole hub is declared (PullApplication, PullApplicationSet, Placement). */
export interface Renderable extends IConstruct {
  /** @internal renders the construct's objects; called once, by the hub's render order. */
  _render(): void;
  /**
   * @internal the works that deliver this construct's apps to `spoke` in the basic model whatever model
   * the spoke runs (a basic ApplicationSet): a move of the spoke leaves them in place.
   */
  _worksKeptOn?(spoke: string): string[];
}

const renderedRoots = new WeakSet<IConstruct>();

/** The fleet `scope` belongs to starts rendering: from now on nothing may be declared in it. */
export function markFleetRendering(scope: IConstruct): void {
  renderedRoots.add(scope.node.root);
}

/** Whether the fleet `scope` belongs to has rendered (or is rendering). */
export function fleetRendered(scope: IConstruct): boolean {
  return renderedRoots.has(scope.node.root);
}

/**
 * Throws when the fleet has rendered: `what` (`declared`, `deployTo(...) called`) names what came too
 * late, at the construct path `path`.
 */
export function assertNotRendered(scope: IConstruct, what: string, path = scope.node.path): void {
  if (!fleetRendered(scope)) return;
  throw new Error(
    `${path || '<root>'}: ${what} after the fleet rendered (synth, renderFiles, renderObjects, problems, warnings or findings ran): declare every construct and make every call before synthesizing or validating the fleet`,
  );
}

/** The render order of one hub: the constructs that render late, then the hub's own objects, then bootstraps. */
export class RenderOrder {
  private readonly renderables: Renderable[] = [];
  private readonly late: Array<() => void> = [];
  private state: 'declaring' | 'rendering' | 'rendered' = 'declaring';

  /** @param renderHub renders the hub's own objects (agent AppProjects, expected Applications). */
  constructor(private readonly renderHub: () => void) {}

  /** Rendering has started: delivery decisions made from now on are final (see DeliveryLedger). */
  public get started(): boolean {
    return this.state !== 'declaring';
  }

  /** Registers a construct that renders once the whole hub is declared. */
  public register(renderable: Renderable): void {
    assertNotRendered(renderable, 'declared');
    this.renderables.push(renderable);
  }

  /** Runs `fn` after every registered construct rendered (a bootstrap needs every app). */
  public afterRender(fn: () => void): void {
    this.late.push(fn);
  }

  /** The works registered constructs keep delivering to `spoke` whatever model it runs. */
  public worksKeptOn(spoke: string): string[] {
    return this.renderables.flatMap((r) => r._worksKeptOn?.(spoke) ?? []);
  }

  /** Renders the hub, exactly once. */
  public render(): void {
    if (this.state !== 'declaring') return;
    this.state = 'rendering';
    for (const r of this.renderables) r._render();
    this.renderHub();
    for (const fn of this.late) fn();
    this.state = 'rendered';
  }
}
