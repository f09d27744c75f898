#!/usr/bin/env bash
# The node tests on every Node-RED the package declares, each on the Node.js it needs:
#   Node-RED 3.1.x on Node.js 20 (the declared minimum); 4.0.x on Node.js 20 (the last line with
#   i18next 21, as 3.1, and without msg.error.code in Catch); 4.1.x (the project's own install) on
#   Node.js 20, in `npm test`; 5.0.x on Node.js 22, 24 and 26 (it needs 22). Node.js 22, 24 and 26 are the LTS
#   lines in use, each run by 5.0 (4.1 on them too would cost CI a minute or more and find what 5.0's
#   rows find); 20 is past its end of life but supported while Node-RED supports it.
# The count texts go through each version's own i18n (counts.test.js): 3.1 and 4.0 read another
# catalog format than 4.1 and later.
# Installs go to .matrix/ (not committed). Prints one table at the end; fails if any test failed.
set -uo pipefail
cd "$(dirname "$0")/.."
MATRIX=.matrix
SPECS="dist/test/nodes.test.js dist/test/protection.test.js dist/test/endpoints.test.js dist/test/channels.test.js dist/test/counts.test.js dist/test/example-fallback.test.js"
# Node.js 24 and 26 run the Node-RED 5.0 that the row on Node.js 22 runs in full: what differs there is
# Node.js (timers, fetch, undici), so the node, protection, endpoint and channel tests; the count texts
# (i18next's) and the example's flow are the same on every Node.js.
NEWER_NODE="dist/test/nodes.test.js dist/test/protection.test.js dist/test/endpoints.test.js dist/test/channels.test.js"
# The escalation node's tests once per Node-RED line (3.1, 4.0, 5.0; 4.1 runs them in npm test): its
# code is the same on every Node.js, and CI's time is bounded.
PER_LINE="dist/test/escalation.test.js"
mkdir -p "$MATRIX"
export npm_config_fund=false npm_config_audit=false npm_config_loglevel=error

install() { # folder, packages...
  local dir="$MATRIX/$1"; shift
  if [ ! -d "$dir/node_modules" ]; then
    mkdir -p "$dir" && echo '{"private":true}' > "$dir/package.json"
    (cd "$dir" && npm install --no-save "$@" >/dev/null) || { echo "install of $* failed" >&2; return 1; }
  fi
}

for v in 22 24 26; do install "node$v" "node@$v" || exit 1; done
install nr5 node-red@5.0 || exit 1
install nr31 node-red@3.1 || exit 1
install nr40 node-red@4.0 || exit 1
nodebin() { # the node binary a registry `node@N` package installed
  local bin="$MATRIX/node$1/node_modules/node/bin/node"
  [ -x "$bin" ] || bin="$MATRIX/node$1/node_modules/.bin/node"
  echo "$bin"
}
# --install-only: the runtimes for the install test (Node-RED 5.0 on Node.js 22), nothing run.
[ "${1:-}" = "--install-only" ] && exit 0

rows=()
status=0
run() { # label, node binary, NODE_RED_HOME or "", specs
  local label="$1" node="$2" home="$3" specs="$4" out
  out=$(mktemp)
  NODE_RED_HOME="$home" "$node" node_modules/mocha/bin/mocha.js --no-config --timeout 120000 --reporter json --reporter-option "output=$out" $specs > /dev/null 2>&1
  local line
  line=$("$node" -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const home = process.argv[2];
    const v = require(require.resolve("node-red/package.json", home ? { paths: [home] } : undefined)).version;
    console.log([v, process.version, r.stats.passes, r.stats.failures].join("|"));
    for (const f of r.failures) console.error("  FAILED on " + v + ": " + f.fullTitle + ": " + (f.err.message || "").split("\n")[0]);
  ' "$out" "$home") || line="?|?|0|error"
  rows+=("$label|$line")
  case "$line" in *"|0") ;; *) status=1 ;; esac
  rm -f "$out"
}

run "declared minimum" node "$PWD/$MATRIX/nr31" "$SPECS $PER_LINE"
run "last i18next 21" node "$PWD/$MATRIX/nr40" "$SPECS $PER_LINE"
run "latest" "$(nodebin 22)" "$PWD/$MATRIX/nr5" "$SPECS $PER_LINE"
for v in 24 26; do run "latest" "$(nodebin $v)" "$PWD/$MATRIX/nr5" "$NEWER_NODE"; done

printf '\n%-18s %-10s %-10s %-7s %-7s\n' "" "Node-RED" "Node.js" "passed" "failed"
for row in "${rows[@]}"; do
  IFS='|' read -r label nr nodev passed failed <<< "$row"
  printf '%-18s %-10s %-10s %-7s %-7s\n' "$label" "$nr" "$nodev" "$passed" "$failed"
done
# The project's own Node-RED on Node.js 20 runs every one of these specs in `npm test`.
printf '%-18s %-10s %-10s %s\n' "project default" "4.1.x" "20" "in npm test"

exit $status
