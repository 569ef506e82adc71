/**
 * Writes the controller image as an OCI image archive (an OCI image layout in one tar, what
 * `skopeo copy oci-archive:<file> docker://<ref>` and `podman load` read), without a container engine:
 * one gzip layer per `COPY --from=rootfs /rootfs/<layer>/ /` of the Dockerfile's last stage, taken from
 * the folders scripts/image/rootfs.sh assembled, and the image configuration of that stage (ENV, WORKDIR,
 * USER, EXPOSE, ENTRYPOINT, LABEL). Any other instruction there is refused, so the Dockerfile and this
 * archive cannot describe different images.
 *
 *   tsx scripts/image/oci-image.ts --rootfs <dir> --dockerfile Dockerfile --out <file.oci.tar> \
 *     --tag <tag> [--arg NAME=value ...]
 *
 * Reproducible: layers are GNU tar archives of the files in byte order, owned by 0:0, dated
 * SOURCE_DATE_EPOCH, without atime / ctime, gzip-compressed with no name or time in the header; the
 * configuration's `created` is SOURCE_DATE_EPOCH too. Prints a JSON summary (digests, sizes) on stdout.
 */
import { spawn } from 'node:child_process';
import { createHash, type Hash } from 'node:crypto';
import {
  createWriteStream,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGzip } from 'node:zlib';

const MEDIA = {
  index: 'application/vnd.oci.image.index.v1+json',
  manifest: 'application/vnd.oci.image.manifest.v1+json',
  config: 'application/vnd.oci.image.config.v1+json',
  layer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** The image configuration a Dockerfile stage describes. */
interface StageConfig {
  /** Layer folders under the rootfs, in order. */
  readonly layers: string[];
  readonly env: Array<[string, string]>;
  workingDir?: string;
  user?: string;
  readonly exposedPorts: string[];
  entrypoint?: string[];
  readonly labels: Array<[string, string]>;
}

/** Splits `a=b c="d e"` into pairs, honouring double quotes and backslash escapes. */
function keyValues(text: string, instruction: string): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  const pattern = /\s*([A-Za-z0-9_.-]+)=("((?:[^"\\]|\\.)*)"|(\S*))/y;
  let rest = text.trim();
  while (rest) {
    pattern.lastIndex = 0;
    const match = pattern.exec(rest);
    if (!match) throw new Error(`Dockerfile: cannot read "${rest}" in ${instruction} (use key=value or key="value")`);
    pairs.push([match[1], match[3] !== undefined ? match[3].replace(/\\(.)/g, '$1') : match[4]]);
    rest = rest.slice(pattern.lastIndex).trim();
  }
  return pairs;
}

/**
 * The configuration of the last stage of `text` (a Dockerfile), with `${NAME}` replaced by `args`
 * (or the stage's ARG defaults). Throws on an instruction the daemonless build does not reproduce.
 */
function parseLastStage(text: string, args: Readonly<Record<string, string>>): StageConfig {
  const lines = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const from = lines.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true);
  if (from < 0) throw new Error('Dockerfile: no FROM');
  if (!/^FROM\s+scratch\s*$/i.test(lines[from]))
    throw new Error(`Dockerfile: the last stage must start FROM scratch, not "${lines[from]}"`);
  const values: Record<string, string> = {};
  const substitute = (value: string) =>
    value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (_, braced?: string, bare?: string) => {
      const name = (braced ?? bare)!;
      if (!(name in values)) throw new Error(`Dockerfile: \${${name}} is not an ARG of the last stage`);
      return values[name];
    });
  const stage: StageConfig = { layers: [], env: [], exposedPorts: [], labels: [] };
  for (const line of lines.slice(from + 1)) {
    const [, instruction, rest] = /^(\S+)\s+(.*)$/.exec(line) ?? [];
    switch (instruction?.toUpperCase()) {
      case 'ARG': {
        const [, name, fallback] = /^([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?$/.exec(rest.trim()) ?? [];
        if (!name) throw new Error(`Dockerfile: cannot read ARG ${rest}`);
        values[name] = args[name] ?? fallback?.replace(/^"(.*)"$/, '$1') ?? '';
        break;
      }
      case 'COPY': {
        const match = /^--from=rootfs\s+\/rootfs\/([a-z]+)\/\s+\/$/.exec(rest.trim());
        if (!match)
          throw new Error(`Dockerfile: only "COPY --from=rootfs /rootfs/<layer>/ /" is reproduced, not "${line}"`);
        stage.layers.push(match[1]);
        break;
      }
      case 'ENV':
        for (const [key, value] of keyValues(rest, 'ENV')) stage.env.push([key, substitute(value)]);
        break;
      case 'LABEL':
        for (const [key, value] of keyValues(rest, 'LABEL')) stage.labels.push([key, substitute(value)]);
        break;
      case 'WORKDIR':
        stage.workingDir = rest.trim();
        break;
      case 'USER':
        stage.user = rest.trim();
        break;
      case 'EXPOSE':
        for (const port of rest.trim().split(/\s+/)) stage.exposedPorts.push(port.includes('/') ? port : `${port}/tcp`);
        break;
      case 'ENTRYPOINT': {
        const parsed: unknown = JSON.parse(rest);
        if (!Array.isArray(parsed) || !parsed.every((p) => typeof p === 'string'))
          throw new Error('Dockerfile: ENTRYPOINT must be the JSON (exec) form');
        stage.entrypoint = parsed;
        break;
      }
      default:
        throw new Error(
          `Dockerfile: the daemonless build does not reproduce "${line}"; extend scripts/image/oci-image.ts`,
        );
    }
  }
  if (stage.layers.length === 0) throw new Error('Dockerfile: the last stage copies no layer');
  return stage;
}

/** Every path under `root`, relative, in byte order (parents before children). */
function listTree(root: string): string[] {
  const paths: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      paths.push(relative(root, full));
      if (lstatSync(full).isDirectory()) walk(full);
    }
  };
  walk(root);
  return paths.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** Passes bytes through, hashing and counting them. */
class Tap extends Transform {
  readonly hash: Hash = createHash('sha256');
  size = 0;
  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.hash.update(chunk);
    this.size += chunk.length;
    done(null, chunk);
  }
}

/** A reproducible tar of `paths` (relative to `dir`) on stdout of GNU tar. */
function tarStream(dir: string, paths: readonly string[], epoch: number) {
  const child = spawn(
    'tar',
    [
      '--create',
      '--file=-',
      `--directory=${dir}`,
      '--format=posix',
      '--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime',
      '--numeric-owner',
      '--owner=0',
      '--group=0',
      `--mtime=@${epoch}`,
      '--no-recursion',
      '--null',
      '--files-from=-',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  child.stdin.end(paths.map((p) => `${p}\0`).join(''));
  const exited = new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tar exited ${code} in ${dir}`)))),
  );
  return { stream: child.stdout, exited };
}

interface Blob {
  readonly digest: string;
  readonly size: number;
}

function writeBlob(blobs: string, bytes: Buffer): Blob {
  const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
  writeFileSync(join(blobs, digest.slice('sha256:'.length)), bytes);
  return { digest, size: bytes.length };
}

/** Writes one layer blob; returns its digest, its diff id and both sizes. */
async function writeLayer(blobs: string, dir: string, epoch: number) {
  const tar = tarStream(dir, listTree(dir), epoch);
  const raw = new Tap();
  const packed = new Tap();
  const scratch = join(blobs, `.layer-${process.pid}`);
  await Promise.all([
    pipeline(tar.stream, raw, createGzip({ level: 6 }), packed, createWriteStream(scratch)),
    tar.exited,
  ]);
  const digest = `sha256:${packed.hash.digest('hex')}`;
  renameSync(scratch, join(blobs, digest.slice('sha256:'.length)));
  return { digest, size: packed.size, diffId: `sha256:${raw.hash.digest('hex')}`, unpacked: raw.size };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rootfs: { type: 'string' },
      dockerfile: { type: 'string', default: 'Dockerfile' },
      out: { type: 'string' },
      tag: { type: 'string' },
      arg: { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.rootfs || !values.out || !values.tag)
    throw new Error(
      'usage: oci-image.ts --rootfs <dir> --out <file.oci.tar> --tag <tag> [--dockerfile <file>] [--arg NAME=value]',
    );
  const epoch = Number(process.env.SOURCE_DATE_EPOCH ?? '0');
  if (!Number.isInteger(epoch) || epoch < 0)
    throw new Error(`SOURCE_DATE_EPOCH ${process.env.SOURCE_DATE_EPOCH} is not a time`);
  const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, 'Z');
  const args = Object.fromEntries(
    values.arg.map((a) => {
      const at = a.indexOf('=');
      if (at < 1) throw new Error(`--arg ${a}: use NAME=value`);
      return [a.slice(0, at), a.slice(at + 1)];
    }),
  );
  const stage = parseLastStage(readFileSync(values.dockerfile, 'utf8'), args);

  const layout = mkdtempSync(join(tmpdir(), 'pullfleet-oci-'));
  try {
    const blobs = join(layout, 'blobs', 'sha256');
    mkdirSync(blobs, { recursive: true });
    const layers = [];
    for (const name of stage.layers) {
      const dir = join(values.rootfs, name);
      if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a folder`);
      layers.push({ name, ...(await writeLayer(blobs, dir, epoch)) });
    }
    const labels = Object.fromEntries(stage.labels);
    const config = {
      created,
      architecture: 'amd64',
      os: 'linux',
      config: {
        ...(stage.user ? { User: stage.user } : {}),
        ...(stage.exposedPorts.length
          ? { ExposedPorts: Object.fromEntries(stage.exposedPorts.map((p) => [p, {}])) }
          : {}),
        Env: stage.env.map(([k, v]) => `${k}=${v}`),
        ...(stage.entrypoint ? { Entrypoint: stage.entrypoint } : {}),
        ...(stage.workingDir ? { WorkingDir: stage.workingDir } : {}),
        Labels: labels,
      },
      rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
      history: layers.map((l) => ({
        created,
        created_by: `COPY --from=rootfs /rootfs/${l.name}/ / # scripts/image/rootfs.sh`,
      })),
    };
    const configBlob = writeBlob(blobs, Buffer.from(JSON.stringify(config)));
    const annotations = { ...labels, 'org.opencontainers.image.created': created };
    const manifest = {
      schemaVersion: 2,
      mediaType: MEDIA.manifest,
      config: { mediaType: MEDIA.config, ...configBlob },
      layers: layers.map((l) => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.size })),
      annotations,
    };
    const manifestBlob = writeBlob(blobs, Buffer.from(JSON.stringify(manifest)));
    const index = {
      schemaVersion: 2,
      mediaType: MEDIA.index,
      manifests: [
        {
          mediaType: MEDIA.manifest,
          ...manifestBlob,
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'org.opencontainers.image.ref.name': values.tag },
        },
      ],
    };
    writeFileSync(join(layout, 'index.json'), JSON.stringify(index));
    writeFileSync(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));

    mkdirSync(dirname(values.out), { recursive: true });
    const archive = tarStream(layout, listTree(layout), epoch);
    await Promise.all([pipeline(archive.stream, createWriteStream(values.out)), archive.exited]);
    const summary = {
      archive: values.out,
      digest: manifestBlob.digest,
      tag: values.tag,
      archiveBytes: statSync(values.out).size,
      unpackedBytes: layers.reduce((sum, l) => sum + l.unpacked, 0),
      layers: layers.map(({ name, digest, size, unpacked }) => ({ name, digest, size, unpacked })),
      labels,
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
  } finally {
    rmSync(layout, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`oci-image: ${(error as Error)?.message ?? String(error)}\n`);
  process.exit(1);
});
