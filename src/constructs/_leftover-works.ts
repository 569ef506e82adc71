/**
 * Works left behind by step 1 of an app becoming waved. Step 1 renders an app's works once more with Argo CD's
 * Prune=false, so that when step 2 drops them from `dist/` the hub's Argo CD leaves them for the controller to
 * take over. When the app is removed, renamed or leaves a spoke before step 2, no waved hub Application takes
 * such a work over, and Argo CD would leave it on the hub for good, still delivering. Synth renders each of
 * those works once more, as the previous output had it but without Prune=false: the hub's Argo CD applies
 * that, and the next synth drops the work, which Argo CD then prunes (and `pullfleet plan` lists it then).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Construct } from 'constructs';
import { parseAllDocuments } from 'yaml';
import { isPruneProtected, unprotectFromPrune } from '../model/rollout/static.js';
import type { KubeObject } from '../model/core/types.js';
import { addProvenance, apiObjectFrom } from './_output.js';
import { OutputFiles, routeOutput } from './output.js';
import { hubParts } from './_hub-parts.js';
import { recordWarning } from './_props-check.js';
import type { IHub } from './interfaces.js';

/** The objects of one YAML file of the previous output, or undefined when it cannot be read. */
function readObjects(file: string): KubeObject[] | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  const objects: KubeObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) return undefined;
    const value: unknown = doc.toJS();
    if (value && typeof value === 'object' && !Array.isArray(value)) objects.push(value as KubeObject);
  }
  return objects;
}

/**
 * Renders, for every work the previous synth left protected by Prune=false that this synth neither renders nor
 * hands to the controller, the work once more without Prune=false, with a warning saying why and what comes
 * next. A work the previous output no longer holds (a plan state given alone, an edited folder) is left as it
 * is, with a warning saying how to delete it. Runs after every app of the hub rendered.
 */
export function renderLeftoverWorks(hub: IHub): void {
  const { ledger } = hubParts(hub);
  const folder = ledger.previousOutputFolder;
  let holder: Construct | undefined;
  for (const spoke of ledger.previousSpokes()) {
    const rendered = ledger.renderedWorkNames(spoke.name);
    const left = (spoke.works ?? []).filter((w) => w.pruneProtected === true && !rendered.has(w.name));
    if (left.length === 0) continue;
    const file = OutputFiles.works(spoke.name);
    const objects = folder ? readObjects(path.join(folder, hub.name, file)) : undefined;
    for (const work of left) {
      const previous = objects?.find(
        (o) => o.kind === 'ManifestWork' && o.metadata?.name === work.name && o.metadata?.namespace === spoke.name,
      );
      if (!previous || !isPruneProtected(previous)) {
        recordWarning(
          hub,
          hub.node.path,
          `ManifestWork ${spoke.name}/${work.name} was rendered with Argo CD's Prune=false (step 1 of an app becoming waved) and nothing takes it over now, but the previous output (${folder ? path.join(folder, hub.name, file) : 'a plan state alone'}) no longer holds it: the hub's Argo CD leaves it delivering; delete it by hand to remove what it delivers (its deleteOption decides)`,
        );
        continue;
      }
      holder ??= new Construct(hub, 'LeftoverWorks');
      const scope = new Construct(holder, `${spoke.name}.${work.name}`);
      routeOutput(scope, file);
      const obj = apiObjectFrom(scope, 'ManifestWork', unprotectFromPrune(previous) as never);
      // It keeps the construct path of the app that made it: plan names that app as its cause.
      addProvenance(obj, true);
      ledger.addRenderedWork(spoke.name, work.name, work.deleteOption, work.fromAgent === true);
      recordWarning(
        hub,
        hub.node.path,
        `ManifestWork ${spoke.name}/${work.name} was rendered with Argo CD's Prune=false (step 1 of an app becoming waved), and the app no longer delivers it (removed, renamed or moved off the spoke before step 2): it is rendered once more without Prune=false so that the hub's Argo CD can prune it; commit, let the hub's Argo CD apply it, then synthesize again to remove it (plan lists the deletion then)`,
      );
    }
  }
}
