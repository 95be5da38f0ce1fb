#!/usr/bin/env bash
# Every step of every built-in lesson as a slide, at projector sizes in
# presenter mode: each stage a step lists in "show" is drawn entirely inside
# the centre view with cells of at least 22 px and its numbers printed (on
# one of the step's pages), and the lesson text is never clipped. One app per
# lesson and size, stepped with PageDown from the first page to the last (as
# a clicker does) and back with PageUp; every wait is on the app's probe,
# never on time alone.
# usage: gui_slides.sh APP_BINARY LESSONS_DIR [OUT_DIR [PART]]
# PART is one projector size (1024x768 or 1280x720: every step of every
# lesson at that size) or "text" (text sizes, the windowed slide); without it,
# all three. (ctest runs each part as a test of its own, side by side.)
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 lessons=$2 out=${3:-} part=${4:-all}
source "$(dirname "$0")/app_session.sh"
case "$part" in
  all) sizes=(1024x768 1280x720) ;;
  1024x768|1280x720) sizes=("$part") ;;
  text) sizes=() ;;
  *) echo "gui_slides.sh: PART must be 1024x768, 1280x720 or text, found '$part'" >&2; exit 2 ;;
esac

for size in "${sizes[@]}"; do
  for file in "$lessons"/*.json; do
    name=$(basename "$file" .json)
    app_size=$size start_app --lesson "$name" --presenter
    [ "$(get presenter)" = true ] || fail "$name at $size: --presenter did not start presenter mode"
    count=$(get lesson_steps)
    [ "$count" -gt 0 ] || fail "$name at $size: the probe says the lesson has $count steps"
    # --presenter with --size is a window of that size, not the whole screen.
    read -r cx0 cy0 cx1 cy1 < <(get centre | python3 -c "import json,sys; print(*map(int, json.load(sys.stdin)))")
    [ "$cx1" -le "${size%x*}" ] && [ "$cy1" -le "${size#*x}" ] ||
      fail "$name at $size: the centre ($cx0,$cy0)-($cx1,$cy1) is outside a ${size} window"
    pages=()
    for step in $(seq "$count"); do
      [ "$step" -gt 1 ] && xdotool key Next
      if ! python3 "$here/slide_check.py" "$probe" "$step" --least 22 --walk; then
        fail "$name step $step at $size presenter"
        shot "$name-step-$step-$size"
      fi
      pages[$step]=$(get slide_pages)
    done
    # Back to the first step with PageUp alone: every page again, in reverse.
    for step in $(seq "$count" -1 1); do
      for page in $(seq "${pages[$step]}" -1 1); do
        [ "$step" -eq "$count" ] && [ "$page" -eq "${pages[$step]}" ] && continue
        xdotool key Prior
        probe_check "p['lesson_step'] == $step and p['slide_page'] == $page" ||
          { fail "$name at $size: PageUp did not come back to step $step page $page (at $(get lesson_step) page $(get slide_page))"; break 2; }
      done
    done
    stop_app
  done
done

if [ "$part" = all ] || [ "$part" = text ]; then
# Ctrl+plus and Ctrl+minus make a small slide's matrices larger and smaller
# with its text (one mask: cells under the 2.5-lines cap), and a full slide
# keeps cells of at least 22 px whatever the text size.
app_size=1280x720 start_app --lesson causal-masking --lesson-step 3 --presenter
python3 "$here/slide_check.py" "$probe" 3 --least 22 >/dev/null || fail "causal-masking step 3 is not a readable slide"
before=$(get slide_cell)
xdotool key --clearmodifiers ctrl+equal
probe_check "p['slide_cell'] > $before" || fail "Ctrl+plus did not make the slide's cells larger than $before px ($(get slide_cell))"
xdotool key --clearmodifiers ctrl+minus ctrl+minus
probe_check "p['slide_cell'] < $before" || fail "Ctrl+minus twice did not make the cells smaller than $before px ($(get slide_cell))"
xdotool key --clearmodifiers ctrl+equal
probe_check "abs(p['slide_cell'] - $before) <= 2" || fail "back at the first text size the cells are $(get slide_cell) px, not $before"
stop_app
app_size=1280x720 start_app --lesson positions --lesson-step 6 --presenter
xdotool key --clearmodifiers ctrl+equal
settle 5
python3 "$here/slide_check.py" "$probe" 6 --least 22 --walk >"$out/larger.txt" ||
  fail "a full slide with larger text is not readable: $(cat "$out/larger.txt")"
xdotool key --clearmodifiers ctrl+minus
python3 "$here/probe.py" "$probe" wait status '"Font scale 175 %"' || fail "Ctrl+minus did not come back to the presenter's text size ($(get status))"
stop_app
# The fullest step on the smallest projector with larger text: pages of
# readable cells, never one page of small ones.
app_size=1024x768 start_app --lesson many-heads --lesson-step 2 --presenter
xdotool key --clearmodifiers ctrl+equal
python3 "$here/probe.py" "$probe" wait status '"Font scale 197 %"' || fail "Ctrl+plus did not make the text larger ($(get status))"
python3 "$here/slide_check.py" "$probe" 2 --least 22 --walk >"$out/larger-full.txt" ||
  fail "many-heads step 2 with larger text at 1024x768 is not readable: $(cat "$out/larger-full.txt")"
stop_app

# Windowed too, and the whole pipeline stays one key (P) away.
start_app --lesson attention-from-scratch --lesson-step 9
python3 "$here/slide_check.py" "$probe" 9 || fail "attention-from-scratch step 9 windowed at 1280x800"
xdotool key p
python3 "$here/probe.py" "$probe" wait slide false || fail "P did not switch to the whole pipeline"
xdotool key p
python3 "$here/probe.py" "$probe" wait slide true || fail "P again did not come back to the slide"
stop_app
fi

[ "$fails" -eq 0 ] && echo "PASS: every lesson step is a slide that fits" || { echo "$fails failure(s); see $out"; exit 1; }
