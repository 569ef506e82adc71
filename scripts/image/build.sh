#!/usr/bin/env bash
# Builds the controller image without a container engine (npm run image): scripts/image/rootfs.sh
# assembles the layers, scripts/image/oci-image.ts writes them with the configuration of the
# Dockerfile's last stage as an OCI image archive. CI runs and tests what this writes; the release
# workflow pushes it (skopeo copy oci-archive:... docker://...).
#
#   scripts/image/build.sh [--out <folder>] [--tag <tag>]
#
# Writes into <folder> (default .tmp/image):
#   pullfleet-controller-<tag>.oci.tar   the image (OCI layout in a tar; ref name <tag>)
#   pullfleet-controller-<tag>.cdx.json  its SBOM (CycloneDX), also /app/sbom.cdx.json in the image
#   pullfleet-controller-<tag>.digest    the manifest digest (sha256:...), as a registry reports it
#   pullfleet-controller-<tag>.json      digests and sizes
# <tag> defaults to the package version, the ControllerInstall default imageTag.
#
# Reproducible from a clean checkout at one commit: SOURCE_DATE_EPOCH (default: the commit time) dates
# every file and the image, and a second build with the same Node package, Debian packages, npm and GNU
# tar writes the same digest. Needs: node and npm with the repository's node_modules (npm ci), GNU tar,
# apt-get with package lists (apt-get update) and dpkg-deb. No root.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=.tmp/image
tag=
while [ $# -gt 0 ]; do
  case $1 in
    --out) out=$2; shift 2 ;;
    --tag) tag=$2; shift 2 ;;
    *) echo "usage: scripts/image/build.sh [--out <folder>] [--tag <tag>]" >&2; exit 2 ;;
  esac
done
version=$(node -p "require('./package.json').version")
tag=${tag:-$version}
revision=$(git rev-parse --verify -q HEAD 2>/dev/null) || revision=unknown
if [ "$revision" != unknown ] && [ -n "$(git status --porcelain -- src imports bin package.json package-lock.json 2>/dev/null)" ]; then
  echo "image: the working tree has changes not in $revision; the revision label names the commit only" >&2
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

mkdir -p "$out"
out=$(cd "$out" && pwd)
name=pullfleet-controller-$tag
work=$(mktemp -d "${TMPDIR:-/tmp}/pullfleet-image.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)

bash scripts/image/rootfs.sh "$work/rootfs"
echo "::: image: the OCI archive (layers and configuration of the Dockerfile's last stage)" >&2
npx --no-install tsx scripts/image/oci-image.ts --rootfs "$work/rootfs" --dockerfile Dockerfile \
  --out "$out/$name.oci.tar" --tag "$tag" --arg "VERSION=$version" --arg "REVISION=$revision" >"$out/$name.json"
cp "$work/rootfs/sbom.cdx.json" "$out/$name.cdx.json"
node -p "require('$out/$name.json').digest" >"$out/$name.digest"

node --input-type=module - "$out/$name.json" "$(($(date +%s) - started))" <<'JS'
import { readFileSync } from 'node:fs';
const [file, seconds] = process.argv.slice(2);
const s = JSON.parse(readFileSync(file, 'utf8'));
const mib = (bytes) => `${(bytes / 1048576).toFixed(1)} MiB`;
console.log(`image: ${s.archive}, ${s.tag}, ${s.digest}`);
console.log(`image: archive ${mib(s.archiveBytes)} (compressed layers), unpacked ${mib(s.unpackedBytes)}; built in ${seconds} s`);
for (const l of s.layers) console.log(`image:   layer ${l.name.padEnd(5)} ${mib(l.size).padStart(10)} compressed, ${mib(l.unpacked).padStart(10)} unpacked`);
JS
