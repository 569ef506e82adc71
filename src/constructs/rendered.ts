/**
 * The one escape hatch of every pullfleet construct that renders objects: `renderedObject(query)` returns
 * the cdk8s `ApiObject` that lands in `dist/`, so labels, annotations and `addJsonPatch` on it reach the
 * output (and synth validates the patched object). Asking renders nothing (see _hatch.ts): an object that
 * exists before the fleet renders is returned at any time, an app's object for one spoke is created when it
 * is first asked for, and the objects that depend on the whole hub (a spoke's plain bootstrap objects, the
 * hub's agent AppProjects) exist once the fleet rendered.
 */
import type { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import type { ISpoke } from './interfaces.js';

/** What identifies one object a construct renders. */
export interface RenderedObjectQuery {
  /** The object's kind, for example `'ManifestWork'`. */
  readonly kind: string;
  /**
   * The spoke the object is rendered for: required for the objects a `PullApplication` renders per spoke
   * (its hub Application and ManifestWork).
   * @default - any spoke
   */
  readonly spoke?: ISpoke | string;
  /**
   * The object's namespace.
   * @default - any namespace
   */
  readonly namespace?: string;
  /**
   * The object's name.
   * @default - any name
   */
  readonly name?: string;
}

/** A construct that renders objects into `dist/`, each reachable as its `ApiObject`. */
export interface IRendersObjects extends IConstruct {
  /**
   * The ApiObject this construct renders for `query`: labels, annotations and `addJsonPatch` on it reach
   * `dist/`. Reading it renders nothing. Throws, naming the construct and the kinds it renders, when it
   * renders no such object or more than one (give `name`, `namespace` or `spoke` to choose).
   */
  renderedObject(query: RenderedObjectQuery): ApiObject;
}
