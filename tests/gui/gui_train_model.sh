#!/usr/bin/env bash
# Training, with real input. A tiny Transformer trained from scratch in the Train tab:
# choose it, make it small, Start (a thread of its own: the window keeps
# drawing), Pause part way, Play on to the last step, the loss has fallen;
# Open in model mode saves a GPT-2 folder and opens it as a model. Then the
# Why √d_k tab's experiment as two training runs.
# usage: gui_train_model.sh APP_BINARY [OUT_DIR]
set -u
export XVFB_SCREEN=${XVFB_SCREEN:-1920x1080x24}  # room for the 1920x1080 window
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"
run() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['train_model'].get(sys.argv[2]))" "$probe" "$1"; }
export XDG_CACHE_HOME="$(mktemp -d)"
trap 'rm -rf "$XDG_CACHE_HOME"' EXIT

for app_size in 1280x720 1920x1080; do
  start_app --preset fat-cat --view train
  click_item "train whole model"
  probe_check "p['train_model']['whole_model']" || fail "clicking 'a tiny Transformer from scratch' did not show it"

  # Small and quick: sort (minGPT's demo) with one 16-wide layer, 600 steps.
  choose_in_list "train model task" 3 || fail "the list of tasks did not open ($(state))"  # induction, copy, reverse, sort
  probe_check "p['train_model'].get('task') == 'sort'" || fail "choosing sort chose $(run task)"
  type_into "train model d_model" 16 || fail "the d_model field is not on the probe's items"
  type_into "train model layers" 1 || fail "the layers field is not on the probe's items"
  type_into "train model steps" 600 || fail "the steps field is not on the probe's items"
  click_item "train model start"
  probe_check "p['train_model']['started']" || fail "Start did not start a run ($(state))"
  probe_check "p['train_model']['target'] == 600" || fail "the run will take $(run target) steps, not the 600 typed"

  # Pause part way: the thread stops, the steps stay where they were.
  probe_check "p['train_model']['steps'] >= 20" 60 || fail "the run took $(run steps) steps"
  click_item "train model play"
  probe_check "not p['train_model']['running']" || fail "Pause did not stop the run"
  paused=$(run steps)
  settle 5
  [ "$(run steps)" = "$paused" ] || fail "a paused run went on from $paused to $(run steps) steps"
  click_item "train model play"
  probe_check "p['train_model']['steps'] == 600 and not p['train_model']['running']" 120 ||
    fail "Play did not run to the last step ($(run steps) steps, $(run error))"
  probe_check "p['train_model']['loss'] < 0.5 * p['train_model']['first_loss']" ||
    fail "the loss fell from $(run first_loss) only to $(run loss)"
  shot_of_screen "train-model-$app_size" "the trained tiny Transformer"

  # The trained model opens in model mode: 1 layer, 3 tokens, from the folder it was saved to.
  click_item "train model open"
  model_check "m['layers'] == 1 and 'trained' in m['path']" 60 || fail "Open in model mode did not open the model ($(run message))"
  stop_app
done

# A character-level model of a text file chosen in the file dialog (one size: the run is the same).
app_size=1280x720
text_file="$XDG_CACHE_HOME/fat cat.txt"
python3 -c "print('the fat cat sat on the mat. ' * 60)" > "$text_file"
start_app --preset fat-cat --view train
click_item "train whole model"
choose_in_list "train model task" 4 || fail "the list of tasks did not open ($(state))"  # …, sort, text
probe_check "p['train_model'].get('task') == 'text'" || fail "choosing text chose $(run task)"
click_item "train model text file"
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "Text file… opened no dialog"
settle 3  # the name field takes the keyboard a frame after the dialog appears
xdotool type --delay 20 "$text_file"
xdotool key Return
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Enter did not open the text ($(get file_dialog_error))"
probe_check "p['train_model'].get('text_chars') == 1681 and p['train_model']['vocab'] == 13" ||
  fail "the text gave $(run text_chars) characters and a vocabulary of $(run vocab) (expected 1681 and 13)"
type_into "train model d_model" 16 || fail "the d_model field is not on the probe's items"
type_into "train model layers" 1 || fail "the layers field is not on the probe's items"
type_into "train model length" 16 || fail "the length field is not on the probe's items"
type_into "train model steps" 300 || fail "the steps field is not on the probe's items"
click_item "train model start"
probe_check "p['train_model'].get('steps') == 300 and not p['train_model']['running']" 120 ||
  fail "the text run did not reach its last step ($(run steps) steps, $(run error))"
probe_check "p['train_model']['loss'] < 0.5 * p['train_model']['first_loss']" ||
  fail "on the text the loss fell from $(run first_loss) only to $(run loss)"
shot "train-text-$app_size"
click_item "train model open"
model_check "m['layers'] == 1 and 'trained' in m['path']" 60 || fail "Open in model mode did not open the text model ($(run message))"
stop_app

# The Why √d_k tab's experiment as two training runs: at d_k = 64 the run
# without the scaling stalls, and the sentence under the curves says so.
for app_size in 1280x720 1920x1080; do
  start_app --preset fat-cat --view sqrt-dk
  click_item "sqrt dk training"
  probe_check "p['sqrt_dk_training']['shown']" || fail "clicking 'as training' did not show the runs"
  click_item "sqrt dk train 64"
  probe_check "p['sqrt_dk_training']['d_k'] == 64" || fail "d_k = 64 gave d_k $(get sqrt_dk_training)"
  probe_check "p['sqrt_dk_training']['unscaled_loss'] > 1.5 * p['sqrt_dk_training']['scaled_loss']" ||
    fail "at d_k = 64 the unscaled run did not lag ($(get sqrt_dk_training))"
  probe_check "'learns more slowly' in p['sqrt_dk_training']['summary']" ||
    fail "the sentence does not say what the runs show ($(get sqrt_dk_training))"
  settle 3
  shot "sqrt-dk-training-$app_size"
  stop_app
done

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
