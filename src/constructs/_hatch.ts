/**
 * Escape hatches that never render. An escape hatch (`spoke.bootstrapWork`, `app.manifestWork(spoke)`,
 * `appSet.applicationSet`...) returns the cdk8s ApiObject that lands in dist/, so labels, annotations
 * and JSON patches added through it reach the output. Reading one must not render the hub: a construct
 * declared afterwards would be left out. So the object a hatch returns exists before the fleet renders:
 * - an object that exists whatever else is declared is created when its construct is declared (a
 *   spoke's cluster Secret, its bootstrap ManifestWork, an ApplicationSet);
 * - an object of one app for one spoke is created when the hatch first asks for it.
 * Either way it is created with its identity only (apiVersion, kind, name, namespace), and rendering
 * fills in its content ({@link fillObject}): what the model builds, under the edits made through the
 * hatch (an edit of a label or an annotation wins over the built value; JSON patches apply last, as on
 * any ApiObject). An object the fleet turns out not to render is dropped when its construct renders, and
 * when a hatch handed it out, synth reports why (see docs/reference/errors.md).
 */
import { ApiObject, Lazy } from 'cdk8s';
import { Construct, type IConstruct } from 'constructs';
import { ARGOCD_API_VERSION, CONSTRUCT_PATH_ANNOTATION, WORK_API_VERSION } from '../model/core/keys.js';
import { manifestWorkName } from '../model/core/names.js';
import { DeliveryModel } from '../model/delivery/delivery-model.js';
import { staticHubApplicationName } from '../model/delivery/hub-application.js';
import type { IHub, ISpoke } from './interfaces.js';
import type { RenderedObjectQuery } from './rendered.js';
import { hubParts } from './_hub-parts.js';
import { addProvenance, apiObjectFrom, keepNulls, sortChildrenInOutput, type PlainObject } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import { recordProblem } from './_problems.js';
import { recordWarning } from './_props-check.js';
import { fleetRendered } from './_render-order.js';

/** What an object is before its content is known. */
export interface ObjectIdentity {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /**
   * Its namespace.
   * @default - cluster-scoped
   */
  readonly namespace?: string;
}

/** The top-level fields rendering fills in, besides apiVersion, kind and metadata. */
const FILLED_FIELDS: readonly string[] = ['spec'];

interface Reservation {
  /** The construct that renders the object (and reports when it does not). */
  readonly owner: IConstruct;
  readonly identity: ObjectIdentity;
  /** The content, once rendering filled it in. */
  content?: Record<string, unknown>;
  /** A hatch handed the object out. */
  handedOut: boolean;
  /** How it was first asked for, when not through a construct's old hatch (`renderedObject({ ... })`). */
  askedAs?: string;
}

const reservations = new WeakMap<ApiObject, Reservation>();
const reservedBy = new WeakMap<IConstruct, ApiObject[]>();

/**
 * Creates, under `holder` as `id`, the ApiObject `owner` will render with identity `identity`; its
 * content comes when it renders ({@link fillObject}).
 */
export function reserveObject(holder: Construct, id: string, identity: ObjectIdentity, owner: IConstruct): ApiObject {
  const reservation: Reservation = { owner, identity, handedOut: false };
  const obj = new ApiObject(holder, id, {
    apiVersion: identity.apiVersion,
    kind: identity.kind,
    metadata: { name: identity.name, ...(identity.namespace !== undefined ? { namespace: identity.namespace } : {}) },
    ...Object.fromEntries(
      FILLED_FIELDS.map((field) => [field, Lazy.any({ produce: () => reservation.content?.[field] })]),
    ),
  });
  reservations.set(obj, reservation);
  reservedBy.set(owner, [...(reservedBy.get(owner) ?? []), obj]);
  holder.node.defaultChild = obj;
  return obj;
}

/**
 * A hatch hands `obj` out: if the fleet then does not render it, synth says so, naming the hatch as
 * `askedAs` words it (the first one asked; without it, the construct's old hatch).
 */
export function handOut(obj: ApiObject, askedAs?: string): ApiObject {
  const reservation = reservations.get(obj);
  if (reservation) {
    if (!reservation.handedOut && askedAs !== undefined) reservation.askedAs = askedAs;
    reservation.handedOut = true;
  }
  return obj;
}

/** How `obj` was first asked for through `renderedObject`, or undefined (an old hatch, or not handed out). */
function askedAs(obj: ApiObject): string | undefined {
  return reservations.get(obj)?.askedAs;
}

/**
 * Gives a reserved object its content, built by the model: every field of `content`, and the metadata
 * the hatch's edits left unset (an edit wins). Provenance is added as {@link apiObjectFrom} adds it.
 */
export function fillObject(obj: ApiObject, content: PlainObject): void {
  const reservation = reservations.get(obj);
  if (!reservation || reservation.content) throw new Error(`${obj.node.path}: not an object waiting for its content`);
  const { apiVersion, kind, metadata, ...fields } = content as PlainObject & Record<string, unknown>;
  const { identity } = reservation;
  const unexpected = Object.keys(fields).filter((field) => !FILLED_FIELDS.includes(field));
  if (
    apiVersion !== identity.apiVersion ||
    kind !== identity.kind ||
    metadata.name !== identity.name ||
    metadata.namespace !== identity.namespace ||
    unexpected.length > 0
  ) {
    throw new Error(
      `${obj.node.path}: created as ${identity.kind} ${identity.namespace ?? ''}/${identity.name}, but rendered as ${kind} ${metadata.namespace ?? ''}/${metadata.name}${unexpected.length ? ` with ${unexpected.join(', ')}` : ''}`,
    );
  }
  reservation.content = keepNulls(obj, fields);
  const given = obj.metadata.toJson() as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const {
    name: _name,
    namespace: _namespace,
    labels,
    annotations,
    finalizers,
    ...more
  } = metadata as PlainObject['metadata'] & {
    labels?: Record<string, string>;
    finalizers?: string[];
    [key: string]: unknown;
  };
  for (const [key, value] of Object.entries(labels ?? {}))
    if (given.labels?.[key] === undefined) obj.metadata.addLabel(key, value);
  for (const [key, value] of Object.entries(annotations ?? {}))
    if (given.annotations?.[key] === undefined) obj.metadata.addAnnotation(key, value);
  if (finalizers?.length) obj.metadata.addFinalizers(...finalizers);
  for (const [key, value] of Object.entries(more)) obj.metadata.add(key, value);
  addProvenance(
    obj,
    annotations?.[CONSTRUCT_PATH_ANNOTATION] !== undefined ||
      given.annotations?.[CONSTRUCT_PATH_ANNOTATION] !== undefined,
  );
}

/** The child `id` of `scope`, created (and routed to `file`) when it does not exist yet. */
export function scopeFor(scope: Construct, id: string, file?: string): Construct {
  const existing = scope.node.tryFindChild(id);
  if (existing) return existing;
  const created = new Construct(scope, id);
  if (file) routeOutput(created, file);
  return created;
}

/**
 * Renders `content` as the ApiObject `id` of `holder`, the holder's default child: fills the object a
 * hatch reserved there, or creates it.
 */
export function placeObject(holder: Construct, id: string, content: PlainObject): ApiObject {
  const reserved = holder.node.tryFindChild(id);
  let obj: ApiObject;
  if (reserved && ApiObject.isApiObject(reserved) && reservations.has(reserved)) {
    fillObject(reserved, content);
    obj = reserved;
  } else {
    obj = apiObjectFrom(holder, id, content);
  }
  holder.node.defaultChild = obj;
  return obj;
}

/** Why a reserved object did not render, or undefined when another reported problem already says so. */
export type Unrendered = { readonly message: string; readonly warning?: boolean } | undefined;

/**
 * Drops the objects reserved for `owner` that rendering did not fill in, with the scopes they leave
 * empty, and reports each one a hatch handed out, as `explain` words it.
 */
export function dropUnrendered(owner: IConstruct, explain: (obj: ApiObject) => Unrendered): void {
  const kept: ApiObject[] = [];
  for (const obj of reservedBy.get(owner) ?? []) {
    const reservation = reservations.get(obj)!;
    if (reservation.content) {
      kept.push(obj);
      continue;
    }
    const why = reservation.handedOut ? explain(obj) : undefined;
    let child: IConstruct = obj;
    for (let scope = child.node.scope; scope; scope = scope.node.scope) {
      if (scope.node.defaultChild === child) scope.node.defaultChild = undefined;
      scope.node.tryRemoveChild(child.node.id);
      if (scope === owner || scope.node.children.length > 0) break;
      child = scope;
    }
    if (!why) continue;
    if (why.warning) recordWarning(owner, owner.node.path, why.message);
    else recordProblem(owner, owner.node.path, why.message);
  }
  reservedBy.set(owner, kept);
}

/** What the hatches of a PullApplication need from it. */
export interface HatchApp extends IConstruct {
  readonly name: string;
  readonly hub: IHub;
  targets(): ISpoke[];
}

/** The objects a PullApplication renders per target spoke: its hub Application, or its ManifestWork. */
export type AppObject = 'HubApplication' | 'Work';

const APP_OBJECTS: Record<AppObject, { accessor: string; id: string; what: string }> = {
  HubApplication: { accessor: 'hubApplication', id: 'Application', what: 'hub Application' },
  Work: { accessor: 'manifestWork', id: 'ManifestWork', what: 'ManifestWork' },
};

/**
 * The escape hatch of one app object for one spoke. Before the fleet renders it reserves the object
 * (`<app>/<spoke>/<HubApplication|Work>/...`); rendering fills it in, or drops it and reports why
 * ({@link settleAppHatches}). Once the fleet rendered, it returns what was rendered, and throws when the
 * app rendered no such object for the spoke.
 */
export function appObjectHatch(app: HatchApp & Construct, spoke: string, which: AppObject, asked?: string): ApiObject {
  const { id } = APP_OBJECTS[which];
  const rendered = app.node.tryFindChild(spoke)?.node.tryFindChild(which);
  if (rendered) return handOut(ApiObject.of(rendered), asked);
  if (fleetRendered(app)) {
    const delivered = app.node.children.filter((c) => c.node.tryFindChild('Work')).map((c) => c.node.id);
    throw new Error(
      `${app.node.path}: app "${app.name}" renders nothing for spoke "${spoke}" (it delivers to ${delivered.length ? delivered.map((n) => `"${n}"`).join(', ') : 'no spoke'}): deploy it there first, or use one of those spokes`,
    );
  }
  // Created ahead of the spokes rendering creates in name order: the output keeps that order.
  sortChildrenInOutput(app);
  const identity = appObjectIdentity(app, spoke, which);
  const file = which === 'HubApplication' ? OutputFiles.APPLICATIONS : OutputFiles.works(spoke);
  return handOut(reserveObject(scopeFor(scopeFor(app, spoke), which, file), id, identity, app), asked);
}

/** What the hub Application or the ManifestWork of `app` for `spoke` is before its content is known. */
function appObjectIdentity(app: HatchApp, spoke: string, which: AppObject): ObjectIdentity {
  const argoNamespace = app.hub.argoNamespace;
  const hubApplication = staticHubApplicationName(app.name, spoke);
  return which === 'HubApplication'
    ? { apiVersion: ARGOCD_API_VERSION, kind: 'Application', name: hubApplication, namespace: argoNamespace }
    : {
        apiVersion: WORK_API_VERSION,
        kind: 'ManifestWork',
        name: manifestWorkName(argoNamespace, hubApplication),
        namespace: spoke,
      };
}

/**
 * After a PullApplication rendered: drops the objects its hatches asked for that it did not render, and
 * reports each (see {@link dropUnrendered}).
 */
export function settleAppHatches(app: HatchApp): void {
  const ledger = hubParts(app.hub).ledger;
  dropUnrendered(app, (obj) => {
    const holder = obj.node.scope!;
    const which = holder.node.id as AppObject;
    const spoke = holder.node.scope!.node.id;
    const { what } = APP_OBJECTS[which];
    // Named as it was asked for: renderedObject({ ... }), or the old accessor.
    const asked = askedAs(obj);
    const accessor = asked ?? APP_OBJECTS[which].accessor;
    const hatch = asked ?? `${accessor}('${spoke}')`;
    const hubApplicationHatch = asked
      ? renderedObjectCall({ kind: 'Application', spoke })
      : `hubApplication('${spoke}')`;
    const targets = app.targets().filter((s) => s.hub === app.hub);
    if (!targets.some((s) => s.name === spoke)) {
      const names = targets.map((s) => `"${s.name}"`).join(', ');
      return {
        message: `${hatch} asks for the ${what} of a spoke the app does not deliver to: app "${app.name}" renders nothing for spoke "${spoke}" (it delivers to ${names || 'no spoke'}): deploy it there first, or use one of those spokes`,
      };
    }
    const decision = ledger.decisionFor(spoke);
    if (decision.clear)
      return {
        warning: true,
        message: `${hatch}: this synth is step 2 of spoke "${spoke}"'s move to the agent-managed model, which renders neither the hub Application nor the ManifestWork of app "${app.name}", so the edits made through ${accessor} are left out of it`,
      };
    if (decision.model === DeliveryModel.AGENT_AUTONOMOUS)
      return {
        message: `${hatch}: spoke "${spoke}" runs the agent-autonomous model, so app "${app.name}" renders its Application into the spoke's own folder (spokes/${spoke}/applications.yaml) and the hub gets no ${what}: remove the use of ${accessor} for this spoke`,
      };
    if (decision.model === DeliveryModel.AGENT_MANAGED && which === 'Work')
      return {
        message: `${hatch}: spoke "${spoke}" runs the agent-managed model, so the argocd-agent principal delivers app "${app.name}" from its hub Application and no ManifestWork renders: edit ${hubApplicationHatch} instead, or remove the use of ${accessor} for this spoke`,
      };
    return undefined; // a problem of the app for this spoke (local-cluster, an Application that cannot be wrapped) says why
  });
}

/**
 * A PullApplicationSet rendered no ApplicationSet: drops the one created for it and, when its escape hatch
 * handed it out, reports why: an error for the agent-autonomous model (it never renders one), a warning
 * for step 2 of a move to the agent-managed model (the ApplicationSet comes back at step 3).
 */
export function settleApplicationSet(appSet: IConstruct & { readonly name: string }, autonomous: boolean): void {
  dropUnrendered(appSet, (obj) => {
    const hatch = askedAs(obj) ?? 'applicationSet';
    return autonomous
      ? {
          message: `${hatch}: the placement's GitOpsCluster runs the agent-autonomous model, so app "${appSet.name}" renders no ApplicationSet (each spoke's own folder holds its Application) and the edits made through ${hatch} would be lost: remove the use of ${hatch}`,
        }
      : {
          warning: true,
          message: `${hatch}: this synth is step 2 of a move of the placement's spokes to the agent-managed model, which renders no ApplicationSet (it comes back at step 3), so the edits made through ${hatch} are left out of it`,
        };
  });
}

/** One object a construct holds, and the spoke it is rendered for (if it is rendered per spoke). */
export interface HeldObject {
  readonly obj: ApiObject;
  /**
   * The spoke it is rendered for.
   * @default - not rendered per spoke (a query's `spoke` does not match it)
   */
  readonly spoke?: string;
}

/** What a construct renders, as its `renderedObject` answers from. */
export interface RenderedCatalog {
  /** How messages name the construct, for example `app "guestbook"`. */
  readonly what: string;
  /** The kinds it renders (the kinds of the objects it holds are added). */
  readonly kinds: readonly string[];
  /** The objects it holds now. */
  readonly objects: readonly HeldObject[];
  /**
   * The objects that exist only once the fleet rendered, and how to reach them: said when none matches before.
   * @default - every object exists before the fleet renders
   */
  readonly later?: string;
  /**
   * A message (after the construct path) for a query nothing matches, more precise than the general one.
   * @default - the general message
   */
  readonly missing?: (query: RenderedObjectQuery) => string | undefined;
}

/** The name of `spoke` as a query gives it. */
export function spokeNameOf(spoke: ISpoke | string | undefined): string | undefined {
  return spoke === undefined || typeof spoke === 'string' ? spoke : spoke.name;
}

/** The call `query` stands for, as messages quote it: `renderedObject({ kind: 'ManifestWork', spoke: 'east' })`. */
export function renderedObjectCall(query: RenderedObjectQuery): string {
  if (query === null || typeof query !== 'object') return `renderedObject(${JSON.stringify(query)})`;
  const spoke = spokeNameOf(query.spoke);
  const fields = [
    `kind: ${JSON.stringify(query.kind)}`,
    ...(spoke !== undefined ? [`spoke: ${JSON.stringify(spoke)}`] : []),
    ...(query.namespace !== undefined ? [`namespace: ${JSON.stringify(query.namespace)}`] : []),
    ...(query.name !== undefined ? [`name: ${JSON.stringify(query.name)}`] : []),
  ];
  return `renderedObject({ ${fields.join(', ').replace(/"/g, "'")} })`;
}

/**
 * The ApiObjects under `owner` (its whole subtree: no pullfleet construct holds another), each with the
 * spoke `spokeOf` says it is rendered for, given the ids of its scopes below `owner`.
 */
export function heldObjects(
  owner: IConstruct,
  spokeOf: (obj: ApiObject, ids: readonly string[]) => string | undefined = () => undefined,
): HeldObject[] {
  const depth = owner.node.scopes.length;
  return owner.node
    .findAll()
    .filter((c): c is ApiObject => ApiObject.isApiObject(c))
    .map((obj) => {
      const spoke = spokeOf(
        obj,
        obj.node.scopes.slice(depth).map((s) => s.node.id),
      );
      return spoke === undefined ? { obj } : { obj, spoke };
    });
}

function describe(held: HeldObject): string {
  const { obj, spoke } = held;
  const namespace = obj.metadata.namespace;
  return `${obj.kind} ${namespace !== undefined ? `${namespace}/` : ''}${obj.metadata.name}${spoke !== undefined ? ` (spoke "${spoke}")` : ''}`;
}

/**
 * The one object of `catalog` that `query` identifies, handed out (see {@link handOut}). Throws, naming
 * `owner` and the kinds it renders, when the construct renders no such kind, when nothing matches, or
 * when more than one object matches.
 */
export function pickRendered(owner: IConstruct, query: RenderedObjectQuery, catalog: RenderedCatalog): ApiObject {
  const path = owner.node.path;
  if (query === null || typeof query !== 'object' || typeof query.kind !== 'string' || query.kind.length === 0)
    throw new Error(
      `${path}: renderedObject(${JSON.stringify(query)}): give the kind of the object, for example renderedObject({ kind: '${catalog.kinds[0] ?? catalog.objects[0]?.obj.kind ?? 'ConfigMap'}' })`,
    );
  const asked = renderedObjectCall(query);
  const spoke = spokeNameOf(query.spoke);
  const kinds = [...new Set([...catalog.kinds, ...catalog.objects.map((o) => o.obj.kind)])];
  const later = catalog.later !== undefined && !fleetRendered(owner) ? `; ${catalog.later}` : '';
  if (!kinds.includes(query.kind))
    throw new Error(
      `${path}: ${asked}: ${catalog.what} renders no ${query.kind}: it renders ${kinds.length > 0 ? kinds.join(', ') : 'nothing (a problem of its own, reported at synth)'}${later}`,
    );
  const ofKind = catalog.objects.filter((o) => o.obj.kind === query.kind);
  const matches = ofKind.filter(
    (o) =>
      (query.name === undefined || o.obj.metadata.name === query.name) &&
      (query.namespace === undefined || o.obj.metadata.namespace === query.namespace) &&
      (spoke === undefined || o.spoke === spoke),
  );
  if (matches.length === 1) return handOut(matches[0].obj, asked);
  if (matches.length > 1)
    throw new Error(
      `${path}: ${asked}: ${catalog.what} renders ${matches.length} ${query.kind} objects that match (${matches.map(describe).join(', ')}): give name, namespace or spoke to choose one`,
    );
  const missing = catalog.missing?.(query);
  if (missing !== undefined) throw new Error(`${path}: ${missing}`);
  throw new Error(
    `${path}: ${asked}: ${catalog.what} renders no ${query.kind} that matches (${ofKind.length > 0 ? `it renders ${ofKind.map(describe).join(', ')}` : `it renders none now`})${later}`,
  );
}

/**
 * `renderedObject(query)` of a PullApplication: its hub Application or ManifestWork for `query.spoke`
 * (created when first asked for, before the fleet renders: see {@link appObjectHatch}), and once the fleet
 * rendered anything it rendered (an agent-autonomous spoke's Application, the rollout policy ConfigMap).
 */
export function appRenderedObject(app: HatchApp & Construct, query: RenderedObjectQuery): ApiObject {
  const kind = query?.kind;
  const which: AppObject | undefined =
    kind === 'Application' ? 'HubApplication' : kind === 'ManifestWork' ? 'Work' : undefined;
  const spoke = spokeNameOf(query?.spoke);
  const rendered = fleetRendered(app);
  const what = `app "${app.name}"`;
  const asked = which ? renderedObjectCall(query) : '';
  if (which && spoke === undefined && !rendered)
    throw new Error(
      `${app.node.path}: ${asked}: ${what} renders its ${kind} per spoke, and the spokes it delivers to are known once the whole hub is declared: give the spoke, as in renderedObject({ kind: '${kind}', spoke })`,
    );
  // An agent-autonomous spoke's Application is in the spoke's own folder: the general lookup finds it.
  const autonomous =
    rendered && spoke !== undefined && app.node.tryFindChild(spoke)?.node.tryFindChild('SpokeApplication');
  if (which && spoke !== undefined && !(which === 'HubApplication' && autonomous)) {
    const expected = rendered ? undefined : appObjectIdentity(app, spoke, which);
    const matches = (name: string | undefined, namespace: string | undefined) =>
      (query.name === undefined || query.name === name) &&
      (query.namespace === undefined || query.namespace === namespace);
    if (expected && !matches(expected.name, expected.namespace))
      throw new Error(
        `${app.node.path}: ${asked}: the ${kind} ${what} renders for spoke "${spoke}" is ${expected.namespace}/${expected.name}: give that name and namespace, or leave them out`,
      );
    const obj = appObjectHatch(app, spoke, which, asked);
    if (!matches(obj.metadata.name, obj.metadata.namespace))
      throw new Error(
        `${app.node.path}: ${asked}: the ${kind} ${what} rendered for spoke "${spoke}" is ${obj.metadata.namespace}/${obj.metadata.name}: give that name and namespace, or leave them out`,
      );
    return obj;
  }
  return pickRendered(app, query, {
    what,
    kinds: ['Application', 'ManifestWork'],
    objects: heldObjects(app, (_obj, ids) => (ids[0] === 'RolloutPolicy' ? undefined : ids[0])),
    later: 'the rollout policy ConfigMap of an app with a rollout exists once the fleet renders: read it after synth',
  });
}
