import type { OutputWriter } from '../../src/constructs/_output-writer.js';
import type { Fleet, HubProps } from '../../src/constructs/index.js';
import { testFleet } from '../support/fleet-builder.js';

export type Obj = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
};

/** A fleet with one hub, cluster set `prod` and spokes `east`, `west` (prod) and `ocp` (OpenShift, no exclusive set). */
export function smallFleet(hubProps: HubProps = {}) {
  const { fleet, hub, sets, spokes } = testFleet({
    hub: hubProps,
    sets: ['prod'],
    spokes: [
      { name: 'east', labels: { region: 'us-east' } },
      { name: 'west', labels: { region: 'us-west' } },
      { name: 'ocp', set: null, openshift: true },
    ],
  });
  const [east, west, ocp] = spokes;
  return { fleet, hub, prod: sets.prod, east, west, ocp };
}

/** Every rendered object, flattened, with its file. */
export function allObjects(fleet: Fleet): Array<{ file: string; obj: Obj }> {
  const out: Array<{ file: string; obj: Obj }> = [];
  for (const [file, objects] of fleet.renderObjects()) for (const obj of objects) out.push({ file, obj: obj as Obj });
  return out;
}

export function find(fleet: Fleet, kind: string, name: string, namespace?: string): Obj {
  const hit = allObjects(fleet).find(
    ({ obj }) =>
      obj.kind === kind &&
      obj.metadata.name === name &&
      (namespace === undefined || obj.metadata.namespace === namespace),
  );
  if (!hit) throw new Error(`no ${kind} ${namespace ?? ''}/${name}`);
  return hit.obj;
}

/** The synth error message, or a failure when synth succeeds. */
export function synthError(fleet: Fleet): string {
  try {
    fleet.renderObjects();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the fleet to fail validation');
}

/** Writes 300 files (every hundredth in parts larger than one write) and returns what each must hold. */
export function writeMany(writer: OutputWriter): Record<string, string> {
  writer.expect(300);
  const expected: Record<string, string> = {};
  for (let i = 0; i < 300; i++) {
    const file = `hub/hub/works/s${i}.yaml`;
    const out = writer.file(file);
    const parts = i % 100 === 0 ? ['a'.repeat(70_000), 'b'.repeat(70_000), 'c\n'] : [`s${i}: `, 'x\n'];
    parts.forEach((part) => out.add(part));
    out.close();
    expected[file] = parts.join('');
  }
  return expected;
}
