#!/usr/bin/env bash
# Pack smoke test (npm run smoke:pack; CI runs it from .ci/run): builds and packs pullfleet, checks what
# the tarball holds, then uses it the way a platform team would, in a scratch folder outside this
# repository:
#   1. an existing git repository with a package.json: npm install the tarball, `pullfleet init` merges
#      package.json (the file: dependency on the tarball is kept) and writes the rest;
#   2. npm install, then synth, validate, plan, the workflow's dist/ check, and a plan that deletes a
#      workload, which must fail until the deletion is acknowledged;
#   3. the installed bins run the compiled code (no src/ in the package), list and run every command
#      (migrate subscriptions on a fixture), and the controller starts; the entry points pullfleet,
#      pullfleet/model and pullfleet/controller import and type-check, and nothing else is importable;
#   4. init into an empty folder writes a package.json of its own, which installs and synthesizes;
#   5. a CommonJS package (no "type": "module") synthesizes, validates and plans its fleet.config.ts.
# npm installs use --prefer-offline, so a warm npm cache makes this take well under a minute.
# Set PULLFLEET_SMOKE_KEEP=1 to keep the scratch folder for a look.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false
# Bounded registry requests (the cache answers most of them).
export npm_config_fetch_timeout=60000 npm_config_fetch_retries=2
npm_install() { npm install --prefer-offline --no-audit --no-fund --loglevel=error "$@"; }
fail() { echo "pack-smoke: $*" >&2; exit 1; }
step() { echo "::: pack-smoke: $*"; }

# Scratch folders two levels deep; only the outer one made here is removed.
outer=$(mktemp -d "${TMPDIR:-/tmp}/pullfleet-smoke.XXXXXX")
work=$(mktemp -d "$outer/run.XXXXXX")
if [ "${PULLFLEET_SMOKE_KEEP:-}" = 1 ]; then echo "pack-smoke: keeping $outer"; else trap 'rm -rf "$outer"' EXIT; fi

version=$(node -p "require('./package.json').version")

step "build and pack pullfleet $version"
npm run build --silent
# stripInternal: `_`-prefixed members are @internal and must not reach the published declarations.
if grep -rnE '^\s+(readonly |public |protected |static )*_[A-Za-z]+[(:?<]' lib --include='*.d.ts'; then
  fail "declarations in lib/ expose _-prefixed internals (above): mark them /** @internal */"
fi
# Non-leaky API: no published declaration outside lib/imports/ names a generated import type.
if grep -rnE "['\"](\.\./)+imports/|['\"]cdk8s-plus-[0-9]+['\"]" lib --include='*.d.ts' | grep -v '^lib/imports/'; then
  fail "declarations in lib/ reference generated import types (above): use the library's own prop types in public signatures"
fi
tarball="$work/$(npm pack --ignore-scripts --silent --pack-destination "$work" | tail -n 1)"
[ -f "$tarball" ] || fail "npm pack wrote no tarball"
tar -tzf "$tarball" | sort >"$work/contents.txt"
for needed in package/package.json package/README.md package/CHANGELOG.md package/docs/upgrading.md \
  package/docs/reference/versioning.md package/bin/pullfleet.js package/bin/pullfleet-controller.js \
  package/lib/src/index.js package/lib/src/index.d.ts package/lib/src/model/index.js package/lib/src/model/index.d.ts \
  package/lib/src/controller/index.js package/lib/src/controller/index.d.ts package/lib/src/controller/main.js \
  package/lib/imports/managedclusterset-cluster.open-cluster-management.io.js \
  package/lib/imports/schemas/work.open-cluster-management.io_ManifestWork_v1.json; do
  grep -qx "$needed" "$work/contents.txt" || fail "the package lacks $needed"
done
if grep -E '^package/(src|test|dist|bench|scripts|imports|node_modules|docs/api)/|\.test\.|^package/lib/(test|bench)/' "$work/contents.txt"; then
  fail "the package holds files it must not ship (above)"
fi
echo "$(wc -l <"$work/contents.txt") files, $(du -k "$tarball" | cut -f1) KiB packed"

step "an existing git repository: install the tarball, then pullfleet init"
fleet="$work/fleet"
mkdir -p "$fleet"
cd "$fleet"
git init -q . 2>/dev/null || true
printf '{\n  "name": "smoke-fleet",\n  "private": true,\n  "type": "module",\n  "scripts": { "lint": "echo lint" }\n}\n' >package.json
npm_install "$tarball"
npx --no-install pullfleet init | tee "$work/init.txt"
grep -q '^merged    package.json' "$work/init.txt" || fail "init did not merge package.json"
node -e '
  const pkg = require("./package.json");
  const want = (ok, what) => { if (!ok) { console.error("pack-smoke: package.json " + what); process.exit(1); } };
  want(pkg.dependencies.pullfleet.startsWith("file:"), "lost the tarball dependency: " + pkg.dependencies.pullfleet);
  want(pkg.scripts.lint === "echo lint", "lost the lint script");
  for (const s of ["synth", "validate", "plan", "test"]) want(typeof pkg.scripts[s] === "string", "has no " + s + " script");
  for (const d of ["cdk8s", "cdk8s-plus-28", "constructs"]) want(typeof pkg.dependencies[d] === "string", "has no " + d + " dependency");
'
for file in tsconfig.json cdk8s.yaml fleet.config.ts deletions.txt .gitignore .github/workflows/pullfleet.yml; do
  [ -f "$file" ] || fail "init did not write $file"
done
grep -q "from 'pullfleet'" fleet.config.ts || fail "fleet.config.ts does not import from 'pullfleet'"

step "a second init keeps everything"
npx --no-install pullfleet init >"$work/init2.txt"
if grep -E '^(wrote|replaced|merged) ' "$work/init2.txt"; then fail "a second init changed files (above)"; fi

step "npm install what init added"
npm_install
[ ! -e node_modules/pullfleet/src ] || fail "the installed package holds src/"
[ "$(npx --no-install pullfleet --version)" = "$version" ] || fail "pullfleet --version is not $version"
npx --no-install pullfleet-controller --help >/dev/null || fail "the installed controller does not start"
step "every command is registered in the installed binary"
npx --no-install pullfleet --help >"$work/help.txt"
for command in init synth validate plan status inventory migrate; do
  grep -qE "^  $command\b" "$work/help.txt" || fail "pullfleet --help does not list $command"
done
for command in "inventory pull" "inventory diff" "migrate subscriptions" status; do
  npx --no-install pullfleet $command --help >/dev/null || fail "the installed pullfleet does not run '$command'"
done
npx --no-install pullfleet migrate subscriptions "$repo/test/migrate/fixtures/helm-placement.yaml" -o "$work/migrated.ts" --report "$work/migrated.txt" 2>/dev/null \
  || fail "migrate subscriptions failed from the installed package"
grep -q "new PullApplicationSet(hub, " "$work/migrated.ts" || fail "migrate subscriptions wrote no PullApplicationSet"
grep -q "} from 'pullfleet';" "$work/migrated.ts" || fail "migrate subscriptions code does not import the package"

step "the entry points (api/*.api.md): pullfleet, pullfleet/model and pullfleet/controller type-check and load"
mkdir -p .entry-points
cat >.entry-points/use.mts <<'TS'
// A platform team's code using every entry point of the installed package.
import { AppSource, Fleet, Hub, PullApplication, Spoke, pullfleetVersion, type HubProps } from 'pullfleet';
import { FLEET_REPORT_API_VERSION, manifestWorkName, type FleetReport } from 'pullfleet/model';
import { FeedbackScrape, loadKubeConfig, startController, type ControllerOptions } from 'pullfleet/controller';
// @ts-expect-error: the CLI is the command line, not an entry point
import type {} from 'pullfleet/cli';

const hub: HubProps = { argoNamespace: 'argocd' };
const rows = (report: FleetReport) => report.status?.clusters.filter((row) => row.state !== 'Healthy') ?? [];
const options = (): ControllerOptions => ({
  kubeConfig: loadKubeConfig(),
  config: { feedbackScrapeType: FeedbackScrape.WATCH, leaderElection: false },
});
export const used = [AppSource, Fleet, Hub, PullApplication, Spoke, pullfleetVersion, hub, rows, options, startController];
export const work: string = `${FLEET_REPORT_API_VERSION} ${manifestWorkName('argocd', 'guestbook-prod-east')}`;
TS
tsc=$(node -p "require.resolve('typescript/bin/tsc', { paths: [require.resolve('pullfleet/package.json')] })")
node "$tsc" --noEmit --strict --skipLibCheck --target es2022 --module nodenext --moduleResolution nodenext .entry-points/use.mts \
  || fail "code using the entry points does not type-check against the installed declarations (above)"
PULLFLEET_VERSION="$version" node --input-type=module -e '
  const want = (ok, what) => { if (!ok) { console.error("pack-smoke: " + what); process.exit(1); } };
  const root = await import("pullfleet");
  const model = await import("pullfleet/model");
  const controller = await import("pullfleet/controller");
  want(typeof root.Fleet === "function" && root.pullfleetVersion() === process.env.PULLFLEET_VERSION, "pullfleet: no Fleet, or the wrong version");
  want(model.manifestWorkName("argocd", "guestbook-prod-east") === "argocd-guestbook-prod-east", "pullfleet/model: manifestWorkName");
  want(typeof controller.startController === "function", "pullfleet/controller: no startController");
  for (const hidden of ["pullfleet/cli", "pullfleet/lib/src/model/core/names.js"]) {
    const code = await import(hidden).then(() => "loaded", (error) => error.code);
    want(code === "ERR_PACKAGE_PATH_NOT_EXPORTED", hidden + " is importable (" + code + "): only package.json exports are");
  }
'
rm -rf .entry-points

step "synth"
npx --no-install pullfleet synth
for file in dist/hub/hub/applications.yaml dist/hub/hub/works/prod-east.yaml dist/hub/hub/controller.yaml dist/hub/bootstrap/prod-east.yaml dist/hub/plan-state.json; do
  [ -f "$file" ] || fail "synth did not write $file"
done
grep -q "name: argocd-guestbook-prod-east" dist/hub/hub/works/prod-east.yaml || fail "no ManifestWork for guestbook on prod-east"
grep -q "image: ghcr.io/pullfleet/pullfleet-controller:$version" dist/hub/hub/controller.yaml || fail "the controller image tag is not the package version $version"

step "validate"
npx --no-install pullfleet validate --strict | grep -q '^valid:' || fail "validate --strict did not report a valid fleet"

step "plan: no change, then a deletion that fails until acknowledged"
npx --no-install pullfleet plan --fail-on-deletions --acknowledgements deletions.txt >"$work/plan.txt" || { cat "$work/plan.txt"; fail "plan of an unchanged fleet failed"; }
cp fleet.config.ts "$work/fleet.config.ts.orig"
node -e '
  const fs = require("node:fs");
  const text = fs.readFileSync("fleet.config.ts", "utf8");
  const start = text.indexOf("new PullApplication(");
  const end = text.indexOf("});", start) + 3;
  if (start < 0 || end < 3) process.exit(1);
  fs.writeFileSync("fleet.config.ts", text.slice(0, start) + "void allProd;" + text.slice(end));
'
status=0
npx --no-install pullfleet plan --fail-on-deletions --acknowledgements deletions.txt >"$work/plan.txt" 2>"$work/plan.err" || status=$?
[ "$status" = 1 ] || { cat "$work/plan.txt" "$work/plan.err"; fail "plan of a removed app exited $status, not 1"; }
grep -q 'not acknowledged' "$work/plan.err" || fail "plan did not name the unacknowledged deletion"
cp deletions.txt "$work/deletions.txt.orig"
echo 'hub/prod-east/*' >>deletions.txt
npx --no-install pullfleet plan --fail-on-deletions --acknowledgements deletions.txt >"$work/plan.txt" || fail "plan failed with the deletion acknowledged"
cp "$work/fleet.config.ts.orig" fleet.config.ts
cp "$work/deletions.txt.orig" deletions.txt

step "the workflow's check: committed dist/ equals a fresh synth"
npx --no-install pullfleet synth -o "$work/fresh" >/dev/null
diff -r dist "$work/fresh" >/dev/null || fail "a second synth differs from dist/"

step "npm test of the fleet repository"
npm test --silent >/dev/null || fail "npm test of the fleet failed"

step "an empty folder: pullfleet init writes package.json, then install and synth"
empty="$work/empty-fleet"
npx --no-install pullfleet init "$empty" >"$work/init3.txt"
cd "$empty"
node -e '
  const pkg = require("./package.json");
  if (pkg.type !== "module" || !pkg.dependencies.pullfleet || !pkg.devDependencies["@types/node"]) { console.error(JSON.stringify(pkg)); process.exit(1); }
'
# pullfleet is not taken from the registry here: point the dependency at the tarball under test.
npm pkg set "dependencies.pullfleet=file:$tarball"
npm_install
npx --no-install pullfleet synth >/dev/null 2>&1 || fail "synth of the fleet init wrote into an empty folder failed"
[ -f dist/hub/hub/works/prod-east.yaml ] || fail "synth in the empty-folder fleet wrote no works"

step "a CommonJS package (no \"type\": \"module\"): the fleet description loads as an ES module"
cjs="$work/commonjs-fleet"
mkdir -p "$cjs"
cd "$cjs"
git init -q . 2>/dev/null || true
printf '{\n  "name": "commonjs-fleet",\n  "private": true\n}\n' >package.json
npm_install "$tarball"
npx --no-install pullfleet init >"$work/init4.txt"
npm_install
# init names it fleet.config.mts here; a fleet.config.ts, as users keep it, must load as well.
mv fleet.config.mts fleet.config.ts
sed -i.orig 's/fleet\.config\.mts/fleet.config.ts/' cdk8s.yaml && rm -f cdk8s.yaml.orig
npx --no-install pullfleet synth >"$work/cjs-synth.txt" 2>&1 || { cat "$work/cjs-synth.txt"; fail "synth of fleet.config.ts in a CommonJS package failed"; }
if grep -q ERR_PACKAGE_PATH_NOT_EXPORTED "$work/cjs-synth.txt"; then fail "synth in a CommonJS package hit ERR_PACKAGE_PATH_NOT_EXPORTED"; fi
[ -f dist/hub/hub/works/prod-east.yaml ] || fail "synth in the CommonJS package wrote no works"
npx --no-install pullfleet validate --strict | grep -q '^valid:' || fail "validate --strict of the CommonJS package did not report a valid fleet"
npx --no-install pullfleet plan >/dev/null || fail "plan of the CommonJS package failed"

cd "$repo"
echo "::: pack-smoke ok"
