#!/usr/bin/env bash
# Edit the words: double-clicking a token label (rows of X) or a feature label
# (columns of X) renames it in place with real X input; Enter applies one
# undoable edit, Esc cancels, Ctrl+Z restores; with cross-attention the key
# tokens (rows of X_kv) too, and T_k resizes X_kv. Also: --lesson with an unknown
# name lists the built-in lessons.
# usage: gui_words.sh APP_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"

# label STAGE row|col INDEX: window coordinates of a label of the largest
# drawing of STAGE: row labels sit just left of the cells, column labels just
# above them.
label() {
  python3 - "$probe" "$1" "$2" "$3" <<'PY'
import json, sys
path, stage, side, index = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# the largest drawing: a head's thumbnail (no labels) is drawn small
h = max((m for m in json.load(open(path))["heatmaps"] if m["stage"] == stage), key=lambda m: m["x1"] - m["x0"])
rows, cols = (h["cols"], h["rows"]) if h["transposed"] else (h["rows"], h["cols"])
if side == "row":
    print(int(h["x0"] - 10), int(h["y0"] + (index + 0.5) * (h["y1"] - h["y0"]) / rows))
else:
    print(int(h["x0"] + (index + 0.5) * (h["x1"] - h["x0"]) / cols), int(h["y0"] - 6))
PY
}
# until_renaming SUBSET [S]: waits until the probe's "renaming" (the rename
# popup: kind, index, editing, text) holds every key of SUBSET (JSON).
until_renaming() {
  python3 - "$probe" "$1" "${2:-10}" <<'PY'
import json, sys, time
path, want, deadline = sys.argv[1], json.loads(sys.argv[2]), time.time() + float(sys.argv[3])
got = None
while time.time() < deadline:
    try:
        got = json.load(open(path)).get("renaming")
    except (OSError, ValueError):
        got = None  # rewritten every frame
    if isinstance(got, dict) and all(got.get(k) == v for k, v in want.items()):
        sys.exit(0)
    time.sleep(0.05)
print("probe: renaming is %s, expected to contain %s" % (json.dumps(got), json.dumps(want)))
sys.exit(1)
PY
}
# double_click_label STAGE SIDE INDEX KIND: double-clicks a label and waits
# until the rename popup for that token or feature has its text field active.
double_click_label() {
  local x y
  read -r x y < <(label "$1" "$2" "$3")
  xdotool mousemove --window "$wid" "$x" "$y"
  settle 2
  xdotool click --repeat 2 --delay 60 1
  if ! until_renaming "$4" 5; then
    shot "rename-$1-$2-$3-missed"
    fail "double-clicking the $2 label $3 of $1 at ($x, $y) did not open the rename popup ($(state) renaming=$(get renaming))"
    return 1
  fi
}
# type_name TEXT: replaces the popup's text with TEXT (the field opens with
# its text selected) and waits until the field holds it.
type_name() {
  xdotool type --delay 30 "$1"
  until_renaming '{"text": "'"$1"'"}' 5 || fail "typing '$1' did not reach the rename field ($(get renaming))"
}
token() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[$1])" "$(get tokens)"; }
feature() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[$1])" "$(get features)"; }

start_app --preset fat-cat
[ "$(token 2)" = cat ] || fail "fat-cat's token 2 is '$(token 2)', expected 'cat'"
[ "$(feature 1)" = 1 ] || fail "an unnamed feature shows '$(feature 1)', expected its index '1'"

# 1. A token: double-click the row label of X, type, Enter.
if double_click_label X row 2 '{"kind": "token", "index": 2, "editing": true}'; then
  type_name "dog"
  shot "rename-popup"  # the popup open over the label, for a person to look at
  xdotool key Return
  python3 "$here/probe.py" "$probe" wait renaming null || fail "Enter did not close the rename popup"
  [ "$(token 2)" = dog ] || fail "after renaming, token 2 is '$(token 2)', expected 'dog'"
  [ "$(get modified)" = true ] || fail "renaming a token did not mark the scenario modified"
  shot "renamed-token"
fi

# 2. A feature: double-click a column label of X.
if double_click_label X col 1 '{"kind": "feature", "index": 1, "editing": true}'; then
  type_name "size"
  xdotool key Return
  python3 "$here/probe.py" "$probe" wait renaming null || fail "Enter did not close the feature popup"
  [ "$(feature 1)" = size ] || fail "after naming, feature 1 is '$(feature 1)', expected 'size'"
  [ "$(feature 0)" = 0 ] || fail "naming feature 1 changed feature 0 to '$(feature 0)'"
  shot "renamed-feature"
fi

# 3. Esc cancels: nothing changes.
if double_click_label X row 0 '{"kind": "token", "index": 0, "editing": true}'; then
  type_name "zzz"
  xdotool key Escape
  python3 "$here/probe.py" "$probe" wait renaming null || fail "Esc did not close the rename popup"
  settle 2
  [ "$(token 0)" = the ] || fail "Esc still renamed token 0 to '$(token 0)'"
fi

# 4. Ctrl+Z undoes one rename at a time: the feature, then 'dog'.
xdotool key --clearmodifiers ctrl+z
python3 "$here/probe.py" "$probe" wait features '["0", "1", "2", "3"]' 5 ||
  fail "Ctrl+Z did not undo the feature name ($(get features))"
xdotool key --clearmodifiers ctrl+z
python3 "$here/probe.py" "$probe" wait tokens '["the", "fat", "cat", "sat", "on", "the", "mat"]' 5 ||
  fail "Ctrl+Z did not restore the tokens ($(get tokens))"
python3 "$here/probe.py" "$probe" wait modified false 5 || fail "undoing every rename left the scenario modified"
# and Ctrl+Y brings 'dog' back
xdotool key --clearmodifiers ctrl+y
python3 "$here/probe.py" "$probe" wait tokens '["the", "fat", "dog", "sat", "on", "the", "mat"]' 5 ||
  fail "Ctrl+Y did not redo the rename ($(get tokens))"
stop_app

# 5. A token from a column label of the weights (step 6 shows them): every
#    label of that token follows, and Ctrl+Z brings the old name back.
start_app --preset fat-cat --step 6
if double_click_label 'weights[0]' col 5 '{"kind": "token", "index": 5, "editing": true}'; then
  type_name "a"
  xdotool key Return
  python3 "$here/probe.py" "$probe" wait renaming null || fail "Enter did not close the rename popup (weights)"
  [ "$(token 5)" = a ] || fail "renaming from A's column label: token 5 is '$(token 5)', expected 'a'"
  shot "renamed-from-weights"
  xdotool key --clearmodifiers ctrl+z
  python3 "$here/probe.py" "$probe" wait tokens '["the", "fat", "cat", "sat", "on", "the", "mat"]' 5 ||
    fail "Ctrl+Z did not undo the rename made on the weights ($(get tokens))"
fi
stop_app

# 6. Cross-attention: a column label of the weights names a row of X_kv (a key
#    token); renaming it changes the keys' names only, Ctrl+Z restores. Then
#    typing 3 into "T_k (keys)" drops the last two English tokens.
key_token() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[$1])" "$(get key_tokens)"; }
start_app --preset translate --step 6
[ "$(key_token 2)" = cat ] || fail "translate's key token 2 is '$(key_token 2)', expected 'cat'"
if double_click_label 'weights[0]' col 2 '{"kind": "key token", "index": 2, "editing": true}'; then
  type_name "kitty"
  shot "rename-key-token"
  xdotool key Return
  python3 "$here/probe.py" "$probe" wait renaming null || fail "Enter did not close the rename popup (key token)"
  [ "$(key_token 2)" = kitty ] || fail "renaming key token 2 gave '$(key_token 2)', expected 'kitty'"
  [ "$(token 2)" = noir ] || fail "renaming a key token changed query token 2 to '$(token 2)'"
  shot "renamed-key-token"
  xdotool key --clearmodifiers ctrl+z
  python3 "$here/probe.py" "$probe" wait key_tokens '["the", "black", "cat", "sleeps", "."]' 5 ||
    fail "Ctrl+Z did not undo the key token's rename ($(get key_tokens))"
fi
if type_into "T_k" 3; then
  python3 "$here/probe.py" "$probe" wait T_k 3 || fail "typing 3 into T_k gave T_k = $(get T_k)"
  python3 "$here/probe.py" "$probe" wait key_tokens '["the", "black", "cat"]' 5 || fail "T_k = 3 kept key tokens $(get key_tokens)"
  settle 3
  shot "t_k-3"
else
  fail "the T_k input is not on the probe's items"
fi
stop_app

# 7. --lesson with a name that is not a lesson lists the ones there are.
"$app" --lesson nonexistent --screenshot "$out/none.png" 2>"$out/lesson-error.txt"
code=$?
[ $code -eq 2 ] || fail "--lesson nonexistent exited $code, expected 2"
grep -q "attention-from-scratch" "$out/lesson-error.txt" && grep -q "nonexistent" "$out/lesson-error.txt" ||
  { fail "--lesson nonexistent does not list the lessons"; cat "$out/lesson-error.txt"; }

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
