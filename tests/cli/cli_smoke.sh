#!/usr/bin/env bash
# Runs the real attention-lab-cli binary and checks exit codes and messages.
set -u
cli="$1"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {  # expect CODE DESCRIPTION -- command…
  local want=$1 what=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local got=$?
  if [ "$got" != "$want" ]; then
    echo "FAIL: $what: exit $got, expected $want"; cat "$tmp/err"; fails=$((fails + 1))
  fi
}
expect 0 "--version" -- "$cli" --version
expect 0 "--help" -- "$cli" --help
expect 2 "no arguments" -- "$cli"
expect 2 "unknown command" -- "$cli" frobnicate
expect 0 "presets" -- "$cli" presets
expect 0 "preset to file" -- "$cli" preset fat-cat -o "$tmp/fc.json"
expect 0 "validate preset" -- "$cli" validate "$tmp/fc.json"
expect 0 "trace preset" -- "$cli" trace "$tmp/fc.json" -o "$tmp/trace.json"
grep -q '"attention-lab/trace@1"' "$tmp/trace.json" || { echo "FAIL: trace has no format tag"; fails=$((fails + 1)); }
# validate's summary names the variants a scenario uses.
for pair in "translate:T_k=5, d_model=5, d_kv=5" "gqa:heads=8, kv_heads=2" "rope:RoPE θ=10000 half" \
            "alibi:ALiBi" "window:mask window 3" "sinks:sinks"; do
  name=${pair%%:*} want=${pair#*:}
  "$cli" preset "$name" -o "$tmp/$name.json" && "$cli" validate "$tmp/$name.json" >"$tmp/out" 2>&1
  grep -qF "$want" "$tmp/out" || { echo "FAIL: validate $name does not say '$want'"; cat "$tmp/out"; fails=$((fails + 1)); }
done
expect 2 "unknown preset" -- "$cli" preset nope
expect 2 "missing file" -- "$cli" trace "$tmp/does-not-exist.json"
printf '{"X": [[1, 2], [3]]' >"$tmp/bad.json"
expect 2 "syntax error" -- "$cli" trace "$tmp/bad.json"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: error is not one line"; cat "$tmp/err"; fails=$((fails + 1)); }
printf '{"X": [[1, 2], [3]], "W_q": [[1],[1]], "W_k": [[1],[1]], "W_v": [[1],[1]], "heads": 1}' >"$tmp/ragged.json"
expect 2 "ragged rows" -- "$cli" validate "$tmp/ragged.json"
grep -q "X\[1\]" "$tmp/err" || { echo "FAIL: ragged error does not name X[1]"; cat "$tmp/err"; fails=$((fails + 1)); }
# validate LESSON also checks each step as a slide at 1280x720, through the
# desktop app beside the CLI (attention-lab --check-slides; no display needed).
app="$(dirname "$cli")/attention-lab"
if [ -x "$app" ]; then
  for lesson in "$(dirname "$0")"/../../assets/lessons/*.json; do
    "$cli" validate "$lesson" >"$tmp/out" 2>"$tmp/err"
    grep -qF "; slides checked at 1280x720)" "$tmp/out" || { echo "FAIL: validate $lesson did not check its slides"; cat "$tmp/out" "$tmp/err"; fails=$((fails + 1)); }
    # (causal-masking's last step is about the engine's warning itself.)
    if grep -E "is drawn with|is not on the slide|without its numbers|the quiz on" "$tmp/err"; then
      echo "FAIL: the built-in lesson $lesson has slide warnings"; fails=$((fails + 1))
    fi
  done
  # A lesson with what does not work in a lecture hall: 40 tokens whose
  # weights cannot have 22 px cells, a quiz on an input, a quiz whose answer
  # the slide prints (Q[0] is a block of Q).
  "$cli" preset random-40-8-1 -o "$tmp/big.json" && "$cli" preset random-6-8-2 -o "$tmp/two.json"
  cat >"$tmp/big-lesson.json" <<'JSON'
{"format": "attention-lab/lesson@1", "title": "Problems", "scenario": "big.json", "steps": [
  {"title": "Too many tokens", "text": "a", "show": ["weights[0]"]},
  {"title": "An input", "text": "b", "show": ["X"], "quiz": {"stage": "X", "row": 0, "col": 0}}]}
JSON
  cat >"$tmp/copy-lesson.json" <<'JSON'
{"format": "attention-lab/lesson@1", "title": "A copy", "scenario": "two.json", "steps": [
  {"title": "Fine", "text": "a", "show": ["weights[1]"]},
  {"title": "Printed", "text": "b", "show": ["Q"], "quiz": {"stage": "Q[1]", "row": 0, "col": 0}}]}
JSON
  expect 0 "validate a lesson with slide problems" -- "$cli" validate "$tmp/big-lesson.json"
  grep -q "^warning: step 1 ('Too many tokens'): A₀ (weights\[0\]) is drawn with cells of [0-9]* px (its numbers need 22 px)" "$tmp/err" ||
    { echo "FAIL: no warning for 40 tokens' weights"; cat "$tmp/err"; fails=$((fails + 1)); }
  grep -qF "warning: step 2 ('An input'): the quiz on X[0][0] asks for an input" "$tmp/err" ||
    { echo "FAIL: no warning for a quiz on an input"; cat "$tmp/err"; fails=$((fails + 1)); }
  grep -qE ", [0-9]+ warnings?$" "$tmp/out" || { echo "FAIL: the summary counts no warnings"; cat "$tmp/out"; fails=$((fails + 1)); }
  expect 0 "validate a lesson whose quiz answer is printed" -- "$cli" validate "$tmp/copy-lesson.json"
  grep -qF "warning: step 2 ('Printed'): the quiz on Q[1][0][0]: its answer is printed on the slide, as Q[0][4]" "$tmp/err" ||
    { echo "FAIL: no warning for a printed answer"; cat "$tmp/err"; fails=$((fails + 1)); }
  [ "$(grep -c "step 1 ('Fine')" "$tmp/err")" -eq 0 ] || { echo "FAIL: a fine step was warned about"; cat "$tmp/err"; fails=$((fails + 1)); }
  expect 0 "validate --no-slides" -- "$cli" validate --no-slides "$tmp/copy-lesson.json"
  grep -q "slides checked" "$tmp/out" && { echo "FAIL: --no-slides checked the slides"; fails=$((fails + 1)); }
  expect 2 "--no-slides outside validate" -- "$cli" trace --no-slides "$tmp/two.json"
else
  "$cli" validate "$(dirname "$0")/../../assets/lessons/many-heads.json" >"$tmp/out" 2>"$tmp/err"
  grep -qF "note: slides not checked" "$tmp/err" || { echo "FAIL: without the app validate does not say the slides were not checked"; fails=$((fails + 1)); }
fi
# Huge pages: the binary restarts itself with glibc.malloc.hugetlb=1 when the
# kernel gives them on request only (THP "madvise") and glibc has the tunable
# (2.35+); never in a sanitizer build ($2 = sanitized), never when told not to.
sanitized=${2:-}
glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
want=false
if [ -z "$sanitized" ] && grep -qF '[madvise]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null &&
   [ "$(printf '%s\n2.35\n' "$glibc" | sort -V | head -1)" = "2.35" ]; then
  want=true
fi
requested() {  # requested ENV… : what a tiny bench says about the tunable
  env -u GLIBC_TUNABLES -u ATTENTION_LAB_HUGE_PAGES -u ATTENTION_LAB_HUGE_PAGES_RESTARTED "$@" "$cli" bench --T 4 --d 8 --heads 2 --runs 1 --rounds 1 --gemm-size 16 --json 2>/dev/null |
    grep -o '"huge_pages_requested": *[a-z]*' | sed 's/.*: *//'
}
got=$(requested)
[ "$got" = "$want" ] || { echo "FAIL: huge pages requested: $got, expected $want (glibc $glibc)"; fails=$((fails + 1)); }
got=$(requested ATTENTION_LAB_HUGE_PAGES=0)
[ "$got" = "false" ] || { echo "FAIL: ATTENTION_LAB_HUGE_PAGES=0 still restarts: $got"; fails=$((fails + 1)); }
[ "$fails" -eq 0 ] && echo "all CLI checks passed"
exit $((fails > 0))
