#!/usr/bin/env bash
# Lessons in the real app: a screenshot of every step of every built-in lesson
# and of presenter mode, a presentation clicker (PageDown/PageUp) moving
# through a lesson, and a quiz answered with real typed input.
# usage: gui_lessons.sh APP_BINARY LESSONS_DIR [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 lessons=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"

# 1. Every step of every built-in lesson renders (slides for handouts).
shots=()
for file in "$lessons"/*.json; do
  name=$(basename "$file" .json)
  count=$(python3 -c "import json; print(len(json.load(open('$file'))['steps']))")
  for step in $(seq "$count"); do
    shot="$out/$name-step-$step.png"
    "$app" --lesson "$name" --lesson-step "$step" --size 1024x700 --screenshot "$shot" 2>"$out/stderr.txt" ||
      { fail "$name step $step: exit $?"; cat "$out/stderr.txt"; }
    shots+=("$shot")
  done
done
python3 "$here/png_check.py" 1024 700 "${shots[@]}" || fail "a lesson screenshot is blank or the wrong size"
# Presenter mode fills the (1280x800) screen.
"$app" --lesson attention-from-scratch --lesson-step 6 --presenter --screenshot "$out/presenter.png" || fail "presenter screenshot"
python3 "$here/png_check.py" 1280 800 "$out/presenter.png" || fail "presenter screenshot is blank or not full screen"
# The README's example lesson, exactly as printed, opens at its last step.
python3 - "$here/../../README.md" "$out/readme-lesson.json" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
m = re.search(r'```json\n(\{\n  "format": "attention-lab/lesson@1".*?\n\})\n```', text, re.S)
open(sys.argv[2], "w").write(m.group(1) if m else "")
PY
"$app" --lesson "$out/readme-lesson.json" --lesson-step 2 --size 1024x700 --screenshot "$out/readme-lesson.png" ||
  fail "the README's example lesson does not open"
# A bad lesson file: exit 2 and a message naming the step and the field.
printf '{"format": "attention-lab/lesson@1", "title": "t", "preset": "fat-cat", "steps": [{"title": "a", "text": "b"}, {"title": "c", "text": "d", "apply": [{"temperature": -1}]}]}' >"$out/bad-lesson.json"
"$app" --lesson "$out/bad-lesson.json" --screenshot "$out/x.png" 2>"$out/bad.txt"
[ $? -eq 2 ] || fail "a bad lesson did not exit 2"
grep -q "steps\[1\]" "$out/bad.txt" || { fail "the bad-lesson message does not name the step"; cat "$out/bad.txt"; }

# 2. A clicker: PageDown twice, PageUp once (clickers send exactly these keys).
start_app --lesson causal-masking --presenter
python3 "$here/probe.py" "$probe" wait lesson_step 1 || fail "the lesson did not open at step 1"
xdotool key Next
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "PageDown did not go to step 2"
xdotool key Next
python3 "$here/probe.py" "$probe" wait lesson_step 3 || fail "the second PageDown did not go to step 3"
xdotool key Prior
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "PageUp did not go back to step 2"
[ "$(get presenter)" = true ] || fail "--presenter did not start presenter mode"
stop_app

# 3. A quiz answered by typing: Q gives the answer box the keyboard, a wrong
# number first (nothing revealed, a retry allowed), then the right one.
# (gui_clicker.sh tests the clicker, the hint, "Show answer" and the blank screen.)
start_app --lesson causal-masking --lesson-step 5
python3 "$here/probe.py" "$probe" wait lesson_step 5 || fail "the lesson did not open at step 5"
quiz=$(get quiz)
[ "$quiz" != null ] || fail "lesson step 5 asks no quiz"
truth=$(get quiz_truth)
xdotool key q
python3 "$here/probe.py" "$probe" wait quiz_focused true || fail "Q did not give the answer box the keyboard"
xdotool type --delay 40 "12345"
xdotool key Return
python3 "$here/probe.py" "$probe" wait quiz_asked 1 || fail "a typed wrong answer was not checked"
[ "$(get quiz_right)" = 0 ] || fail "12345 was counted right"
[ "$(get quiz_revealed)" = false ] || fail "a wrong answer revealed the solution"
answer=$(python3 -c "print(f'{float(\"$truth\"):.4f}')")
xdotool key q
python3 "$here/probe.py" "$probe" wait quiz_focused true || fail "Q did not give the answer box the keyboard again"
xdotool type --delay 40 "$answer"  # over the wrong answer, which Q selected
python3 "$here/probe.py" "$probe" wait quiz_answer "\"$answer\"" || fail "the retry did not replace the wrong answer"
xdotool key Return
python3 "$here/probe.py" "$probe" wait quiz_solved true || fail "the right answer $answer (truth $truth) was not accepted"
[ "$(get quiz_right)" = 0 ] || fail "a right retry changed the first-try tally"
shot quiz-answered
stop_app

# type_half_into_wq: double-clicks W_q[2,1] (its position stays in x, y) and
# types 0.5 into the value popup.
type_half_into_wq() {
  read -r x y < <(python3 "$here/probe.py" "$probe" cell W_q 2 1)
  xdotool mousemove --window "$wid" "$x" "$y"
  python3 "$here/probe.py" "$probe" wait hovered '{"stage": "W_q", "row": 2, "col": 1}' || fail "hovering W_q[2,1] did not register"
  xdotool click --repeat 2 --delay 60 1
  python3 "$here/probe.py" "$probe" wait typing '{"stage": "W_q", "row": 2, "col": 1}' 3 || fail "double-clicking W_q[2,1] did not open the value popup ($(state))"
  settle 2
  replace_text "0.5"
  python3 "$here/probe.py" "$probe" wait modified true || fail "typing 0.5 into W_q[2,1] did not change the scenario"
}

# 4. A live "what if" during a quiz: the teacher types a new weight, and the
#    answer follows the number now on screen, not the one the quiz began with.
start_app --lesson attention-from-scratch --lesson-step 2
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "the lesson did not open at step 2"
[ "$(get quiz)" != null ] || fail "attention-from-scratch step 2 asks no quiz"
before=$(get quiz_truth)
type_half_into_wq
settle 2
after=$(get quiz_truth)
python3 -c "import sys; sys.exit(abs(float('$after') - float('$before')) > 1e-6)" &&
  fail "the quiz's answer stayed $before after W_q[2][1] changed"
answer=$(python3 -c "print(f'{float(\"$after\"):.4f}')")
xdotool key q
python3 "$here/probe.py" "$probe" wait quiz_focused true || fail "Q did not give the answer box the keyboard"
xdotool type --delay 40 "$answer"
xdotool key Return
python3 "$here/probe.py" "$probe" wait quiz_solved true || fail "the new value $answer (was $before) was not accepted"
shot quiz-after-live-edit
stop_app

# 4b. The what-if is set aside, not lost: the next step starts from the
#     lesson's numbers and says so on screen; C carries the change into it
#     (one undo entry), Ctrl+Z takes it out again.
app_size=1280x720 start_app --lesson attention-from-scratch --lesson-step 2 --presenter
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "the lesson did not open at step 2"
type_half_into_wq
xdotool key Next
python3 "$here/probe.py" "$probe" wait lesson_step 3 || fail "PageDown after the what-if did not go to step 3"
python3 "$here/probe.py" "$probe" contains what_if "W_q[2,1]" || fail "the step change did not set the change to W_q[2,1] aside ($(get what_if))"
[ "$(get modified)" = false ] || fail "step 3 did not start from the lesson's numbers"
shot what-if-set-aside
xdotool key c
python3 "$here/probe.py" "$probe" wait what_if_carried true || fail "C did not carry the what-if into step 3"
python3 "$here/probe.py" "$probe" wait modified true || fail "the carried what-if did not change step 3's numbers"
xdotool key --clearmodifiers ctrl+z
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+Z did not take the carried what-if out in one step"
# A clicker never sticks in the value box a double-click opens: PageDown
# closes it unapplied and turns the page.
xdotool key Prior
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "PageUp did not go back to step 2"
read -r x y < <(python3 "$here/probe.py" "$probe" cell W_q 2 1)
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click --repeat 2 --delay 60 1
python3 "$here/probe.py" "$probe" wait typing '{"stage": "W_q", "row": 2, "col": 1}' 3 || fail "double-clicking W_q[2,1] did not open the value box"
xdotool key Next
python3 "$here/probe.py" "$probe" wait lesson_step 3 || fail "PageDown in the value box did not turn the page ($(state))"
python3 "$here/probe.py" "$probe" wait typing null || fail "PageDown left the value box open"
[ "$(get modified)" = false ] || fail "the value box applied its value on PageDown"
stop_app

# 5. Compare on a slide: after Ctrl+T each matrix of the slide has room for
#    its change under it; a typed weight brings the Δ heatmaps of W_q and Q
#    without moving the slide, and X says it has not changed.
start_app --lesson attention-from-scratch --lesson-step 2
python3 "$here/probe.py" "$probe" wait lesson_step 2 || fail "the lesson did not open at step 2"
xdotool key --clearmodifiers ctrl+t
python3 "$here/probe.py" "$probe" wait snapshot true || fail "Ctrl+T took no snapshot on a slide"
settle 3
[ "$(get difference_heatmaps)" = 0 ] || fail "Δ heatmaps on the slide right after the snapshot, when nothing has changed"
type_half_into_wq
python3 "$here/probe.py" "$probe" atleast difference_heatmaps 2 || fail "no Δ heatmaps of W_q and Q on the slide after the edit ($(state))"
settle 2
read -r x2 y2 < <(python3 "$here/probe.py" "$probe" cell W_q 2 1)
[ "$x2 $y2" = "$x $y" ] || fail "W_q[2,1] moved from ($x, $y) to ($x2, $y2) when the Δ heatmaps appeared on the slide"
shot compare-slide
stop_app

echo "${#shots[@]} lesson screenshots in $out"
[ "$fails" -eq 0 ] && echo "all lesson checks passed"
exit $((fails > 0))
