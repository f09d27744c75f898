#!/usr/bin/env bash
# npm audit of the runtime dependencies: fails on a high or critical advisory. Where the
# registry's advisory endpoint does not answer (as on an offline mirror), says so and does not
# pretend the check ran.
cd "$(dirname "$0")/.."
out=$(npm audit --omit=dev --audit-level=high 2>&1)
code=$?
echo "$out" | grep -v 'Unknown user config'
if [ $code -ne 0 ] && echo "$out" | grep -qiE 'audit endpoint returned an error|ENOTFOUND|ECONNREFUSED|405 Method Not Allowed'; then
  echo "npm audit: NOT CHECKED - the advisory endpoint did not answer here."
  exit 0
fi
exit $code
