#!/usr/bin/env bash
# Released upgrade scripts are never edited (run by the lint layer of scripts/test.sh): a
# database upgraded with the script as it was released must end where one upgraded with today's
# copy does, so each sql/memory_ext--*.sql that a release shipped must still be byte for byte
# what that release's commit holds (tests/upgrade/releases.sh). A change goes into the next
# version's script instead. Like ParadeDB's check-released-migrations.
set -euo pipefail
cd "$(dirname "$0")/../.."
MEMORY_EXT_HOME=${MEMORY_EXT_HOME:-/var/tmp/memory_ext} PG=15 . tests/upgrade/releases.sh
last="${RELEASES[-1]}" commit=${last#*=}
git rev-parse --verify -q "$commit^{commit}" >/dev/null || {
  echo "check_released: the last release's commit $commit is not in this clone (a shallow clone?)" >&2
  exit 2
}
edited=0 checked=0
for f in $(git ls-tree --name-only "$commit" sql/ | grep '^sql/memory_ext--.*--.*\.sql$'); do
  checked=$((checked + 1))
  if [ ! -f "$f" ]; then
    echo "check_released: $f shipped in ${last%%=*} ($commit) and is gone" >&2
    edited=1
  elif ! git show "$commit:$f" | cmp -s - "$f"; then
    echo "check_released: $f shipped in ${last%%=*} ($commit) and has been edited since:" >&2
    git diff --stat "$commit" -- "$f" >&2
    edited=1
  fi
done
[ "$edited" = 0 ] || { echo "put the change into the next version's upgrade script instead" >&2; exit 1; }
echo "released upgrade scripts unchanged: $checked, as of ${last%%=*}"
