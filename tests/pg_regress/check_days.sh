#!/usr/bin/env bash
# Refuses expected outputs that hold a day within DAYS (default 45) of today's, before or after.
# A golden records what a run printed; a day the run made itself (a memory written "now", a
# summary's range, an episode's file name) is today's, and a golden holding it passes on the day
# it was recorded and fails on every day after. Goldens mask such days (pg_temp.dated in
# tests/pg_regress/sql/detail.sql); the fixed days tests write on purpose lie far from any run.
# Usage: tests/pg_regress/check_days.sh FILE...   (missing files are skipped)
set -euo pipefail
window=${DAYS:-45}
today=$(date -u +%s)
bad=0
for f in "$@"; do
  [ -f "$f" ] || continue
  while IFS=: read -r line day; do
    t=$(date -u -d "$day" +%s 2>/dev/null) || continue
    d=$(( (t - today) / 86400 )); d=${d#-}
    if [ "$d" -le "$window" ]; then
      echo "$f:$line: holds $day, $d days from today: mask the day a run makes (pg_temp.dated)" >&2
      bad=1
    fi
  done < <(grep -noE '(19|20)[0-9]{2}-[01][0-9]-[0-3][0-9]' "$f" || true)
done
exit "$bad"
