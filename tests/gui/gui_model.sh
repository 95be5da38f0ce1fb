#!/usr/bin/env bash
# Model mode with real X input, on the GPT-2-layout fixture (tests/models):
# the predictions of the unedited model are its greedy next token; pinning an
# attention weight of the focused layer by typing a value changes them live,
# Ctrl+Z brings them back; a click on another layer's head in the overview
# refocuses the pipeline on it (an edited layer is kept aside and comes back
# with its undo when it is focused again); typing new text reruns the model;
# the head detectors' heatmaps hold detect-heads' scores, and a click on one
# focuses its head.
# usage: gui_model.sh APP_BINARY MODEL_FIXTURES_DIR OUT_DIR CLI_BINARY
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 fixtures=$2 out=${3:-} cli=${4:-}
source "$(dirname "$0")/app_session.sh"

model() { python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['model']))" "$probe"; }

# A Hugging Face cache of its own, holding the Llama fixture as "test-org/tiny-llama".
snapshot="$out/hub/models--test-org--tiny-llama/snapshots/abc123"
mkdir -p "$snapshot" "$out/hub/models--test-org--tiny-llama/refs"
cp "$fixtures/llama-gqa/config.json" "$fixtures/llama-gqa/model.safetensors" "$snapshot/"
echo abc123 >"$out/hub/models--test-org--tiny-llama/refs/main"
export HF_HUB_CACHE="$out/hub"

app_size=${app_size:-1280x720}

# 0. Opening a model runs in the background and Cancel (clicked) gives it up:
#    the preset stays, no model mode. (Held before it starts, so the click
#    certainly lands while it runs.)
hold="$out/hold-jobs"
touch "$hold"
start_app --model "$fixtures/gpt2-conv1d" --hold-jobs-while "$hold"
python3 "$here/probe.py" "$probe" wait busy true 5 || fail "opening a model is not shown as background work"
read -r x y < <(python3 "$here/probe.py" "$probe" centre cancel_button)
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 1
python3 "$here/probe.py" "$probe" wait busy false 10 || fail "Cancel did not end the model's loading ($(state))"
rm -f "$hold"
settle 5
[ "$(get model)" = null ] || fail "after Cancel the app is in model mode: $(get model)"
case "$(get status)" in *Cancelled*) ;; *) fail "the status does not say the loading was cancelled: '$(get status)'" ;; esac
stop_app

start_app --model "$fixtures/gpt2-conv1d" --text "3 14 15 9 2 6 53" --step 6

# 1. The model is in: layer 0 focused, predictions after the last token,
#    the first being the reference's greedy next token (17), unchanged.
model_check 'm["layer"] == 0 and m["T"] == 7 and len(m["predictions"]) >= 5 and m["predictions_revision_current"]' ||
  fail "the model did not open with predictions: $(model)"
model_check 'm["predictions"][0]["id"] == 17 and all(p["p"] == p["before"] for p in m["predictions"])' ||
  fail "unedited, the top prediction is not token 17 or differs from before: $(model)"
shot model-opened

# 2. Double-click weight A₀[6,0], type 1, Enter: the last token attends only to
#    the first in head 0 (a pin), and the predictions move.
settle 3
# (drawing 1: drawing 0 is the heads grid's thumbnail in the controls panel)
read -r x y < <(python3 "$here/probe.py" "$probe" cell "weights[0]" 6 0 1)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "weights[0]", "row": 6, "col": 0}' ||
  fail "hovering weights[0][6,0] did not register ($(state))"
xdotool click --repeat 2 --delay 60 1
python3 "$here/probe.py" "$probe" wait typing '{"stage": "weights[0]", "row": 6, "col": 0}' 3 ||
  fail "double-clicking weights[0][6,0] did not open the value popup ($(state))"
settle 2
replace_text "1"
python3 "$here/probe.py" "$probe" wait undo true || fail "typing a value did not pin the weight ($(state))"
model_check 'm["predictions_revision_current"] and any(abs(p["p"] - p["before"]) > 1e-4 for p in m["predictions"])' ||
  fail "pinning a weight did not change the predictions: $(model)"
shot model-pinned

# 3. Ctrl+Z: the pin goes, the predictions are the model's again.
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait undo false || fail "Ctrl+Z did not undo the pin"
model_check 'm["predictions_revision_current"] and all(p["p"] == p["before"] for p in m["predictions"])' ||
  fail "after Ctrl+Z the predictions differ from before: $(model)"

# 4. The Model tab; a click on layer 1, head 2 of the overview focuses it.
#    The pin comes back first (redo), so layer 0 leaves edited: its document
#    is kept aside for when layer 0 is focused again.
xdotool key ctrl+shift+z
python3 "$here/probe.py" "$probe" wait modified true || fail "Ctrl+Shift+Z did not redo the pin"
settle 3
click_item "tab Model"
python3 "$here/probe.py" "$probe" wait centre_view 4 || fail "clicking the Model tab did not open it ($(get centre_view))"
settle 3
click_item "overview 1 2"
model_check 'm["layer"] == 1 and m["head"] == 2' || fail "clicking layer 1 head 2 did not focus it: $(model)"
model_check 'm["kept_layers"] == [0]' || fail "layer 0's edits were not kept when layer 1 was focused: $(model)"
model_check 'm["kept_without_stages"] == [True]' || fail "layer 0 was kept with its computed stages: $(model)"
[ "$(get modified)" = false ] || fail "layer 1, never edited, shows as modified"
shot model-view-layer1
#    Ctrl+Q asks (layer 0's kept edits are not saved); with layer 1
#    unedited there is nothing to save, so no "Save and quit"; Esc stays.
xdotool key --clearmodifiers ctrl+q
python3 "$here/probe.py" "$probe" wait confirm_quit true || fail "Ctrl+Q with kept edits did not ask"
settle 2
python3 -c "import json,sys; items=json.load(open(sys.argv[1]))['items']; sys.exit(0 if 'quit without saving' in items and 'save and quit' not in items else 1)" "$probe" ||
  fail "the quit question offers to save an unedited layer (or no way to quit)"
shot quit-with-kept-layers
xdotool key Escape
python3 "$here/probe.py" "$probe" wait confirm_quit false || fail "Esc did not close the quit question"
kill -0 $pid 2>/dev/null || fail "Esc on the quit question quit the app"

# 4b. The focused-layer slider, clicked at its left end: back to layer 0.
rect=$(python3 -c "import json,sys; print(*json.load(open(sys.argv[1]))['items']['focused layer'])" "$probe")
read -r x0 y0 x1 y1 <<<"$rect"
xdotool mousemove --window "$wid" "$(python3 -c "print(int($x0 + 6))")" "$(python3 -c "print(int(($y0 + $y1) / 2))")"
settle 2
xdotool click 1
model_check 'm["layer"] == 0' || fail "clicking the left end of the layer slider did not focus layer 0: $(model)"
#    Layer 0's pin is back, with its undo, and the predictions follow it again.
python3 "$here/probe.py" "$probe" wait modified true || fail "back on layer 0, its pin is gone ($(state))"
model_check 'm["kept_layers"] == [] and m["predictions_revision_current"] and any(abs(p["p"] - p["before"]) > 1e-4 for p in m["predictions"])' ||
  fail "back on layer 0, the predictions do not follow its pin: $(model)"
case "$(get status)" in *"edits are back"*) ;; *) fail "the status does not say layer 0's edits are back: '$(get status)'" ;; esac
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+Z on the restored layer 0 did not undo its pin"

# 5. New text, typed: the model reruns on it (at layer 0 still).
click_item "model text"
python3 "$here/probe.py" "$probe" wait text_input true || fail "clicking the text field did not give it the keyboard"
settle 2  # the click selected the whole text: typing replaces it
xdotool type --delay 30 "5 6 7"
xdotool key Return
model_check 'm["T"] == 3 and m["text"] == "5 6 7" and m["layer"] == 0' || fail "typing '5 6 7' did not rerun the model: $(model)"
[ "$(get T)" = 3 ] || fail "the focused layer's scenario has T = $(get T), expected 3"
shot model-new-text

# 6. A word the model does not know: an error, and the model as it was.
click_item "model text"
python3 "$here/probe.py" "$probe" wait text_input true || fail "clicking the text field did not give it the keyboard"
settle 2  # the click selected the whole text: typing replaces it
xdotool type --delay 30 "5 banana"
xdotool key Return
for _ in $(seq 100); do [ "$(get busy)" = false ] && python3 "$here/probe.py" "$probe" get popup | grep -q true && break; sleep 0.1; done
model_check 'm["T"] == 3' || fail "a bad word changed the model's text: $(model)"
shot model-bad-word
xdotool key Escape
python3 "$here/probe.py" "$probe" wait popup false || fail "Escape did not close the error"

# 6b. The sizes are the model's: the controls are disabled (a click on T's
#     field does not give it the keyboard, and its "+" changes nothing).
rect=$(python3 -c "import json,sys; print(*json.load(open(sys.argv[1]))['items']['T (tokens)'])" "$probe") ||
  fail "the probe does not list the T (tokens) control"
read -r x0 y0 x1 y1 <<<"$rect"
xdotool mousemove --window "$wid" $((x0 + 15)) $(((y0 + y1) / 2)); settle 2; xdotool click 1
settle 3
[ "$(get text_input)" = false ] || fail "T's field took the keyboard in model mode"
# the "+" button: the last square of the 110 px the field and its buttons take
xdotool mousemove --window "$wid" $((x0 + 110 - (y1 - y0) / 2)) $(((y0 + y1) / 2)); settle 2; xdotool click 1
settle 3
[ "$(get T)" = 3 ] || fail "T's + changed the model's layer to T = $(get T)"
model_check 'm["T"] == 3 and len(m["predictions"]) > 0' || fail "a click on the sizes cut the layer off the model: $(model)"
xdotool mousemove --window "$wid" 5 400

# 7. File ▸ Open model… (Ctrl+Shift+O) lists the cache; a click opens that
#    model. (Layer 0's pin was undone: nothing unsaved, so no question first.)
xdotool key --clearmodifiers ctrl+shift+o
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "Ctrl+Shift+O did not open the model dialog"
[ "$(get unsaved_question)" = null ] || fail "Ctrl+Shift+O asked about unsaved work when there is none"
settle 3
click_item "cached test-org/tiny-llama"
model_check 'm["layers"] == 2 and m["layer"] == 0 and m["T"] == 6 and len(m["predictions"]) > 0' ||
  fail "choosing the cached model did not open it: $(model)"
[ "$(get kv_heads)" = 2 ] || fail "the Llama fixture's layer has $(get kv_heads) K/V heads, expected 2"
shot model-from-cache

stop_app

# 8. --select with a model: the cell is selected once the model is in.
start_app --model "$fixtures/gpt2-conv1d" --text "3 14 15 9 2 6 53" --layer 1 --select 'weights[2]:6:3'
model_check 'm["layer"] == 1 and m["T"] == 7' || fail "the model did not open at layer 1: $(model)"
python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['selected']; sys.exit(0 if s and s['row'] == 6 and s['col'] == 3 and 'weights' in json.dumps(s) else 1)" "$probe" ||
  fail "--select with --model selected $(get selected), expected weights[2] row 6 col 3"
stop_app

# 9. The head detectors: every head's three scores on this text are those of
#    attention-lab-cli detect-heads; a click on the induction cell of layer 1,
#    head 2 (scrolled into view) focuses that head.
start_app --model "$fixtures/llama-gqa" --text "3 14 15 9 3 14 15" --view model
model_check 'm["T"] == 7 and len(m["head_scores"]["induction"]) == 2 and len(m["head_scores"]["induction"][0]) == 4' ||
  fail "the Model tab has no head scores: $(model)"
"$cli" detect-heads --model "$fixtures/llama-gqa" --ids 3,14,15,9,3,14,15 --json >"$out/detect-heads.json" ||
  fail "detect-heads failed"
python3 - "$probe" "$out/detect-heads.json" <<'PY' || fail "the app's head scores differ from detect-heads'"
import json, sys
app = json.load(open(sys.argv[1]))["model"]["head_scores"]
cli = json.load(open(sys.argv[2]))["scores"]
worst = max(abs(a - b) for k in cli for ra, rb in zip(app[k], cli[k]) for a, b in zip(ra, rb))
assert set(app) == set(cli) == {"previous_token", "duplicate_token", "induction"}, (app.keys(), cli.keys())
assert worst < 1e-5, worst
PY
below_view() {  # below_view ITEM: how far the item's bottom is below the centre view's (≤ 0: inside)
  python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
r = p['items'].get(sys.argv[2])
print(int(r[3] - p['centre'][3] + 4) if r else 99999)" "$probe" "$1"; }
for _ in $(seq 30); do [ "$(below_view "detector induction 1 2")" -le 0 ] && break; xdotool mousemove --window "$wid" 900 400 click 5; settle 1; done
[ "$(below_view "detector induction 1 2")" -le 0 ] || fail "could not scroll the induction heatmap into view ($(state))"
shot head-detectors
click_item "detector induction 1 2"
model_check 'm["layer"] == 1 and m["head"] == 2' || fail "clicking the induction score of layer 1, head 2 focused $(model)"
stop_app

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
