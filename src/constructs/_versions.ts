/**
 * The check of declared versions (HubProps.versions, SpokeProps.versions, ClusterSetProps.spokeVersions)
 * against what a hub renders, once the hub has rendered: every feature the fleet uses (table:
 * src/model/core/features.ts) against the release of the component that must have it. A release that lacks a
 * feature is a problem of the construct that uses it; a release known to mishandle it, a warning.
 */
import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { ARGO_VALUE_FEATURES, argoSpecUnsupported } from '../model/core/argo-spec-features.js';
import { FEATURES } from '../model/core/features.js';
import { ARGOCD_API_VERSION } from '../model/core/keys.js';
import type { Application, JsonObject } from '../model/core/types.js';
import { CLUSTER_NAME_PARAM } from '../model/delivery/appset.js';
import { buildPayloadApplication } from '../model/delivery/manifestwork.js';
import { parseVersion, versionIn } from '../model/core/versions.js';
import { DeliveryModel } from '../model/delivery/delivery-model.js';
import { featureUseFindings, type FeatureUse } from '../model/validation/versions.js';
import type { FeedbackScrape } from './controller-install.js';
import { HubFlavor, type IGitOpsCluster } from './interfaces.js';
import type { Spoke } from './spoke.js';
import { kindOf } from './_ids.js';
import { recordProblem } from './_problems.js';
import { recordWarning } from './_props-check.js';

/** What the check reads of a hub (the Hub class, without importing it). */
export interface VersionedHub extends IConstruct {
  readonly name: string;
  readonly flavor: HubFlavor;
  readonly resourceSummaries: boolean;
  readonly feedbackScrape: FeedbackScrape;
  readonly versions: { readonly argoCD?: string; readonly ocm?: string; readonly acm?: string };
  readonly spokes: Spoke[];
  readonly gitOpsClusters: IGitOpsCluster[];
}

/** The releases `hub` declares (none for a hub that is not a Hub, such as a test double). */
export function hubVersionsOf(hub: IConstruct): {
  readonly argoCD?: string;
  readonly ocm?: string;
  readonly acm?: string;
} {
  return (hub as Partial<VersionedHub>).versions ?? {};
}

/** The rendered object `id` under `c`, as JSON; undefined when there is none. */
function renderedJson(c: IConstruct, id: string): Record<string, unknown> | undefined {
  const child = c.node.tryFindChild(id);
  return child && ApiObject.isApiObject(child) ? (child.toJson() as Record<string, unknown>) : undefined;
}

/**
 * Whether the ApplicationSet template of a waved app renders `syncPolicy.automated.enabled: false` for a hub
 * on `hubArgoCD`: on releases that compare the generated spec raw with the live one (3.3.7–3.3.14,
 * 3.4.0–3.4.6, 3.5.0), where the live app carries the `enabled: false` the applicationset-controller writes and
 * the template lacks it, so each pass sends every app back to Waiting (argo-cd #27577). It is rendered only when
 * it changes nothing else: automated sync without prune. That controller sets `enabled: false` on every app of a
 * RollingSync ApplicationSet anyway, and takes the `prune` of the operations it writes from automated sync
 * only while automated sync is enabled in the template: with prune on, `enabled: false` would turn it off.
 */
export function disablesAutomatedInTemplate(hubArgoCD: string | undefined, automated: unknown): boolean {
  const declared = hubArgoCD === undefined ? undefined : parseVersion(hubArgoCD);
  if (!declared || !automated || typeof automated !== 'object') return false;
  const a = automated as { enabled?: unknown; prune?: unknown };
  if (a.enabled === false || a.prune === true) return false;
  return FEATURES.rollingSyncWaves.broken
    .filter((r) => r.effect.includes('#27577'))
    .some((r) => versionIn(declared, parseVersion(r.from)!, parseVersion(r.to)) !== 'no');
}

/** Checks what `hub` renders against the versions its fleet declares; records problems and warnings. */
export function checkDeclaredVersions(hub: VersionedHub): void {
  const uses: FeatureUse[] = [];
  const hubSubject = `hub "${hub.name}"`;
  const { argoCD, ocm, acm } = hub.versions;
  if (hub.resourceSummaries)
    uses.push({
      feature: 'resourceSummaries',
      path: hub.node.path,
      usedBy: hubSubject,
      subject: hubSubject,
      declared: ocm,
    });
  const watch = String(hub.feedbackScrape) === 'Watch';
  if (watch)
    uses.push({
      feature: 'watchFeedback',
      path: hub.node.path,
      usedBy: hubSubject,
      subject: hubSubject,
      declared: ocm,
    });

  // Undeclared: nothing to check, and no rendered object to read (large fleets stay as fast as before).
  for (const c of argoCD === undefined ? [] : hub.node.findAll()) {
    if (kindOf(c) !== 'PullApplicationSet') continue;
    const appSet = renderedJson(c, 'ApplicationSet') as
      | {
          spec?: {
            strategy?: { type?: string; deletionOrder?: string };
            template?: { spec?: { syncPolicy?: { automated?: unknown } } };
          };
        }
      | undefined;
    const strategy = appSet?.spec?.strategy;
    if (strategy?.type !== 'RollingSync') continue;
    const usedBy = `PullApplicationSet "${(c as { name?: string }).name ?? c.node.id}"`;
    const automated = appSet?.spec?.template?.spec?.syncPolicy?.automated as
      { enabled?: unknown; prune?: unknown } | undefined;
    // enabled: false in the template ends the loop (rendered so where that is safe); without automated sync
    // in the template there is nothing to compare.
    const loopHandled = !automated || automated.enabled === false;
    uses.push({
      feature: 'rollingSyncWaves',
      path: c.node.path,
      usedBy,
      subject: hubSubject,
      declared: argoCD,
      ...(loopHandled ? { handled: ['3.3.7', '3.4.0', '3.5.0'] } : {}),
    });
    if (strategy.deletionOrder !== undefined)
      uses.push({ feature: 'deletionOrder', path: c.node.path, usedBy, subject: hubSubject, declared: argoCD });
  }

  for (const gc of hub.gitOpsClusters) {
    if (hub.flavor !== HubFlavor.ACM || acm === undefined) break;
    const rendered = renderedJson(gc, 'Resource') as { spec?: { gitopsAddon?: unknown } } | undefined;
    if (rendered?.spec?.gitopsAddon === undefined) continue;
    uses.push({
      feature: 'gitopsAddon',
      path: gc.node.path,
      usedBy: `GitOpsCluster "${gc.name}"`,
      subject: hubSubject,
      declared: acm,
    });
  }

  for (const spoke of hub.spokes) {
    const { versions, problems, from } = ((r) => ({ ...r, from: r.versions.from }))(spoke._resolvedVersions());
    for (const message of problems) recordProblem(spoke, spoke.node.path, message);
    const klusterlet = versions.klusterlet;
    if (klusterlet === undefined || spoke.deliveryModel !== DeliveryModel.BASIC) continue;
    const subject =
      from.klusterlet === `spoke "${spoke.name}"` ? from.klusterlet : `spoke "${spoke.name}" (from ${from.klusterlet})`;
    const usedBy = `${hubSubject}, delivering to spoke "${spoke.name}",`;
    if (hub.resourceSummaries)
      uses.push({
        feature: 'resourceSummariesAgent',
        path: spoke.node.path,
        usedBy,
        subject,
        declared: klusterlet,
        handled: ['1.0'],
      });
    else {
      const frozen = FEATURES.resourceSummariesAgent.broken[0];
      const declared = parseVersion(klusterlet)!;
      if (versionIn(declared, parseVersion(frozen.from)!, parseVersion(frozen.to)) === 'yes')
        recordWarning(
          spoke,
          spoke.node.path,
          `${hubSubject} has resource summaries off, and ${subject} declares klusterlet ${klusterlet}: ${frozen.effect}. Fix: ${frozen.fix}`,
        );
    }
    if (watch)
      uses.push({ feature: 'watchFeedbackAgent', path: spoke.node.path, usedBy, subject, declared: klusterlet });
  }

  spokeArgoFindings(hub);
  hubArgoFindings(hub);

  for (const finding of featureUseFindings(uses)) {
    if (finding.severity === 'error') recordProblem(hub, finding.path, finding.message);
    else recordWarning(hub, finding.path, finding.message);
  }
}

/** The nearest pullfleet construct at or above `c` (the app a work belongs to). */
function ownerOf(c: IConstruct): IConstruct {
  for (const scope of [...c.node.scopes].reverse()) if (kindOf(scope) !== undefined) return scope;
  return c;
}

/**
 * Every Application spec field a spoke's declared Argo CD lacks, in what is delivered to it: the Applications of
 * the works synth renders, and the payload the controller builds from each ApplicationSet's template for the
 * spokes its placement selects offline. The fields and their first release come from `argoSpecRequirements`
 * (src/model/core/argo-spec-features.ts). One error per app, field and release, listing the spokes.
 */
function spokeArgoFindings(hub: VersionedHub): void {
  const argoOf = new Map<string, { version: string; from: string }>();
  for (const spoke of hub.spokes) {
    const { versions } = spoke._resolvedVersions();
    if (versions.argoCD !== undefined) argoOf.set(spoke.name, { version: versions.argoCD, from: versions.from.argoCD });
  }
  if (argoOf.size === 0) return;
  // owner path → field → release → spokes
  const found = new Map<
    string,
    { usedBy: string; fields: Map<string, { what: string; since: string; spokes: Map<string, string[]> }> }
  >();
  const check = (owner: IConstruct, usedBy: string, spec: JsonObject, spoke: string) => {
    const declared = argoOf.get(spoke);
    if (!declared) return;
    for (const r of argoSpecUnsupported(spec, declared.version)) {
      let entry = found.get(owner.node.path);
      if (!entry) found.set(owner.node.path, (entry = { usedBy, fields: new Map() }));
      let field = entry.fields.get(r.path);
      if (!field) entry.fields.set(r.path, (field = { what: r.what, since: r.since, spokes: new Map() }));
      field.spokes.set(declared.version, [...(field.spokes.get(declared.version) ?? []), spoke]);
    }
  };
  for (const c of hub.node.findAll()) {
    if (!ApiObject.isApiObject(c) || c.kind !== 'ManifestWork' || !argoOf.has(c.metadata.namespace ?? '')) continue;
    const work = c.toJson() as {
      spec?: { workload?: { manifests?: Array<{ apiVersion?: string; kind?: string; spec?: JsonObject }> } };
    };
    const owner = ownerOf(c);
    for (const m of work.spec?.workload?.manifests ?? [])
      if (m.apiVersion === ARGOCD_API_VERSION && m.kind === 'Application' && m.spec)
        check(
          owner,
          `${kindOf(owner) ?? 'app'} "${owner.node.id.replace(/^[^:]*:/, '')}"`,
          m.spec,
          c.metadata.namespace!,
        );
  }
  for (const c of hub.node.findAll()) {
    if (kindOf(c) !== 'PullApplicationSet') continue;
    const appSet = renderedJson(c, 'ApplicationSet') as
      | {
          metadata?: { name?: string; namespace?: string };
          spec?: { template?: { metadata?: JsonObject; spec?: JsonObject } };
        }
      | undefined;
    const template = appSet?.spec?.template;
    const placement = (
      c as { placement?: { evaluatedOffline?: boolean; selectedSpokes?: () => Array<{ name: string }> } }
    ).placement;
    if (!template?.spec || !placement?.evaluatedOffline || typeof placement.selectedSpokes !== 'function') continue;
    for (const spoke of placement.selectedSpokes()) {
      if (!argoOf.has(spoke.name)) continue;
      const generated = JSON.parse(JSON.stringify(template).replaceAll(CLUSTER_NAME_PARAM, spoke.name)) as {
        metadata: Application['metadata'];
        spec: Application['spec'];
      };
      const payload = buildPayloadApplication({
        apiVersion: ARGOCD_API_VERSION,
        kind: 'Application',
        metadata: { ...generated.metadata, namespace: appSet?.metadata?.namespace ?? hub.node.id },
        spec: generated.spec,
      });
      check(
        c,
        `PullApplicationSet "${(c as { name?: string }).name ?? c.node.id}"`,
        payload.spec as JsonObject,
        spoke.name,
      );
    }
  }
  for (const [path, { usedBy, fields }] of found) {
    for (const [field, { what, since, spokes }] of fields) {
      for (const [version, names] of spokes) {
        const shown =
          names.length > 5 ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more` : names.join(', ');
        recordProblem(
          hub,
          path,
          `${usedBy} delivers ${field} (${what}), which needs spoke Argo CD ${since} or later, but spokes ${shown} declare Argo CD ${version}: the work agent's server-side apply of the Application is refused there. Fix: leave that setting out for those spokes, or upgrade their Argo CD and declare it`,
        );
      }
    }
  }
}

/**
 * Every Application spec field the hub's declared Argo CD lacks, in the hub Applications and ApplicationSet
 * templates synth renders (the hub's CRDs refuse them). Behaviours a value selects (an `oci://` repoURL) are
 * left out: the hub Argo CD never reconciles a pull app.
 */
function hubArgoFindings(hub: VersionedHub): void {
  const declared = hub.versions.argoCD;
  if (declared === undefined) return;
  const behaviours = new Set(ARGO_VALUE_FEATURES.map((f) => f.what));
  for (const c of hub.node.findAll()) {
    if (!ApiObject.isApiObject(c) || (c.kind !== 'Application' && c.kind !== 'ApplicationSet')) continue;
    const json = c.toJson() as { spec?: JsonObject & { template?: { spec?: JsonObject } } };
    const spec = c.kind === 'Application' ? json.spec : json.spec?.template?.spec;
    if (!spec) continue;
    const owner = ownerOf(c);
    for (const r of argoSpecUnsupported(spec, declared)) {
      if (behaviours.has(r.what)) continue;
      recordProblem(
        hub,
        owner.node.path,
        `${c.kind} ${c.metadata.name} renders ${c.kind === 'Application' ? r.path : r.path.replace(/^spec\./, 'spec.template.spec.')} (${r.what}), which needs hub Argo CD ${r.since} or later, but hub "${hub.name}" declares Argo CD ${declared}: the hub refuses it. Fix: leave that setting out, or upgrade the hub Argo CD and declare it`,
      );
    }
  }
}
