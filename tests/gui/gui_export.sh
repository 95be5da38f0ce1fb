#!/usr/bin/env bash
# Slide-quality export: a heatmap exported through the GUI with real input
# (right-click → Export PNG… → Enter) is rendered off screen at 2×, with its
# title and colour bar and no pixel of the dialog; headless --export gives
# twice the pixels at 2× and the same bytes on every run; --screenshot is
# the same on every run with the step's animation finished; a bad stage name
# exits 2 listing the valid ones; Export CSV… suggests weights-head0.csv and
# writes token headers.
# usage: gui_export.sh APP_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
[ -n "$out" ] && rm -rf "$out"  # the test checks files it writes there
source "$(dirname "$0")/app_session.sh"
check="$here/png_export_check.py"
size() { python3 "$check" size "$1"; }

# 1. Headless: 1× and 2× of one heatmap; twice the pixels, title and colour bar.
"$app" --export 'weights[0]' "$out/a1.png" || fail "--export weights[0] exited $?"
"$app" --export 'weights[0]' "$out/a2.png" --export-scale 2 || fail "--export-scale 2 exited $?"
"$app" --export 'weights[0]' "$out/a1-again.png" || fail "second --export exited $?"
read -r w1 h1 < <(size "$out/a1.png")
read -r w2 h2 < <(size "$out/a2.png")
[ "$w2" -eq $((2 * w1)) ] && [ "$h2" -eq $((2 * h1)) ] || fail "2× export is ${w2}x${h2}, expected twice ${w1}x${h1}"
python3 "$check" heatmap "$out/a1.png" 1 || fail "the 1× export lacks its title or colour bar"
python3 "$check" heatmap "$out/a2.png" 2 || fail "the 2× export lacks its title or colour bar"
cmp -s "$out/a1.png" "$out/a1-again.png" || fail "two runs of --export weights[0] gave different PNGs"
# 1b. With no display at all (a server, a CI job): the same pictures, drawn
#     off screen through EGL. An export is the same bytes; a screenshot of
#     the whole window the same but for a few blended pixels one shade apart.
env -u DISPLAY -u WAYLAND_DISPLAY "$app" --export 'weights[0]' "$out/a1-no-display.png" ||
  fail "--export with no display exited $?"
cmp -s "$out/a1.png" "$out/a1-no-display.png" || fail "--export with no display differs from the export under X"
env -u DISPLAY -u WAYLAND_DISPLAY "$app" --lesson causal-masking --lesson-step 3 --size 1024x768 --frames 10 \
  --screenshot "$out/shot-no-display.png" || fail "--screenshot with no display exited $?"
"$app" --lesson causal-masking --lesson-step 3 --size 1024x768 --frames 10 --screenshot "$out/shot-x.png" ||
  fail "--screenshot under X exited $?"
differ=$(python3 "$check" differ "$out/shot-no-display.png" "$out/shot-x.png") ||
  fail "the screenshot with no display is not the window's size: $differ"
[ "${differ:-999999}" -lt 400 ] 2>/dev/null || fail "the screenshot with no display differs from X's in $differ pixels"
DISPLAY= WAYLAND_DISPLAY= "$app" --lesson causal-masking >/dev/null 2>"$out/no-display.txt" &&
  fail "the interactive app started with no display"
grep -q "display" "$out/no-display.txt" || fail "with no display the app does not say so: $(cat "$out/no-display.txt")"
# 4× and the step and view exports of a lesson write pictures too.
"$app" --lesson attention-from-scratch --lesson-step 4 --export step "$out/step.png" --export-scale 2 ||
  fail "--export step exited $?"
"$app" --lesson attention-from-scratch --lesson-step 4 --export step "$out/step1.png" || fail "--export step at 1× exited $?"
"$app" --export view "$out/view.png" || fail "--export view exited $?"
"$app" --export 'scores[0]' "$out/a4.png" --export-scale 4 || fail "--export-scale 4 exited $?"
read -r w4 h4 < <(size "$out/a4.png")
read -r ws hs < <(size "$out/step.png")
read -r ws1 hs1 < <(size "$out/step1.png")
read -r wv hv < <(size "$out/view.png")
# (A step's slide is cropped to the pixels it draws: at 2× the edge of a
# letter may reach one logical pixel further than at 1×.)
near_twice() { [ $(($1 - 2 * $2)) -le 4 ] && [ $((2 * $2 - $1)) -le 4 ]; }
[ "$w4" -gt "$w2" ] && near_twice "$ws" "$ws1" && near_twice "$hs" "$hs1" && [ "$hv" -gt 800 ] ||
  fail "unexpected sizes: 4× scores ${w4}x${h4}, step ${ws}x${hs} at 2× and ${ws1}x${hs1} at 1×, whole view ${wv}x${hv} (taller than the window)"

# 1b. A step's slide for a handout: cropped to its content with an even
#     margin, and without what belongs to the screen (the quiz's "?", the
#     highlight outlines) unless --export-with-highlights asks for them.
"$app" --lesson attention-from-scratch --lesson-step 8 --export step "$out/quiz-plain.png" || fail "--export step of a quiz step exited $?"
"$app" --lesson attention-from-scratch --lesson-step 8 --export step "$out/quiz-marked.png" --export-with-highlights ||
  fail "--export-with-highlights exited $?"
"$app" --lesson attention-from-scratch --lesson-step 8 --export step "$out/quiz-plain2.png" --export-scale 2 || fail "--export-scale 2 of a quiz step exited $?"
python3 "$check" margins "$out/quiz-plain.png" 1 || fail "the 1× step export is not cropped to its content with an even margin"
python3 "$check" margins "$out/quiz-plain2.png" 2 || fail "the 2× step export is not cropped to its content with an even margin"
python3 "$check" margins "$out/step1.png" 1 || fail "the step export of a lesson is not cropped to its content"
read -r plain_quiz plain_outline < <(python3 "$check" marks "$out/quiz-plain.png")
read -r marked_quiz marked_outline < <(python3 "$check" marks "$out/quiz-marked.png")
[ "$plain_quiz" -eq 0 ] && [ "$plain_outline" -eq 0 ] ||
  fail "a plain export shows the quiz's ? ($plain_quiz px) or a highlight outline ($plain_outline px)"
[ "$marked_quiz" -gt 50 ] && [ "$marked_outline" -gt 20 ] ||
  fail "--export-with-highlights lost the quiz's ? ($marked_quiz px) or the highlight outline ($marked_outline px)"

# 2. Deterministic screenshots: step 6 animates the softmax row by row; the
#    shot shows it finished, the same on every run.
"$app" --step 6 --size 1024x700 --screenshot "$out/step6-a.png" || fail "--step 6 --screenshot exited $?"
"$app" --step 6 --size 1024x700 --screenshot "$out/step6-b.png" || fail "second --step 6 --screenshot exited $?"
cmp -s "$out/step6-a.png" "$out/step6-b.png" || fail "two --step 6 screenshots differ"

# 3. A bad stage name: exit 2, naming the valid stages.
"$app" --export 'wieghts[0]' "$out/bad.png" 2>"$out/bad.txt"
status=$?
[ "$status" -eq 2 ] || fail "--export wieghts[0] exited $status, expected 2"
grep -q "weights\[0\]" "$out/bad.txt" && grep -q "W_q" "$out/bad.txt" || fail "the error does not list the stages: $(cat "$out/bad.txt")"
[ ! -e "$out/bad.png" ] || fail "a PNG was written for a bad stage name"

# 4. Through the GUI with real input: right-click A₀ → Export PNG… → Enter.
#    The dialog pre-fills weights-head0.png in the app's working directory at 2×.
mkdir -p "$out/gui" && cd "$out/gui"
start_app --step 6  # scrolls A₀ into view
# (Each click comes after the app has drawn frames with the pointer there:
# moved and clicked at once, a busy machine's frame could see the click
# before the move, and the CSV dialog of step 5 once never opened.)
read -r x y < <(python3 "$here/probe.py" "$probe" cell 'weights[0]' 3 3 1)  # drawing 0 is the heads thumbnail
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 3
python3 "$here/probe.py" "$probe" item 'Export PNG…' >/dev/null || fail "right-click on A₀ opened no menu with Export PNG…"
click_item 'Export PNG…'
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "Export PNG… opened no dialog"
settle 3
shot with-dialog >/dev/null
xdotool key Return
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Enter did not close the dialog"
python3 - "$probe" "$out/gui/weights-head0.png" <<'PY' || fail "the app did not report the export"
import json, sys, time
for _ in range(100):
    try:
        if json.load(open(sys.argv[1]))["last_export"]["path"].endswith("weights-head0.png"): sys.exit(0)
    except (OSError, ValueError): pass
    time.sleep(0.1)
sys.exit(1)
PY
gui_png="$out/gui/weights-head0.png"
[ -s "$gui_png" ] || fail "no weights-head0.png written (default name)"
read -r gw gh < <(size "$gui_png")
pw=$(python3 -c "import json; print(json.load(open('$probe'))['last_export']['width'])")
ph=$(python3 -c "import json; print(json.load(open('$probe'))['last_export']['height'])")
[ "$gw" = "$pw" ] && [ "$gh" = "$ph" ] || fail "the PNG is ${gw}x${gh}, the off-screen target was ${pw}x${ph}"
[ "$gw" -ne 1280 ] && [ "$gh" -ne 800 ] || fail "the PNG has the window's size (${gw}x${gh}): a screen copy?"
[ "$gw" -eq "$w2" ] && [ "$gh" -eq "$h2" ] || fail "the GUI's 2× export is ${gw}x${gh}, the headless one ${w2}x${h2}"
python3 "$check" heatmap "$gui_png" 2 || fail "the GUI export lacks its title or colour bar, or holds dialog pixels"
# Nothing of the screen reaches the picture: it is byte for byte the headless one.
cmp -s "$gui_png" "$out/a2.png" || fail "the GUI export differs from the headless export of the same heatmap"
# The dialog really was on screen over the app when Enter was pressed.
python3 "$check" dialog "$out/with-dialog.png" >/dev/null || fail "the checker does not see the dialog in a screen copy"
# 5. Export CSV… of the same heatmap pre-fills weights-head0.csv (not the PNG's
#    name) and writes the tokens as row and column headers.
read -r x y < <(python3 "$here/probe.py" "$probe" cell 'weights[0]' 3 3 1)
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 3
python3 "$here/probe.py" "$probe" item 'Export CSV…' >/dev/null || fail "right-click on A₀ opened no menu with Export CSV…"
click_item 'Export CSV…'
python3 "$here/probe.py" "$probe" wait file_dialog true || fail "Export CSV… opened no dialog"
settle 3
xdotool key Return
python3 "$here/probe.py" "$probe" wait file_dialog false || fail "Enter did not close the CSV dialog"
for _ in $(seq 50); do [ -s "$out/gui/weights-head0.csv" ] && break; sleep 0.1; done
[ "$(head -1 "$out/gui/weights-head0.csv" 2>/dev/null)" = ",the,fat,cat,sat,on,the,mat" ] ||
  fail "weights-head0.csv has no token header: $(head -2 "$out/gui/weights-head0.csv" 2>&1)"
[ "$(sed -n 2p "$out/gui/weights-head0.csv" | cut -d, -f1-2)" = "the,1" ] ||
  fail "weights-head0.csv rows do not start with their token: $(sed -n 2p "$out/gui/weights-head0.csv")"
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null

[ "$fails" -eq 0 ] && echo "all export checks passed"
exit $((fails > 0))
