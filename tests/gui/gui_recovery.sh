#!/usr/bin/env bash
# Crash recovery with real input: a typed value is autosaved, the app is
# killed with SIGKILL, and the next start gets it back (with --recover, and by
# clicking Restore in the start-up question). A second instance running at
# the same time keeps its own recovery file, never offered while it lives;
# Discard deletes; a save removes the file.
# usage: gui_recovery.sh APP_BINARY CLI_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 cli=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"
keep_state=1  # the apps below share one recovery folder, as a user's do
state_dir="$out/state/attention-lab/recovery"
rm -rf "$out/state"
scenario="$out/scenario.json"
other="$out/other.json"
value_of() {  # value_of FILE MATRIX ROW COL
  python3 -c "import json,sys; print(json.load(open('$1'))['$2'][$3][$4])"
}
recovery() {  # recovery KEY [PROBE]: a field of the probe's "recovery" object
  python3 -c "import json,sys; print(json.load(open('${2:-$probe}'))['recovery']['$1'])"
}
# The value a recovery file holds for MATRIX[ROW][COL] (its scenario follows the first line).
recovered_value() {  # recovered_value FILE MATRIX ROW COL
  python3 -c "import json,sys; t=open('$1').read(); print(json.loads(t[t.index('\n')+1:])['$2'][$3][$4])"
}
kill_hard() {  # SIGKILL: no destructor runs, as in a crash or the OOM killer
  kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
# type_into STAGE ROW COL VALUE: double-click the cell, type VALUE, Enter; waits until applied.
type_into() {
  local x y
  read -r x y < <(python3 "$here/probe.py" "$probe" cell "$1" "$2" "$3")
  xdotool mousemove --window "$wid" "$x" "$y"
  python3 "$here/probe.py" "$probe" wait hovered '{"stage": "'$1'", "row": '$2', "col": '$3'}' ||
    fail "hovering $1[$2,$3] did not register"
  xdotool click --repeat 2 --delay 60 1
  python3 "$here/probe.py" "$probe" wait typing '{"stage": "'$1'", "row": '$2', "col": '$3'}' 5 ||
    { shot "double-click-missed"; fail "double-clicking $1[$2,$3] did not open the value popup ($(state))"; }
  python3 "$here/probe.py" "$probe" wait text_input true 5 || fail "the value popup's field did not take the keyboard"
  # The field selects its text when it takes the keyboard (no Ctrl+A: on a
  # loaded machine the app may still see Ctrl held when the first character
  # comes, and ImGui drops characters typed with Ctrl, so '-0.5' became '0.5').
  settle 2
  xdotool type --delay 30 -- "$4"
  xdotool key Return
  python3 "$here/probe.py" "$probe" wait typing null 5 || fail "Enter did not close the value popup ($(state))"
  python3 "$here/probe.py" "$probe" wait modified true || fail "typing $4 into $1[$2,$3] did not change the scenario"
  xdotool mousemove --window "$wid" 5 400
}
# wait_autosave [N] [PROBE]: until the app has written its recovery file N times (on a loaded machine too).
wait_autosave() {
  python3 - "${2:-$probe}" "${1:-1}" <<'PY' || fail "no autosave within 60 s ($(state))"
import json, sys, time
deadline = time.time() + 60
while time.time() < deadline:
    try:
        r = json.load(open(sys.argv[1]))["recovery"]
        if r["autosaves"] >= int(sys.argv[2]) and r["file"]:
            sys.exit(0)
    except (OSError, ValueError, KeyError):
        pass
    time.sleep(0.1)
sys.exit(1)
PY
}

"$cli" preset fat-cat -o "$scenario" || exit 1
"$cli" preset fat-cat -o "$other" || exit 1
original=$(value_of "$scenario" W_q 2 2)

# 1. A: type 0.75 into W_q[2,2]; a few seconds later the recovery file holds it.
start_app "$scenario"
pid_a=$pid probe_a=$probe
trap 'kill -KILL $pid_a $pid_b $pid 2>/dev/null' EXIT
[ "$(recovery offered)" = 0 ] || fail "a first start offered $(recovery offered) recovery files"
[ -z "$(recovery file)" ] || fail "a recovery file before any change: $(recovery file)"
type_into W_q 2 2 0.75
wait_autosave 1
file_a=$(recovery file)
echo "A's recovery file: $file_a"
[ -f "$file_a" ] || fail "the probe names $file_a, which does not exist"
[ "$(recovered_value "$file_a" W_q 2 2)" = 0.75 ] || fail "A's recovery file holds W_q[2][2] = $(recovered_value "$file_a" W_q 2 2), expected 0.75"
head -1 "$file_a" | grep -q '"file":"'"$scenario"'"' || fail "A's recovery file does not name its scenario file: $(head -1 "$file_a")"
[ "$(value_of "$scenario" W_q 2 2)" = "$original" ] || fail "autosave wrote into the user's own file"

# 2. B, a second instance at the same time: nothing offered (A is alive), and
#    its own edit goes to its own file.
probe="$out/probe-b.json"
start_app "$other"
pid_b=$pid
wid_b=$wid
[ "$(recovery offered)" = 0 ] || fail "B offered $(recovery offered) recovery files while their owner A still runs"
type_into W_q 1 1 -0.5
wait_autosave 1
file_b=$(recovery file)
echo "B's recovery file: $file_b"
[ -n "$file_b" ] && [ "$file_b" != "$file_a" ] || fail "B writes to '$file_b', A to '$file_a': expected two files"
[ "$(recovered_value "$file_b" W_q 1 1)" = -0.5 ] || fail "B's recovery file holds W_q[1][1] = $(recovered_value "$file_b" W_q 1 1), expected its own edit -0.5"
[ "$(recovered_value "$file_a" W_q 2 2)" = 0.75 ] || fail "A's recovery file changed when B autosaved"
sum_b=$(sha256sum <"$file_b")

# 3. SIGKILL A. C starts with --recover: A's work is back (unsaved, with its
#    file name: Ctrl+S writes 0.75 into scenario.json); B's file is untouched.
kill_hard "$pid_a"
[ -f "$file_a" ] || fail "A's recovery file went with A"
probe="$out/probe-c.json"
start_app --recover
[ "$(get modified)" = true ] || fail "--recover: the restored scenario is not marked unsaved ($(state))"
python3 "$here/probe.py" "$probe" contains status "Restored unsaved work" || fail "--recover: no 'Restored' in the status bar"
[ -f "$file_a" ] && fail "A's recovery file is still there after C took it over"
file_c=$(recovery file)
[ -n "$file_c" ] && [ -f "$file_c" ] || fail "C holds restored work but has no recovery file of its own ('$file_c')"
[ "$(sha256sum <"$file_b")" = "$sum_b" ] || fail "B's recovery file changed when C restored A's"
kill -0 "$pid_b" 2>/dev/null || fail "B is gone"
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+S after --recover did not save ($(state))"
[ "$(value_of "$scenario" W_q 2 2)" = 0.75 ] || fail "after --recover and Ctrl+S, W_q[2][2] in the file is $(value_of "$scenario" W_q 2 2), expected 0.75"
python3 "$here/probe.py" "$probe" wait recovery '{"file": "", "autosaves": '"$(recovery autosaves)"', "offered": 0, "error": ""}' ||
  fail "saving did not remove C's recovery file ($(python3 "$here/probe.py" "$probe" get recovery))"
[ -f "$file_c" ] && fail "C's recovery file $file_c is still on disk after a save"
quit_app

# crash_then_restart VALUE NAME: an app types VALUE into W_q[2][2] and is
# killed once it is autosaved; the next (probe-NAME.json) offers its work.
crash_then_restart() {
  start_app "$scenario"
  type_into W_q 2 2 "$1"
  wait_autosave 1
  kill_hard "$pid"
  probe="$out/probe-$2.json"
  start_app
  python3 "$here/probe.py" "$probe" wait recovery '{"file": "", "autosaves": 0, "offered": 1, "error": ""}' ||
    fail "after a kill, the next start did not offer one recovery file ($(python3 "$here/probe.py" "$probe" get recovery))"
  settle 3
}

# 4. D edits, is killed; E starts without --recover and asks: the dialog
#    (photographed) shows what and when; a real click on Restore brings it back.
crash_then_restart 0.5 e
shot recovery-dialog
# A lecturer with only a clicker: PageUp is "Not now" (the file stays for the
# next start), and the next start asks again.
xdotool key Prior
python3 "$here/probe.py" "$probe" wait popup false || fail "PageUp did not answer the recovery question"
[ "$(get modified)" = false ] || fail "PageUp (Not now) restored the work"
[ "$(ls -A "$state_dir" | wc -l)" -ge 1 ] || fail "Not now (PageUp) did not keep the recovery file"
quit_app
probe="$out/probe-e2.json"
start_app
python3 "$here/probe.py" "$probe" wait recovery '{"file": "", "autosaves": 0, "offered": 1, "error": ""}' ||
  fail "after Not now, the next start did not offer the file again ($(python3 "$here/probe.py" "$probe" get recovery))"
settle 3
read -r x y < <(python3 "$here/probe.py" "$probe" item "recovery restore")
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 1
python3 "$here/probe.py" "$probe" wait modified true || fail "clicking Restore did not restore ($(state))"
python3 "$here/probe.py" "$probe" wait popup false || fail "the dialog stayed open after Restore"
[ "$(recovery offered)" = 0 ] || fail "still offering after Restore"
shot restored
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+S after Restore did not save ($(state))"
[ "$(value_of "$scenario" W_q 2 2)" = 0.5 ] || fail "after Restore and Ctrl+S, W_q[2][2] in the file is $(value_of "$scenario" W_q 2 2), expected 0.5"
quit_app

# 4b. The same with the clicker's PageDown: Restore.
crash_then_restart 0.25 e3
xdotool key Next
python3 "$here/probe.py" "$probe" wait modified true || fail "PageDown did not restore ($(state))"
python3 "$here/probe.py" "$probe" wait popup false || fail "the dialog stayed open after PageDown"
xdotool key --clearmodifiers ctrl+s
python3 "$here/probe.py" "$probe" wait modified false || fail "Ctrl+S after PageDown's Restore did not save ($(state))"
[ "$(value_of "$scenario" W_q 2 2)" = 0.25 ] || fail "after PageDown's Restore, W_q[2][2] in the file is $(value_of "$scenario" W_q 2 2), expected 0.25"
quit_app

# 5. B dies too; F offers B's work (only B's) and Discard deletes it.
kill -0 "$pid_b" 2>/dev/null || fail "B died before its turn"
kill_hard "$pid_b"
probe="$out/probe-f.json"
start_app
python3 "$here/probe.py" "$probe" wait recovery '{"file": "", "autosaves": 0, "offered": 1, "error": ""}' ||
  fail "B's file is not offered after B died ($(python3 "$here/probe.py" "$probe" get recovery))"
read -r x y < <(python3 "$here/probe.py" "$probe" item "recovery discard")
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 1
python3 "$here/probe.py" "$probe" wait popup false || fail "the dialog stayed open after Discard"
[ "$(get modified)" = false ] || fail "Discard changed the open scenario"
[ -f "$file_b" ] && fail "Discard left B's recovery file $file_b"
quit_app
left=$(ls -A "$state_dir")
[ -z "$left" ] || fail "files left in the recovery folder after every session quit or was dealt with: $left"

[ "$fails" -eq 0 ] && echo "all recovery checks passed (W_q[2][2]: $original -> 0.75 via --recover, 0.5 via Restore after Not now, 0.25 via PageDown; B's file kept apart, then discarded)"
exit $((fails > 0))
