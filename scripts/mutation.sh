#!/usr/bin/env bash
# Mutation testing of the policies (stryker.config.json lists the files and the unit tests that
# must notice): StrykerJS 10 needs Node.js 22, which scripts/matrix.sh installs into .matrix/.
# The report: reports/mutation/mutation.html (and .json). Arguments go to `stryker run`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/matrix.sh --install-only
node22="$PWD/.matrix/node22/node_modules/node/bin"
[ -x "$node22/node" ] || node22="$PWD/.matrix/node22/node_modules/.bin"
PATH="$node22:$PATH" exec node node_modules/@stryker-mutator/core/bin/stryker.js run "$@"
