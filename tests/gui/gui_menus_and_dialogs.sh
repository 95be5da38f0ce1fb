#!/usr/bin/env bash
# Real X input on the real app: a heatmap's context menu leaves the selection
# where it was (and opens on the cell it was asked on: "Unpin this cell");
# Enter on a file that cannot be opened shows the error in the Open dialog,
# exactly as its Open button does.
# usage: gui_menus_and_dialogs.sh APP_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"
cd "$out" || exit 1  # the Open dialog starts in the current folder
printf '{ "not": "a scenario"' >"$out/broken.json"

start_app --preset fat-cat
trap 'kill $pid 2>/dev/null' EXIT

# 1. Select Q[3,3]; right-click Q[1,1] and click a menu item that lies over
#    another cell of Q: the item runs, the selection stays on Q[3,3].
read -r x y < <(python3 "$here/probe.py" "$probe" cell Q 3 3)
xdotool mousemove --window "$wid" "$x" "$y"; settle 2; xdotool click 1
python3 "$here/probe.py" "$probe" wait selected '{"stage": "Q", "row": 3, "col": 3}' || fail "clicking Q[3,3] did not select it"
read -r x y < <(python3 "$here/probe.py" "$probe" cell Q 1 1)
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "Q", "row": 1, "col": 1}' || fail "hovering Q[1,1] did not register"
xdotool click 3
python3 "$here/probe.py" "$probe" wait popup true || fail "right-clicking Q[1,1] opened no menu ($(state))"
settle 3
# The menu opens at the pointer: its second item ("Copy matrix as CSV") is
# about one and a half text lines below it, over Q's cells.
xdotool mousemove --window "$wid" $((x + 40)) $((y + 32))
settle 2
shot context-menu
xdotool click 1
python3 "$here/probe.py" "$probe" wait popup false || fail "clicking the menu item did not close the menu ($(state))"
case "$(get status)" in *"Copied Q"*) ;; *) fail "the menu item under the pointer was not 'Copy matrix as CSV' (status $(get status))" ;; esac
settle 3
[ "$(get selected)" = '{"stage": "Q", "row": 3, "col": 3}' ] ||
  fail "clicking a context-menu item moved the selection to $(get selected), expected Q[3,3] to stay selected"

# 2. Enter on a file that does not exist, then on one that is not a scenario:
#    the Open dialog stays open and says why, as the Open button does.
xdotool mousemove --window "$wid" 5 400
xdotool key --clearmodifiers ctrl+o
python3 "$here/probe.py" "$probe" wait popup true || fail "Ctrl+O opened no dialog"
for name in missing-file.json broken.json; do
  # The name field has the keyboard when the dialog opens, and again after a failed Enter.
  python3 "$here/probe.py" "$probe" wait text_input true || fail "the Open dialog's name field does not take the keyboard ($(state))"
  replace_text "$name"
  for _ in $(seq 100); do case "$(get file_dialog_error)" in *"$name"*) break ;; esac; sleep 0.1; done
  case "$(get file_dialog_error)" in
    *"$name"*) ;;
    *) shot "enter-$name"; fail "Enter on '$name' shows no error in the dialog (error: $(get file_dialog_error), popup: $(get popup))" ;;
  esac
  settle 3
  [ "$(get popup)" = true ] || fail "Enter on '$name' closed the Open dialog"
done
shot open-dialog-error
xdotool key Escape
python3 "$here/probe.py" "$probe" wait popup false || fail "Esc did not close the Open dialog"
[ "$(get modified)" = false ] || fail "a failed open changed the scenario"

quit_app
[ "$fails" -eq 0 ] && echo "all menu and dialog checks passed"
exit $((fails > 0))
