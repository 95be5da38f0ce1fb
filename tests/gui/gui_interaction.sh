#!/usr/bin/env bash
# Real X input on the real app: hover shows the inspector, dragging a weight
# changes it and everything below it, Ctrl+S saves the new value, Ctrl+Z
# brings the old one back.
# usage: gui_interaction.sh APP_BINARY CLI_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 cli=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"
scenario="$out/scenario.json"
value_of() {  # value_of FILE MATRIX ROW COL
  python3 -c "import json,sys; print(json.load(open('$1'))['$2'][$3][$4])"
}

"$cli" preset fat-cat -o "$scenario" || exit 1
original=$(value_of "$scenario" W_q 1 1)
"$cli" trace "$scenario" -o "$out/before.trace.json" || exit 1
start_app "$scenario"
trap 'kill $pid 2>/dev/null' EXIT

# 1. Hovering a cell shows the inspector with that cell and lights its sources.
read -r x y < <(python3 "$here/probe.py" "$probe" cell Q 2 1)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "Q", "row": 2, "col": 1}' || fail "hovering Q[2,1] did not register"
python3 "$here/probe.py" "$probe" wait inspector '"Q[2,1]   (token '"'"'cat'"'"')"' || fail "the inspector does not show Q[2,1]"
# The sources are lit from the frame after the hover registers: wait for them.
python3 "$here/probe.py" "$probe" atleast lit 2 ||
  fail "hovering Q[2,1] lit $(python3 "$here/probe.py" "$probe" get lit) source regions, expected X's row and W_q's column"
xdotool mousemove --window "$wid" 5 400
python3 "$here/probe.py" "$probe" wait hovered 'null' || fail "moving away did not clear the hover"

# 2. Dragging W_q[1,1] upwards raises it; Q and the scores below change.
press_on W_q 1 1
x=$press_x y=$press_y
for dy in 5 15 30 45 60; do xdotool mousemove --window "$wid" "$x" $((y - dy)); sleep 0.05; done
xdotool mouseup 1
python3 "$here/probe.py" "$probe" wait modified true || fail "dragging W_q[1,1] did not modify the scenario"
xdotool mousemove --window "$wid" 5 400

# 3. Ctrl+S writes the scenario file with the new value.
before_save=$(stat -c %Y.%s "$scenario")
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+S did not save"
dragged=$(value_of "$scenario" W_q 1 1)
python3 -c "import sys; sys.exit(0 if float('$dragged') > float('$original') + 0.05 else 1)" ||
  fail "W_q[1][1] in the saved file is $dragged, expected more than $original after dragging up"
"$cli" trace "$scenario" -o "$out/after.trace.json" || fail "the saved file does not trace"
python3 - "$out/before.trace.json" "$out/after.trace.json" <<'PY' || fail "the stages below W_q did not change"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
assert a["Q"] != b["Q"], "Q unchanged"
assert a["heads"][0]["scores"] != b["heads"][0]["scores"], "scores unchanged"
assert a["K"] == b["K"] and a["V"] == b["V"], "K or V changed although only W_q was edited"
PY

# 4. Ctrl+Z brings the old value back (saved again to check it).
xdotool key --clearmodifiers ctrl+z
python3 "$here/probe.py" "$probe" wait modified true || fail "Ctrl+Z did not change the scenario"
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "second Ctrl+S did not save"
restored=$(value_of "$scenario" W_q 1 1)
[ "$restored" = "$original" ] || fail "after Ctrl+Z, W_q[1][1] is $restored, expected $original"

# 5. Double-click, type an exact value, Enter: applied and saved.
read -r x y < <(python3 "$here/probe.py" "$probe" cell W_q 2 2)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "W_q", "row": 2, "col": 2}' || fail "hovering W_q[2,2] did not register"
xdotool click --repeat 2 --delay 60 1
if ! python3 "$here/probe.py" "$probe" wait typing '{"stage": "W_q", "row": 2, "col": 2}' 3; then
  shot "double-click-missed"
  fail "double-clicking W_q[2,2] did not open the value popup ($(state))"
fi
settle 2  # the popup's text field takes the keyboard focus one frame after it appears
replace_text "0.75"
python3 "$here/probe.py" "$probe" wait modified true || fail "typing a value did not change the scenario"
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+S after typing did not save"
typed=$(value_of "$scenario" W_q 2 2)
[ "$typed" = "0.75" ] || fail "after typing 0.75, W_q[2][2] in the file is $typed"
# Enter on the value as it stands closes the popup and changes nothing.
xdotool click --repeat 2 --delay 60 1
python3 "$here/probe.py" "$probe" wait typing '{"stage": "W_q", "row": 2, "col": 2}' 3 || fail "the value popup did not open again"
settle 2
xdotool key Return
python3 "$here/probe.py" "$probe" wait typing null || fail "Enter did not close the value popup"
settle 2
[ "$(get modified)" = false ] || fail "Enter on the unchanged value 0.75 marked the scenario modified"

# 6. With unsaved changes, Ctrl+Q asks first: the app is still running, and the
#    question is on screen (photographed from the X server).
xdotool key --clearmodifiers ctrl+z
python3 "$here/probe.py" "$probe" wait modified true || fail "Ctrl+Z after typing did not change the scenario"
xdotool key --clearmodifiers ctrl+q
python3 "$here/probe.py" "$probe" wait confirm_quit true || fail "Ctrl+Q with unsaved changes did not ask"
settle 2
kill -0 $pid 2>/dev/null || fail "Ctrl+Q with unsaved changes quit without asking"
shot unsaved-question && python3 "$here/png_check.py" 1280 800 "$out/unsaved-question.png" || fail "no screenshot of the unsaved-changes question"
xdotool key Escape
python3 "$here/probe.py" "$probe" wait confirm_quit false || fail "Esc did not close the quit question"

# 6b. Opening another file over unsaved work asks the same question first
#     (undo cannot bring the work back once another file replaces it):
#     Cancel keeps everything, "without saving" goes on to the Open dialog,
#     "Save and open" saves first.
xdotool key --clearmodifiers ctrl+o
python3 "$here/probe.py" "$probe" wait unsaved_question '"open"' || fail "Ctrl+O over unsaved changes did not ask ($(state))"
[ "$(get file_dialog)" = false ] || fail "the Open dialog came up before the unsaved-changes question was answered"
shot open-over-unsaved
xdotool key Escape
python3 "$here/probe.py" "$probe" wait unsaved_question null || fail "Esc did not close the question"
[ "$(get modified)" = true ] || fail "cancelling the question dropped the unsaved changes"
[ "$(get file_dialog)" = false ] || fail "cancelling the question opened the Open dialog anyway"
xdotool key --clearmodifiers ctrl+o
python3 "$here/probe.py" "$probe" wait unsaved_question '"open"' || fail "the second Ctrl+O did not ask"
click_item "open without saving"
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "'Open without saving' did not go on to the Open dialog"
xdotool key Escape
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Esc did not close the Open dialog"
[ "$(get modified)" = true ] || fail "cancelling the Open dialog dropped the unsaved changes"
xdotool key --clearmodifiers ctrl+o
python3 "$here/probe.py" "$probe" wait unsaved_question '"open"' || fail "the third Ctrl+O did not ask"
click_item "save and open"
python3 "$here/probe.py" "$probe" wait modified false || fail "'Save and open' did not save"
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "'Save and open' did not go on to the Open dialog"
xdotool key Escape
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Esc did not close the Open dialog after saving"
stop_app
# Start again on the saved file for the last check.
start_app "$scenario"

# 7. Compare: after Ctrl+T (snapshot), dragging the second drawing of X (in
#    X·W_k) keeps editing, and the layout stays put while the Δ heatmaps
#    appear: the cell being dragged does not jump away from the mouse.
xdotool key --clearmodifiers ctrl+t
python3 "$here/probe.py" "$probe" wait snapshot true || fail "Ctrl+T took no snapshot"
settle 3
[ "$(get difference_heatmaps)" = 0 ] || fail "Δ heatmaps right after the snapshot, when nothing has changed"
# Scroll the pipeline (the wheel over empty space beside Q) if the second
# drawing is not well inside the panel.
for _ in $(seq 12); do
  read -r x y < <(python3 "$here/probe.py" "$probe" cell X 2 1 1)
  [ "$y" -lt 600 ] && break
  xdotool mousemove --window "$wid" 900 500 click 5
  settle 2
done
[ "$y" -lt 600 ] || fail "could not scroll X's second drawing into view (its cell is at y=$y)"
a1=$(get edits_applied)
press_on X 2 1 1
for dy in $(seq 4 4 60); do xdotool mousemove --window "$wid" "$x" $((y - dy)); sleep 0.04; done
settle 2
shot compare-drag
read -r x2 y2 < <(python3 "$here/probe.py" "$probe" cell X 2 1 1)
[ "$x2 $y2" = "$x $y" ] || fail "X's second drawing moved from ($x, $y) to ($x2, $y2) when the Δ heatmaps appeared mid-drag"
[ "$(get hovered)" = '{"stage": "X", "row": 2, "col": 1}' ] ||
  fail "mid-drag the inspector shows $(get hovered), expected the dragged cell X[2,1]"
xdotool mouseup 1
python3 "$here/probe.py" "$probe" wait modified true || fail "dragging X in compare mode did not modify the scenario"
a2=$(get edits_applied)
echo "compare-mode drag of X (second drawing): $((a2 - a1)) edits"
[ $((a2 - a1)) -ge 5 ] || fail "the compare-mode drag stopped after $((a2 - a1)) edits ($(state))"
python3 "$here/probe.py" "$probe" atleast difference_heatmaps 1 ||
  fail "no Δ heatmap after the drag ended in compare mode ($(state))"
shot compare-after-drag
xdotool mousemove --window "$wid" 5 400
xdotool key --clearmodifiers ctrl+z  # the drag is one undo step: back to the saved file
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+Z did not undo the compare-mode drag ($(state))"

# 8. Ctrl+Q quits (nothing unsaved, so no question).
quit_app
[ "$fails" -eq 0 ] && echo "all interaction checks passed (W_q[1][1]: $original -> $dragged -> $restored; typed W_q[2][2] = $typed)"
exit $((fails > 0))
