# Sourced by the GUI tests that drive one running app with real X input.
# The caller sets app first, and out (a directory for probe, screenshots and
# settings) if it was given one; here is set to this directory.
# Every step waits for what the app says of itself in its --probe file, never
# for a fixed time alone, so a slower or faster machine gives the same result.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${out:-$(mktemp -d)}
mkdir -p "$out"
# Settings of its own (never the user's font scale or window layout).
export XDG_CONFIG_HOME="$out/config"
probe="$out/probe.json"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
get() { python3 "$here/probe.py" "$probe" get "$1"; }
state() {  # what the app says of itself, for a failure message
  for k in frame busy hovered selected typing modified undo edits_applied; do printf '%s=%s ' "$k" "$(get $k)"; done
}
# shot NAME: the whole X screen as $out/NAME.png (to look at after a failure).
shot() {
  xwd -root -silent >"$out/$1.xwd" && python3 "$here/xwd_to_png.py" "$out/$1.xwd" "$out/$1.png" && rm -f "$out/$1.xwd" &&
    echo "screenshot: $out/$1.png"
}
# shot_of_screen NAME WHAT: after 3 more frames, the whole X screen (a
# 1920x1080 Xvfb) as $out/NAME.png, which must not be blank (WHAT names it).
shot_of_screen() {
  settle 3
  shot "$1"
  python3 "$here/png_check.py" 1920 1080 "$out/$1.png" || fail "the screenshot of $2 is blank"
}
# settle [N]: waits until the app has drawn N (default 3) more frames, so
# positions read from the probe are those of a finished layout.
settle() {
  local now
  now=$(get frame)
  python3 "$here/probe.py" "$probe" atleast frame $((now + ${1:-3})) 10 || fail "the app stopped drawing frames ($(state))"
}
# start_app ARGS...: starts the app with a probe in a window of $app_size
# (default 1280x800), waits for its window, gives it the keyboard and lets it
# lay itself out.
start_app() {
  rm -f "$probe"
  # A recovery folder of its own, empty unless the test keeps it
  # (keep_state=1): work an earlier, killed app left would be offered in a
  # dialog over the window. As many threads as this machine's CI has, so
  # background work takes as long everywhere.
  [ -n "${keep_state:-}" ] || rm -rf "$out/state"
  # Settings of its own too, as a first run has them (a Ctrl+plus an earlier
  # app saved would make every slide of this one larger), unless the test
  # keeps them (keep_settings=1).
  [ -n "${keep_settings:-}" ] || rm -rf "$XDG_CONFIG_HOME"
  XDG_STATE_HOME="$out/state" OMP_NUM_THREADS=2 "$app" "$@" --probe "$probe" --size "${app_size:-1280x800}" 2>"$out/app.stderr" &
  pid=$!
  for _ in $(seq 100); do [ -s "$probe" ] && break; sleep 0.1; done
  [ -s "$probe" ] || { fail "the app wrote no probe"; cat "$out/app.stderr"; exit 1; }
  # Its own window (by pid): a test may run two apps side by side.
  wid=$(xdotool search --sync --onlyvisible --pid "$pid" | head -1)
  xdotool windowfocus --sync "$wid" 2>/dev/null || true
  settle 3
}
# press_on STAGE ROW COL [N]: presses the left button on a cell (of the N-th
# drawing) and waits until the app has taken the press there, so the moves
# that follow drag that cell, however late the frame that sees the press.
# On a zoomed-out heatmap (cells under a pixel) any cell of STAGE will do.
press_on() {
  local x y want
  read -r x y < <(python3 "$here/probe.py" "$probe" cell "$@")
  xdotool mousemove --window "$wid" "$x" "$y"
  if python3 "$here/probe.py" "$probe" get heatmaps | python3 -c "
import json, sys
h = [m for m in json.load(sys.stdin) if m['stage'] == '$1'][${4:-0}]
sys.exit(0 if (h['x1'] - h['x0']) / max(h['rows'], h['cols']) < 2 else 1)"; then
    settle 2
    want=$(get hovered)
    case "$want" in *'"stage": "'$1'"'*) ;; *) fail "the mouse at ($x, $y) is not over $1 ($(state))" ;; esac
  else
    want='{"stage": "'$1'", "row": '$2', "col": '$3'}'
    python3 "$here/probe.py" "$probe" wait hovered "$want" || fail "hovering $1[$2,$3] did not register"
  fi
  xdotool mousedown 1
  python3 "$here/probe.py" "$probe" wait selected "$want" || fail "pressing on $want did not select it ($(state))"
  press_x=$x press_y=$y
}
# inspect_cell STAGE ROW COL TITLE [FORMULA]: hovers the cell (in the first
# drawing of STAGE) and checks the inspector names it TITLE and, when given,
# that its formula contains FORMULA.
inspect_cell() {
  local x y
  read -r x y < <(python3 "$here/probe.py" "$probe" cell "$1" "$2" "$3")
  xdotool mousemove --window "$wid" "$x" "$y"
  python3 "$here/probe.py" "$probe" contains inspector "$4" ||
    { fail "hovering $1[$2,$3] does not inspect it as $4 ($(get inspector))"; return 1; }
  [ -z "${5:-}" ] || python3 "$here/probe.py" "$probe" contains inspector_formula "$5" ||
    fail "$1[$2,$3] is not derived as '$5' ($(get inspector_formula))"
}
# click_item LABEL: moves onto a named item (the probe's "items"), lets the app
# see the pointer there, clicks.
click_item() {
  local x y
  read -r x y < <(python3 "$here/probe.py" "$probe" item "$1")
  xdotool mousemove --window "$wid" "$x" "$y"
  settle 2
  xdotool click 1
}
# bring_into_view ITEM: scrolls the view under the centre of the window (the
# wheel, a notch a frame or two apart) until ITEM is inside the window.
bring_into_view() {
  local x y size=${app_size:-1280x800}
  local height=${size#*x} width=${size%x*}
  for _ in $(seq 40); do
    read -r x y < <(python3 "$here/probe.py" "$probe" item "$1") || return 1
    [ "$y" -gt 60 ] && [ "$y" -lt $((height - 120)) ] && return 0
    xdotool mousemove --window "$wid" $((width / 2)) $((height / 2))
    if [ "$y" -le 60 ]; then xdotool click 4; else xdotool click 5; fi
    settle 2
  done
  return 1
}
# click_input ITEM: clicks into the text field of a number input the app noted
# as ITEM (near its left end: its - and + buttons sit at the right); fails
# when the probe does not list it.
click_input() {
  local rect x0 y0 x1 y1
  rect=$(python3 -c "import json,sys; print(*json.load(open(sys.argv[1]))['items'][sys.argv[2]])" "$probe" "$1" 2>/dev/null) || return 1
  read -r x0 y0 x1 y1 <<<"$rect"
  # The app sees the pointer there first; the click must give the field the
  # keyboard (probe text_input), clicked again if a busy machine lost it.
  xdotool mousemove --window "$wid" "$(python3 -c "print(int($x0 + 15))")" "$(python3 -c "print(int(($y0 + $y1) / 2))")"
  settle 2
  for _ in 1 2 3; do
    xdotool click 1
    python3 "$here/probe.py" "$probe" wait text_input true 5 >/dev/null && break
  done
  settle 2
}
# choose_in_list ITEM N: opens the list the app noted as ITEM and clicks its
# entry N (0 the first; the entries drop below the list, a row each); fails
# when the probe does not list ITEM or the list does not open.
choose_in_list() {
  local rect x0 y0 x1 y1 x
  rect=$(python3 -c "import json,sys; print(*json.load(open(sys.argv[1]))['items'][sys.argv[2]])" "$probe" "$1" 2>/dev/null) || return 1
  read -r x0 y0 x1 y1 <<<"$rect"
  x=$(python3 -c "print(int($x0 + 20))")
  xdotool mousemove --window "$wid" "$x" "$(python3 -c "print(int(($y0 + $y1) / 2))")"; settle 2; xdotool click 1
  python3 "$here/probe.py" "$probe" wait popup true >/dev/null || return 1
  settle 2
  xdotool mousemove --window "$wid" "$x" "$(python3 -c "print(int($y1 + ($2 + 0.5) * ($y1 - $y0) + 4))")"; settle 2; xdotool click 1
}
# type_into ITEM TEXT: clicks into a number input (click_input), selects its
# text, types TEXT and presses Return, a frame or two apart (a key pressed and
# released within one frame of a busy machine is lost to the app); fails
# when the probe does not list ITEM.
type_into() {
  click_input "$1" || return 1
  replace_text "$2"
}
# replace_text TEXT: in the text field that has the keyboard, selects all,
# types TEXT and presses Return, a frame or two apart (next to a busy machine
# a ctrl+a pressed and released within one frame was lost, and TEXT was
# appended to the old value).
replace_text() {
  xdotool key --clearmodifiers ctrl+a
  settle 2
  xdotool type --delay 30 "$1"
  settle 2
  xdotool key Return
}
# probe_check PYTHON_CONDITION [S]: waits up to S seconds (default 20) until the
# condition holds of the probe: `p` all of it, `m` its "model", `b` the
# model's "block", `i` its "interp"; the condition may span lines.
probe_check() {
  python3 - "$probe" "$1" "${2:-20}" <<'PY'
import json, sys, time
path, cond, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.time() + seconds
while True:
    try:
        p = json.load(open(path))
        m, i = p.get("model"), p.get("interp")
        b = m.get("block") if m else None
        if eval("(" + cond + ")"):
            sys.exit(0)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    if time.time() > end:
        sys.exit(1)
    time.sleep(0.1)
PY
}
# model_check PYTHON_CONDITION [S]: probe_check of a model that is open.
model_check() { probe_check "m is not None and ($1)" "${2:-20}"; }
# quit_app: Ctrl+Q, as a user quits; fails if the app stays or exits non-zero.
quit_app() {
  xdotool key --clearmodifiers ctrl+q
  for _ in $(seq 50); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
  if kill -0 $pid 2>/dev/null; then fail "Ctrl+Q did not quit ($(state))"; kill $pid; fi
  wait $pid || fail "the app exited with $?"
}
# stop_app: ends the app without asking it (for checks that leave it unsaved).
stop_app() {
  kill $pid 2>/dev/null
  wait $pid 2>/dev/null
}
