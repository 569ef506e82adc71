#!/usr/bin/env bash
# npm run docs:check (CI runs it from .ci/run): the API reference of every entry point (typedoc.json:
# pullfleet, pullfleet/model, pullfleet/controller) builds with no warning: every export and every
# construct prop, method and accessor has TSDoc, every type a public signature names is exported, and
# every {@link} resolves. Fields of the model types the entry points export need TSDoc too.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
npx --no-install typedoc --emit none >"$log" 2>&1 || status=$?
sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E '^\[(warning|error)\]' | grep -v '^\[warning\] Found ' >"$log.filtered" || true
fatal=$(cat "$log.filtered")
rm -f "$log.filtered"
if [ -n "$fatal" ] || [ "$status" -ne 0 ]; then
  echo "$fatal" >&2
  [ -n "$fatal" ] || cat "$log" >&2
  echo "docs:check: the API reference has the problems above: document every export of the entry points (see CONTRIBUTING.md)" >&2
  exit 1
fi
echo "docs:check: API reference ok"
