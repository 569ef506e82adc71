/**
 * The file each routed construct sends its objects to, as `routeOutput` (output.ts) recorded it; the synth reads it
 * through `outputFileOf` (_output.ts). Its own module so that the public one (output.ts) and the internal one
 * share the record without importing each other.
 */
import type { IConstruct } from 'constructs';

const routes = new WeakMap<IConstruct, string>();

/** Records that the objects at or below `scope` go to `file` (checked by `routeOutput`). */
export function recordRoute(scope: IConstruct, file: string): void {
  routes.set(scope, file);
}

/** The file `scope` itself was routed to, if any (its ancestors are not looked at). */
export function routeOf(scope: IConstruct): string | undefined {
  return routes.get(scope);
}
