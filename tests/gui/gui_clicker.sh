#!/usr/bin/env bash
# A presentation clicker in the real app: PageDown through every step of every
# built-in lesson and PageUp back (quiz steps included), in presenter mode;
# the quiz's answer box takes the keyboard only on Q or a click, Enter checks,
# a wrong answer reveals nothing and offers a hint, "Show answer" reveals, and
# B / '.' blank the screen. Every wait is on the app's --probe state.
# usage: gui_clicker.sh APP_BINARY LESSONS_DIR [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 lessons=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"
wait_for() { python3 "$here/probe.py" "$probe" wait "$@"; }
# turn_to STEP KEY: presses KEY (Next or Prior) until the lesson is at STEP;
# a slide in pages takes a press per page (each waited for on the probe).
turn_to() {
  local step page
  for _ in $(seq 12); do
    step=$(get lesson_step) page=$(get slide_page)
    xdotool key "$2"
    probe_check "p['lesson_step'] != $step or p['slide_page'] != $page" 10 || return 1
    [ "$(get lesson_step)" = "$1" ] && return 0
  done
  return 1
}

# quiz_on_screen: waits until the quiz's "?" is where the audience sees it: in
# the pipeline, its cell's centre inside the centre area (the probe's "centre"
# when it has one, else the screen above the lesson text); in Softmax up
# close, the quiz's row is the one shown.
quiz_on_screen() {
  python3 - "$probe" <<'PY'
import json, re, sys, time
deadline = time.time() + 10
why = ""
while time.time() < deadline:
    try:
        p = json.load(open(sys.argv[1]))
    except (OSError, ValueError):
        time.sleep(0.1)
        continue
    m = re.match(r"(.+)\[(\d+)\]\[(\d+)\]$", p["quiz"] or "")
    if not m:
        why = "no quiz"
    elif p["centre_view"] == 2:
        if p["softmax_row"] == int(m.group(2)):
            sys.exit(0)
        why = "Softmax up close shows row %d, the quiz is on row %s" % (p["softmax_row"], m.group(2))
    else:
        stage, row, col = m.group(1), int(m.group(2)), int(m.group(3))
        x0, y0, x1, y1 = p.get("centre", [0, 0, 1280, 800 * 0.6])
        for h in [h for h in p["heatmaps"] if h["stage"] == stage]:
            r, c = (col, row) if h["transposed"] else (row, col)
            rows, cols = (h["cols"], h["rows"]) if h["transposed"] else (h["rows"], h["cols"])
            x = h["x0"] + (c + 0.5) * (h["x1"] - h["x0"]) / cols
            y = h["y0"] + (r + 0.5) * (h["y1"] - h["y0"]) / rows
            if x0 <= x <= x1 and y0 <= y <= y1:
                sys.exit(0)
            why = "%s at (%d, %d), outside %s" % (p["quiz"], x, y, [x0, y0, x1, y1])
        if not why:
            why = "%s is not drawn" % stage
    time.sleep(0.1)
print(why)
sys.exit(1)
PY
}

# 1. Every built-in lesson, PageDown only from step 1 to the last and PageUp
#    only back to step 1, in presenter mode. A quiz step asks in the teacher's
#    words, leaves the keyboard to the clicker, and shows its "?".
for file in "$lessons"/*.json; do
  name=$(basename "$file" .json)
  python3 - "$file" >"$out/$name.quizzes" <<'PY'
import json, sys
for i, s in enumerate(json.load(open(sys.argv[1]))["steps"]):
    q = s.get("quiz")
    print(i + 1, json.dumps(q.get("question", "")) if q else "null")
PY
  count=$(wc -l <"$out/$name.quizzes")
  start_app --lesson "$name" --presenter
  wait_for lesson_step 1 || fail "$name did not open at step 1"
  for step in $(seq 1 "$count"); do
    if [ "$step" -gt 1 ]; then
      turn_to "$step" Next || { fail "$name: PageDown did not reach step $step ($(state))"; break; }
    fi
    question=$(sed -n "${step}p" "$out/$name.quizzes" | cut -d' ' -f2-)
    if [ "$question" != null ]; then
      wait_for quiz_question "$question" || fail "$name step $step does not ask the lesson's question"
      [ "$(get quiz_focused)" = false ] || fail "$name step $step: the answer box took the keyboard by itself"
      quiz_on_screen || { fail "$name step $step: the quiz's ? is not on screen"; shot "$name-quiz-step-$step"; }
    else
      [ "$(get quiz)" = null ] || fail "$name step $step asks a quiz the lesson does not have"
    fi
  done
  # Past the last page of the last step: stays there.
  for _ in $(seq $(($(get slide_pages) - $(get slide_page) + 1))); do xdotool key Next; settle 2; done
  settle 3
  [ "$(get lesson_step)" = "$count" ] || fail "$name: PageDown past the end left the last step"
  for step in $(seq $((count - 1)) -1 1); do
    turn_to "$step" Prior || { fail "$name: PageUp did not come back to step $step ($(state))"; break; }
  done
  [ "$(get presenter)" = true ] || fail "$name: not in presenter mode"
  stop_app
  echo "$name: PageDown through $count steps and PageUp back ($SECONDS s so far)"
done

# 1b. Slide software's keys: Space is the next step, Shift+Space and
#     Backspace the previous; none of them plays the hidden step-through.
start_app --lesson causal-masking --presenter
wait_for lesson_step 1 || fail "causal-masking did not open at step 1"
through=$(get step)
xdotool key space
wait_for lesson_step 2 || fail "Space did not move the lesson to step 2 ($(state))"
xdotool key shift+space
wait_for lesson_step 1 || fail "Shift+Space did not move the lesson back to step 1 ($(state))"
xdotool key space space
wait_for lesson_step 3 || fail "Space twice did not reach step 3 ($(state))"
xdotool key BackSpace
wait_for lesson_step 2 || fail "Backspace did not move the lesson back to step 2 ($(state))"
[ "$(get playing)" = false ] || fail "Space in a lesson started playing the step-through"
[ "$(get step)" = "$through" ] || fail "Space in a lesson moved the step-through from $through to $(get step)"
stop_app

# 2. A quiz step in the pipeline: typed digits go nowhere until Q or a click
#    on the answer box; Enter checks; a wrong answer reveals nothing, offers a
#    hint that lights the cells the answer is made from; a retry is checked.
start_app --lesson attention-from-scratch --lesson-step 5
wait_for lesson_step 5 || fail "attention-from-scratch did not open at step 5"
wait_for quiz '"scores[0][6][1]"' || fail "step 5 does not ask for scores[0][6][1]"
truth=$(get quiz_truth)
xdotool type --delay 30 "123"
settle 3
[ "$(get quiz_answer)" = '""' ] || fail "digits typed before Q or a click reached the answer box: $(get quiz_answer)"
[ "$(get lesson_step)" = 5 ] || fail "typed digits moved the lesson"
read -r bx by < <(python3 "$here/probe.py" "$probe" centre quiz_answer_box)
xdotool mousemove "$bx" "$by"; settle 2; xdotool click 1
wait_for quiz_focused true || fail "a click on the answer box did not give it the keyboard"
xdotool type --delay 30 "12345"
wait_for quiz_answer '"12345"' || fail "typing into the focused answer box did not land"
xdotool key Return
wait_for quiz_asked 1 || fail "Enter did not check the answer"
[ "$(get quiz_revealed)" = false ] || fail "a wrong answer revealed the solution"
[ "$(get quiz_solved)" = false ] || fail "12345 was accepted"
[ "$(get quiz_right)" = 0 ] || fail "12345 was counted right"
message=$(get quiz_message)
case "$message" in *"Not right"*) ;; *) fail "the wrong answer's message: $message" ;; esac
shown=$(python3 -c "print('%.4g' % $truth)")
case "$message" in *"$shown"*) fail "the wrong answer's message gives the value $shown: $message" ;; esac
[ "$(get quiz_hint)" = false ] || fail "the hint showed before it was asked for"
read -r hx hy < <(python3 "$here/probe.py" "$probe" centre quiz_hint_button)
xdotool mousemove "$hx" "$hy"; settle 2; xdotool click 1
wait_for quiz_hint true || fail "the Hint button did not show the hint"
python3 "$here/probe.py" "$probe" atleast lit 2 || fail "the hint lit no cells ($(get lit) lit)"
[ "$(get quiz_revealed)" = false ] || fail "the hint revealed the solution"
shot quiz-hint
# Retry: Q (selects the wrong answer), the right value, Enter.
xdotool key q
wait_for quiz_focused true || fail "Q did not give the answer box the keyboard"
answer=$(python3 -c "print('%.4f' % $truth)")
xdotool type --delay 30 "$answer"  # over the wrong answer, which Q selected
wait_for quiz_answer "\"$answer\"" || fail "the retry did not replace the wrong answer ($(get quiz_answer))"
xdotool key Return
wait_for quiz_solved true || fail "the right retry (truth $truth) was not accepted"
[ "$(get quiz_asked)" = 1 ] || fail "the retry counted as another question"
[ "$(get quiz_right)" = 0 ] || fail "a right retry counted as right at the first try"
shot quiz-solved
# While the answer box has the keyboard, PageDown/PageUp still move the lesson
# and Ctrl+plus/minus still change the font size.
xdotool key Prior
wait_for lesson_step 4 || fail "PageUp after the quiz did not go to step 4"
xdotool key Next
wait_for lesson_step 5 || fail "PageDown did not come back to the quiz step"
wait_for quiz_solved false || fail "coming back did not ask the quiz again"
xdotool key q
wait_for quiz_focused true || fail "Q did not give the new round's answer box the keyboard"
xdotool type --delay 30 "0.5"
wait_for quiz_answer '"0.5"' || fail "typing after Q did not land"
xdotool key --clearmodifiers ctrl+equal
python3 "$here/probe.py" "$probe" contains status "Font scale 11" || fail "Ctrl+plus was swallowed by the answer box ($(get status))"
xdotool key --clearmodifiers ctrl+minus
python3 "$here/probe.py" "$probe" wait status '"Font scale 100 %"' || fail "Ctrl+minus was swallowed by the answer box ($(get status))"
[ "$(get quiz_focused)" = true ] || fail "the font size change took the keyboard from the answer box"
xdotool key Next
wait_for lesson_step 6 || fail "PageDown was swallowed by the focused answer box"
xdotool key Prior
wait_for lesson_step 5 || fail "PageUp from step 6 did not come back"
wait_for quiz_answer '""' || fail "a new round kept the old typed answer"
# "Show answer" reveals, and counts as not right at the first try.
read -r sx sy < <(python3 "$here/probe.py" "$probe" centre quiz_show_button)
xdotool mousemove "$sx" "$sy"; settle 2; xdotool click 1
wait_for quiz_revealed true || fail "Show answer did not reveal"
[ "$(get quiz_asked)" = 2 ] || fail "a shown answer was not counted as asked ($(get quiz_asked))"
[ "$(get quiz_right)" = 0 ] || fail "a shown answer was counted right"
shot quiz-shown
stop_app

# 3. B and '.' blank the screen (a clicker's "blank" button), in presenter
#    mode on a Softmax up close step; B again or PageDown brings the slide back
#    without skipping it.
start_app --lesson causal-masking --lesson-step 5 --presenter
wait_for lesson_step 5 || fail "causal-masking did not open at step 5"
xdotool key b
wait_for blank true || fail "B did not blank the screen"
shot blank
python3 - "$out/blank.png" <<'PY' || fail "the blank screen is not black"
import struct, sys, zlib
# xwd_to_png.py writes unfiltered 8-bit RGB rows: a 0 byte, then R G B per pixel.
data = open(sys.argv[1], "rb").read()
w, h = struct.unpack(">II", data[16:24])
idat, i = b"", 8
while i < len(data):
    n = struct.unpack(">I", data[i:i + 4])[0]
    if data[i + 4:i + 8] == b"IDAT":
        idat += data[i + 8:i + 8 + n]
    i += 12 + n
raw = zlib.decompress(idat)
lit = sum(1 for y in range(h) for v in raw[y * (3 * w + 1) + 1:(y + 1) * (3 * w + 1)] if v > 8)
print("blank screen: %d bright subpixels of %d" % (lit, 3 * w * h))
sys.exit(0 if lit == 0 else 1)
PY
xdotool key b
wait_for blank false || fail "B again did not bring the slide back"
xdotool key period
wait_for blank true || fail "'.' did not blank the screen"
xdotool key Next
wait_for blank false || fail "PageDown did not leave the blank screen"
settle 3
[ "$(get lesson_step)" = 5 ] || fail "PageDown on a blank screen skipped the slide"
xdotool key Next
wait_for lesson_step 6 || fail "PageDown after the blank screen did not move on"
stop_app

# 4. "Quiz me" outside a lesson picks any computed cell of the whole
#    pipeline, often far down: the view scrolls to its "?".
app_size=1280x720 start_app --preset fat-cat
click_item "Quiz me"
quiz_on_screen >/dev/null || { shot quiz-me-off-screen; fail "after Quiz me the quiz's \"?\" is not on screen: $(quiz_on_screen)"; }
shot quiz-me
stop_app

# 5. On a 1280×720 projector in presenter mode the views' text and controls
#    wrap to the width they have: no view is wider than the screen shows
#    (a sideways scroll bar, text cut at its edge).
for view in heads softmax sqrt-dk; do
  app_size=1280x720 start_app --preset multi-head --view "$view" --presenter
  settle 5
  overflow=$(get centre_overflow_x)
  python3 -c "import sys; sys.exit(0 if float('$overflow') == 0 else 1)" ||
    { fail "the $view view at 1280x720 in presenter mode is $overflow px wider than it shows"; shot "overflow-$view"; }
  stop_app
done

# 6. A wrong answer on a 1280×720 projector: the verdict and the Hint button
#    under it are in view (the short inspector left them below its edge), and
#    the tolerance it states does not give the value away (5 % of a score
#    above 1, not its absolute size).
app_size=1280x720 start_app --lesson cross-attention --lesson-step 4 --presenter
wait_for quiz '"scores[0][1][2]"' || fail "cross-attention step 4 does not ask for scores[0][1][2]"
xdotool key q
wait_for quiz_focused true || fail "Q did not give the answer box the keyboard"
xdotool type --delay 30 "3"
wait_for quiz_answer '"3"' || fail "typing 3 did not land in the answer box"
xdotool key Return
wait_for quiz_asked 1 || fail "Enter did not check the answer"
settle 3
python3 - "$probe" <<'PY' || { shot quiz-720-hint; fail "after a wrong answer at 1280x720 the Hint button is out of view or the message gives the value ($(get quiz_message))"; }
import json, sys
p = json.load(open(sys.argv[1]))
hint, area = p["quiz_hint_button"], p["inspector_area"]
assert hint[3] > hint[1], "no Hint button drawn"
assert area[1] - 1 <= hint[1] and hint[3] <= area[3] + 1, f"Hint {hint} outside the inspector's view {area}"
truth, message = p["quiz_truth"], p["quiz_message"]
assert "within 5 %" in message, message
allowed = 0.05 * abs(truth)
assert ("%.4g" % allowed) not in message and ("%.3g" % allowed) not in message, message
PY
stop_app

# 7. On a 1280×720 projector a step with five 8×8 matrices: the slide folds
#    the text to one line itself so its cells are readable (22 px with their
#    numbers); N shows the whole text (the slide then shows its stages as
#    large as the room left allows); N again folds it.
app_size=1280x720 start_app --lesson positions --lesson-step 6 --presenter
wait_for lesson_step 6 || fail "positions did not open at step 6"
readable_slide() {
  python3 "$here/slide_check.py" "$probe" 6 --least 22 --walk >"$out/readable.txt" ||
    { fail "$1: $(cat "$out/readable.txt")"; shot "lesson-$2"; }
}
wait_for lesson_text_folded_by '"slide"' || fail "the slide did not fold the text for room ($(get slide_room))"
readable_slide "with the text folded by the slide" text-folded
[ "$(get lesson_text_clipped)" = false ] || fail "the folded text is clipped"
xdotool key n
wait_for lesson_text_folded false || fail "N did not bring the whole text back"
settle 3
[ "$(get lesson_text_clipped)" = false ] || fail "the whole text is clipped"
# The whole text leaves the slide too little room to be readable even in
# pages: it shows every stage at once, as large as the room allows.
python3 "$here/slide_check.py" "$probe" 6 >"$out/shown.txt" || fail "with the whole text shown: $(cat "$out/shown.txt")"
[ "$(get slide_pages)" = 1 ] || fail "with the whole text shown the slide has $(get slide_pages) unreadable pages"
shot lesson-text-shown
xdotool key n
wait_for lesson_text_folded_by '"you"' || fail "N again did not fold the text"
readable_slide "with the text folded by N" text-folded-again
stop_app

# 8. The pipeline in presenter mode on a 1280×720 projector: the stage a step
#    is about is on screen whole (its cells shrink to fit the view's height),
#    from step 5 (the masked scores, 7×7) with the clicker through step 8,
#    "concatenate heads", which with one head shows the head's context.
app_size=1280x720 start_app --preset fat-cat --presenter --step 5
wait_for step 4 || fail "fat-cat did not open at step 5"
msg=$(python3 "$here/probe.py" "$probe" inside "masked[0]") || fail "step 5's masked scores are not on screen whole: $msg"
shot presenter-720-step5
for step in 6 7 8; do
  xdotool key Next
  wait_for step $((step - 1)) || fail "PageDown did not go to step $step"
done
msg=$(python3 "$here/probe.py" "$probe" inside "context[0]") ||
  fail "step 8 (one head) does not show the head's context whole: $msg"
shot presenter-720-step8
stop_app

[ "$fails" -eq 0 ] && echo "all clicker checks passed"
exit $((fails > 0))
