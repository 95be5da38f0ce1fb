#!/usr/bin/env bash
# `attention-lab --help` (no display needed) names every built-in preset the
# CLI lists and every installed lesson, so the two never drift apart.
# usage: app_help.sh APP_BINARY CLI_BINARY LESSONS_DIR
set -u
app=$1 cli=$2 lessons=$3
help=$("$app" --help) || { echo "FAIL: attention-lab --help exited $?"; exit 1; }
status=0
while IFS=$'\t' read -r name _; do
  grep -Eq "[(, ]$name[,)]" <<<"$help" || { echo "FAIL: --help does not name the preset '$name'"; status=1; }
done < <("$cli" presets | grep -v "^random-T-D-H")  # (that one has its own line)
for file in "$lessons"/*.json; do
  name=$(basename "$file" .json)
  grep -Eq "[:, ]$name," <<<"$help" || { echo "FAIL: --help does not name the lesson '$name'"; status=1; }
done
if awk 'length($0) > 92 { exit 1 }' <<<"$help"; then :; else echo "FAIL: a --help line is wider than 92 columns"; status=1; fi
[ $status = 0 ] && echo "ok: --help names every preset and lesson"
exit $status
