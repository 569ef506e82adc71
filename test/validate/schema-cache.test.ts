/**
 * Compiled CRD validators are kept on disk between runs, keyed by the schema: an unchanged schema is loaded
 * instead of compiled, a changed one is compiled again, and a kept file that was cut short or edited is never
 * trusted. Kubernetes kinds are checked on the object itself (no copy), with the same findings as before.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { checkObject, compiledValidator, schemaFindings } from '../../src/validate/schema.js';

const scratch: string[] = [];
afterAll(() => scratch.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

function tmp(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pullfleet-validators-'));
  scratch.push(dir);
  return dir;
}

const schema = {
  type: 'object',
  required: ['spec'],
  properties: { spec: { type: 'object', properties: { mode: { type: 'string', enum: ['a', 'b'] } } } },
};

const kept = (dir: string) => fs.readdirSync(dir).filter((f) => /^validator-[0-9a-f]{32}\.cjs$/.test(f));

/** Replaces the code of a kept validator; with `rehash`, the hash on its first line is made to match it. */
function rewrite(file: string, code: string, rehash: boolean): void {
  const [header] = fs.readFileSync(file, 'utf8').split('\n', 1);
  const first = rehash ? `// sha256:${createHash('sha256').update(code).digest('hex')}` : header;
  fs.writeFileSync(file, `${first}\n${code}`);
}

describe('compiled validators kept on disk', () => {
  test('GIVEN a schema WHEN compiled THEN its code is kept once, and the kept validator judges as the compiled one', () => {
    const dir = tmp();
    const compiled = compiledValidator(schema, dir);
    expect(kept(dir)).toHaveLength(1);
    const loaded = compiledValidator(schema, dir);
    expect(kept(dir)).toHaveLength(1);
    for (const data of [{ spec: { mode: 'a' } }, { spec: { mode: 'c' } }, {}]) {
      expect(loaded(data)).toBe(compiled(data));
      expect(loaded.errors ?? null).toStrictEqual(compiled.errors ?? null);
    }
    expect(loaded({ spec: { mode: 'c' } })).toBe(false);
    expect(loaded.errors?.[0]).toMatchObject({ instancePath: '/spec/mode', keyword: 'enum' });
  });

  test('GIVEN a kept file whose code matches its hash THEN that code is what runs (it is not compiled again)', () => {
    const dir = tmp();
    compiledValidator(schema, dir);
    rewrite(path.join(dir, kept(dir)[0]), 'module.exports = () => true;', true);
    expect(compiledValidator(schema, dir)({ spec: { mode: 'c' } })).toBe(true);
  });

  test('GIVEN a changed schema THEN it is compiled and kept under a key of its own', () => {
    const dir = tmp();
    compiledValidator(schema, dir);
    const changed = compiledValidator({ ...schema, required: [] }, dir);
    expect(kept(dir)).toHaveLength(2);
    expect(changed({})).toBe(true);
  });

  test('GIVEN a kept file whose code no longer matches its hash THEN it is compiled again and replaced', () => {
    const dir = tmp();
    compiledValidator(schema, dir);
    const file = path.join(dir, kept(dir)[0]);
    const original = fs.readFileSync(file, 'utf8');
    for (const code of ['', 'module.exports = () => true;', original.slice(original.indexOf('\n') + 1, -10)]) {
      rewrite(file, code, false);
      const validate = compiledValidator(schema, dir);
      expect(validate({ spec: { mode: 'c' } })).toBe(false);
      expect(fs.readFileSync(file, 'utf8')).toBe(original);
    }
  });

  test('GIVEN no cache folder THEN validators are compiled and nothing is written', () => {
    const validate = compiledValidator(schema, undefined);
    expect(validate({ spec: { mode: 'b' } })).toBe(true);
  });

  test('GIVEN a cache folder that cannot be written THEN validation works all the same', () => {
    const dir = tmp();
    const blocked = path.join(dir, 'file');
    fs.writeFileSync(blocked, 'not a folder\n');
    const validate = compiledValidator(schema, path.join(blocked, 'cache'));
    expect(validate({ spec: { mode: 'c' } })).toBe(false);
  });
});

describe('Kubernetes kinds are checked on the object itself', () => {
  test('GIVEN a valid and an invalid object THEN the findings are those of the model, and the object is not changed', () => {
    const good = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 'v' } };
    const bad = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { k: 1 } };
    const before = JSON.stringify([good, bad]);
    expect(schemaFindings(good)).toStrictEqual([]);
    expect(schemaFindings(bad)).toStrictEqual([
      { severity: 'error', message: 'data.k is 1, which must be string: fix the value (schema)', value: '1' },
    ]);
    expect(JSON.stringify([good, bad])).toBe(before);
  });

  test('GIVEN the same invalid manifest in two works THEN both are reported, each under its own work', () => {
    const work = (name: string) => ({
      apiVersion: 'work.open-cluster-management.io/v1',
      kind: 'ManifestWork',
      metadata: { name, namespace: 'east' },
      spec: {
        workload: {
          manifests: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'same' }, data: { k: 1 } }],
        },
      },
    });
    for (const name of ['first', 'second'])
      expect(checkObject(work(name)).map((f) => f.message)).toContain(
        `ManifestWork east/${name} manifest[0] ConfigMap same: data.k is 1, which must be string: fix the value (schema)`,
      );
  });
});
