#!/usr/bin/env bash
# File ▸ Import weights… with real X input: a checkpoint with two layers and
# no layer chosen is refused in the dialog, naming the layers; the one-layer
# nn.MultiheadAttention file is imported onto fat-cat (its report shown,
# Enter closes it), and Ctrl+Z takes the import back.
# usage: gui_import.sh APP_BINARY MODEL_FIXTURES_DIR [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 fixtures=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"

# open_import_dialog: File ▸ Import weights…, with clicks.
open_import_dialog() {
  click_item "menu File"
  python3 "$here/probe.py" "$probe" wait popup true || fail "clicking File opened no menu"
  click_item "Import weights…"
  python3 "$here/probe.py" "$probe" wait file_dialog true || fail "File ▸ Import weights… opened no dialog"
  settle 3  # the name field takes the keyboard a frame after the dialog appears
}

start_app --preset fat-cat --step 2
[ "$(get T)" = 7 ] || fail "fat-cat has T = $(get T), expected 7"

# 1. The Llama fixture has layers 0 and 1: with no layer chosen, the dialog says so and stays.
open_import_dialog
xdotool type --delay 20 "$fixtures/llama-gqa/model.safetensors"
xdotool key Return
python3 "$here/probe.py" "$probe" contains file_dialog_error "layers" ||
  fail "importing a two-layer checkpoint without a layer gave no error naming the layers ($(get file_dialog_error))"
[ "$(get undo)" = false ] || fail "a refused import changed the scenario"
shot import-refused
xdotool key Escape
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Escape did not close the import dialog"

# 2. The nn.MultiheadAttention file: imported, reported, undoable.
open_import_dialog
xdotool type --delay 20 "$fixtures/mha/model.safetensors"
xdotool key Return
python3 "$here/probe.py" "$probe" contains import_report "in_proj_weight" ||
  fail "importing nn.MultiheadAttention weights showed no report naming in_proj_weight ($(get import_report); $(get file_dialog_error))"
[ "$(get undo)" = true ] || fail "the import is not an undoable edit"
settle 3
shot import-report
xdotool key Return
python3 "$here/probe.py" "$probe" wait import_report '""' || fail "Enter did not close the import report"
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait undo false || fail "Ctrl+Z did not take the import back"
stop_app

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
