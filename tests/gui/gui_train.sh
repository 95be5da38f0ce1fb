#!/usr/bin/env bash
# The Train tab with real input: teach head 0 to look at the previous word,
# Play until the loss has fallen, Pause; W_q has changed in the document, one
# Ctrl+Z takes the whole run back; Reset after another run restores the
# matrices; a learning rate that diverges stops the run and says so.
# usage: gui_train.sh APP_BINARY [OUT_DIR]
set -u
export XVFB_SCREEN=${XVFB_SCREEN:-1920x1080x24}  # room for the 1920x1080 window
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"
train() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['train'][sys.argv[2]])" "$probe" "$1"; }

for app_size in 1280x720 1920x1080; do
  start_app --preset fat-cat --view train
  probe_check "p['centre_view'] == 7" || fail "--view train did not open the Train tab ($(get centre_view))"
  w_q=$(train W_q_sum)

  # 1. What to learn: a click on "the previous word" gives the scenario a loss.
  click_item "train previous"
  probe_check "p['train']['has_loss']" || fail "clicking 'the previous word' gave no loss ($(state))"

  # 2. Play until the run has taken 40 steps and the loss has fallen, then Pause.
  click_item "train play"
  probe_check "p['train']['steps'] >= 40" 60 || fail "Play took $(train steps) steps ($(train message))"
  click_item "train play"
  probe_check "not p['train']['playing']" || fail "the second click on Play/Pause did not pause"
  probe_check "p['train']['last_loss'] < 0.8 * p['train']['first_loss']" ||
    fail "the loss fell from $(train first_loss) only to $(train last_loss)"
  [ "$(train W_q_sum)" != "$w_q" ] || fail "training left W_q as it was"
  probe_check "p['snapshot']" || fail "the run took no Compare snapshot of the matrices before it"
  shot_of_screen "train-$app_size" "the Train tab"

  # 3. One Ctrl+Z: the run and the loss's edit are two entries; the first takes the whole run back.
  xdotool mousemove --window "$wid" 5 400
  xdotool key ctrl+z
  probe_check "abs(p['train']['W_q_sum'] - ($w_q)) < 1e-4" || fail "Ctrl+Z left W_q at $(train W_q_sum), before the run $w_q"
  stop_app
done

# 4. Reset after a run, and a learning rate that diverges.
app_size=1280x800
start_app --preset fat-cat --view train
w_q=$(train W_q_sum)
click_item "train first"
probe_check "p['train']['has_loss']" || fail "clicking 'the first word' gave no loss"
click_item "train step"
click_item "train step"
probe_check "p['train']['steps'] == 2" || fail "two clicks on One step took $(train steps) steps"
click_item "train reset"
probe_check "p['train']['steps'] == 0 and abs(p['train']['W_q_sum'] - ($w_q)) < 1e-4" ||
  fail "Reset left $(train steps) steps and W_q at $(train W_q_sum), before the run $w_q"
type_into "train learning rate" 1 || fail "the learning rate slider is not on the probe's items"
click_item "train play"
probe_check "p['train']['message'] != '' or p['train']['steps'] >= 30" 60 || fail "a learning rate of 1 neither trained nor stopped"
stop_app

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
