#!/usr/bin/env bash
# Long work never freezes the window: a big scenario computes on a worker
# thread while frames keep coming, and Cancel (clicked with real X input)
# gives up on it and leaves the window usable.
# usage: gui_background.sh APP_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"

# 1. The big layer computes in the background: frames keep coming meanwhile.
start_app --preset random-4096-1024-16
python3 "$here/probe.py" "$probe" wait busy true 5 || fail "the big scenario did not start in the background"
f1=$(get frame); sleep 1; f2=$(get frame)
[ "$f2" -gt "$f1" ] || fail "no frames while computing ($f1 -> $f2): the window froze"
echo "frames while computing: $f1 -> $f2 in 1 s"
stop_app  # quitting while it computes is checked elsewhere; its result is not needed here

# 2. Cancel, clicked for real: the window is usable at once and keeps the last
#    result. The job is held before it starts (--hold-jobs-while) so it is
#    certainly still running when the click lands, on a fast or a busy machine.
hold="$out/hold-jobs"
touch "$hold"
start_app --preset random-4096-1024-16 --hold-jobs-while "$hold"
python3 "$here/probe.py" "$probe" wait busy true 5 || fail "the held scenario is not shown as background work"
read -r x y < <(python3 "$here/probe.py" "$probe" centre cancel_button)
xdotool mousemove --window "$wid" "$x" "$y"; settle 2; xdotool click 1
python3 "$here/probe.py" "$probe" wait busy false 10 || fail "Cancel did not end the background work ($(state))"
rm -f "$hold"  # the cancelled job's thread now ends without computing
settle 3
[ "$(get T)" = 7 ] || fail "after Cancel the scenario has T=$(get T), expected the previous one (7)"
case "$(get status)" in *Cancelled*) ;; *) fail "the status does not say the work was cancelled: '$(get status)'" ;; esac
read -r x y < <(python3 "$here/probe.py" "$probe" cell X 1 1)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "X", "row": 1, "col": 1}' || fail "the window does not respond after Cancel"
settle 5
[ "$(get T)" = 7 ] || fail "the cancelled scenario arrived after all (T=$(get T))"
quit_app

# 3. Without Cancel the big scenario arrives.
start_app --preset random-1024-768-12
python3 "$here/probe.py" "$probe" wait T 1024 60 || fail "the T=1024 scenario never arrived"
python3 "$here/probe.py" "$probe" wait busy false 5 || fail "still busy after the scenario arrived"
settle 3  # the new heatmaps' places on screen
# 4. Dragging a cell of X there edits it, one edit a frame at most (X is drawn
#    in three equations; each copy once applied the drag).
f1=$(get frame); a1=$(get edits_applied)
press_on X 100 10
x=$press_x y=$press_y
for dy in $(seq 2 2 40); do xdotool mousemove --window "$wid" "$x" $((y - dy)); sleep 0.03; done
xdotool mouseup 1
python3 "$here/probe.py" "$probe" wait modified true 10 ||
  fail "dragging X[100][10] at T=1024 did not modify the scenario ($(state))"
f2=$(get frame); a2=$(get edits_applied)
echo "T=1024 drag: $((a2 - a1)) edits in $((f2 - f1)) frames"
[ $((a2 - a1)) -ge 1 ] || fail "the drag applied no edit"
[ $((a2 - a1)) -le $((f2 - f1 + 1)) ] || fail "the drag applied $((a2 - a1)) edits in $((f2 - f1)) frames: more than one a frame"
xdotool mousemove --window "$wid" 5 400
xdotool key --clearmodifiers ctrl+z  # the whole drag is one undo step
python3 "$here/probe.py" "$probe" wait modified false 10 || fail "Ctrl+Z did not undo the drag in one step ($(state))"

# 5. Compare at T=1024: Ctrl+T copies what the engine shows (no scores: the
#    snapshot recomputes one head's when it is compared) at once and says how
#    much it keeps; then a drag of X shows every stage's change, one edit a
#    frame at most.
xdotool key --clearmodifiers ctrl+t
python3 "$here/probe.py" "$probe" wait snapshot true 30 || fail "Ctrl+T took no snapshot at T=1024 ($(state))"
case "$(get status)" in
  *"Snapshot taken ("*" kept, "*" ms)"*) echo "$(get status)" ;;
  *) fail "the T=1024 snapshot does not say what it keeps: status '$(get status)'" ;;
esac
settle 3
f1=$(get frame); a1=$(get edits_applied); t1=$(date +%s.%N)
press_on X 100 10
x=$press_x y=$press_y
for dy in $(seq 2 2 40); do xdotool mousemove --window "$wid" "$x" $((y - dy)); sleep 0.03; done
xdotool mouseup 1
python3 "$here/probe.py" "$probe" wait modified true 10 || fail "dragging X[100][10] in Compare did not edit ($(state))"
python3 "$here/probe.py" "$probe" atleast difference_heatmaps 1 10 ||
  fail "after the drag no stage shows its difference to the snapshot ($(state))"
f2=$(get frame); a2=$(get edits_applied); t2=$(date +%s.%N)
echo "T=1024 Compare drag: $((a2 - a1)) edits in $((f2 - f1)) frames, $(python3 -c "print(f'{($f2 - $f1) / ($t2 - $t1):.1f}')") frames/s"
[ $((a2 - a1)) -le $((f2 - f1 + 1)) ] || fail "the Compare drag applied $((a2 - a1)) edits in $((f2 - f1)) frames"
shot compare-1024

# 6. The wheel over a heatmap zooms it and leaves the page where it is (the
#    pipeline at T=1024 is much taller than the window, so a scroll would show).
y_of_x() { python3 "$here/probe.py" "$probe" get heatmaps | python3 -c "
import json, sys
print([m for m in json.load(sys.stdin) if m['stage'] == 'X'][0]['y0'])"; }
read -r x y < <(python3 "$here/probe.py" "$probe" cell X 50 50)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "X", "row": 50, "col": 50}' 10 >/dev/null ||
  case "$(get hovered)" in *'"X"'*) ;; *) fail "the mouse over X does not hover it ($(state))" ;; esac
settle 2
before=$(y_of_x)
for b in 4 4 5 5 5; do xdotool click $b; settle 2; done  # in, then out (down would scroll)
after=$(y_of_x)
[ "$before" = "$after" ] || fail "the wheel over X scrolled the page (X moved from y=$before to y=$after)"
case "$(get hovered)" in *'"X"'*) ;; *) fail "after zooming, the mouse is no longer over X ($(state))" ;; esac

# 7. Undoing a change computed in the background (the scale toggle at
#    T=1024) brings Compare back to "no change": the engine moved in from the
#    worker must not repeat versions the cached differences were made for.
wait_status() {  # wait_status TEXT [SECONDS]: until the status line contains TEXT
  for _ in $(seq $((${2:-30} * 10))); do case "$(get status)" in *"$1"*) return 0 ;; esac; sleep 0.1; done
  return 1
}
xdotool key --clearmodifiers ctrl+z  # undo the Compare drag: a clean slate
python3 "$here/probe.py" "$probe" wait modified false 30 >/dev/null || fail "could not undo the Compare drag ($(state))"
xdotool key --clearmodifiers ctrl+t
wait_status "Snapshot taken (" || fail "the second snapshot was not taken ($(get status))"
settle 3
y_of() { python3 "$here/probe.py" "$probe" get heatmaps | python3 -c "
import json, sys
m = [h for h in json.load(sys.stdin) if h['stage'] == '$1']
print(int(m[0]['y0']) if m else 99999)"; }
for _ in $(seq 300); do [ "$(y_of 'scaled[0]')" -lt 150 ] && break; xdotool mousemove --window "$wid" 930 400 click 5; settle 1; done
[ "$(y_of 'scaled[0]')" -lt 150 ] || fail "could not scroll to S′₀ ($(state))"
[ "$(get difference_heatmaps)" = 0 ] || fail "Δ heatmaps right after a fresh snapshot ($(get difference_heatmaps))"
# "scale by 1/√d_k" in the controls, where the app says it is (its box is at the left end)
read -r x y < <(python3 -c "
import json; x0, y0, x1, y1 = json.load(open('$probe'))['items']['scale by 1/√d_k']; print(int(x0 + 8), int((y0 + y1) / 2))")
xdotool mousemove --window "$wid" "$x" "$y"; settle 2; xdotool click 1
wait_status "scale by 1/sqrt(d_k) off: done" || fail "unticking the scale did not compute ($(get status))"
python3 "$here/probe.py" "$probe" atleast difference_heatmaps 1 10 || fail "no Δ heatmap for S′₀ after unticking the scale ($(state))"
xdotool mousemove --window "$wid" 930 650
xdotool key --clearmodifiers ctrl+z
wait_status "Undoing scale by 1/sqrt(d_k) off: done" || fail "Ctrl+Z did not undo the scale toggle ($(get status))"
settle 3
[ "$(get difference_heatmaps)" = 0 ] ||
  fail "after undoing the toggle, $(get difference_heatmaps) Δ heatmaps still show a change (stale differences)"
shot compare-undo-1024
stop_app  # unsaved: the quit question is tested elsewhere

[ "$fails" -eq 0 ] && echo "all background-work checks passed"
exit $((fails > 0))
