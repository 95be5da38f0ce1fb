#!/usr/bin/env bash
# Gradients in the Pipeline with real input: a click in the Train tab gives
# the scenario a loss; "gradients" above the equations draws ∂L/∂ of every
# stage; hovering ∂L/∂W_q[1,0] writes its rule with the numbers and lights
# the cells it is made of; Ctrl+G shows values and gradients both; Ctrl+Z
# takes the loss back and the bar says there are no gradients. In model mode
# (the GPT-2 fixture) the gradients are of the model's next-token loss
# (PyTorch's value), follow an edit, and a pin is refused by name.
# usage: gui_gradients.sh APP_BINARY MODEL_FIXTURES [OUT_DIR]
set -u
export XVFB_SCREEN=${XVFB_SCREEN:-1920x1080x24}  # room for the 1920x1080 window
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 fixtures=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"
# scroll_to STAGE ROW COL: the wheel over the pipeline's right margin (over
# a heatmap it would zoom it) until that cell is well inside the window
scroll_to() {
  local x y height=${app_size#*x} margin
  local top bottom
  read -r margin top bottom < <(python3 -c "import json,sys; c = json.load(open(sys.argv[1]))['centre']; print(int(c[2]) - 25, int(c[1]) + 60, int(c[3]) - 20)" "$probe")
  for _ in $(seq 40); do
    read -r x y < <(python3 "$here/probe.py" "$probe" cell "$1" "$2" "$3" 2>/dev/null) || y=$((height * 2))
    [ "$y" -gt "$top" ] && [ "$y" -lt "$bottom" ] && return 0
    xdotool mousemove --window "$wid" "$margin" $((height / 2))
    # (a wheel step per 200 px away, so a long pipeline takes few rounds)
    local steps=$(( (y > bottom ? y - bottom : top - y) / 200 + 1 ))
    [ "$steps" -gt 20 ] && steps=20
    if [ "$y" -le "$top" ]; then xdotool click --repeat "$steps" --delay 20 4; else xdotool click --repeat "$steps" --delay 20 5; fi
    settle 2
  done
  return 1
}

for app_size in 1280x720 1920x1080; do
  start_app --preset fat-cat --view train
  click_item "train previous"
  probe_check "p['train']['has_loss']" || fail "clicking 'the previous word' gave no loss ($(state))"
  click_item "tab Pipeline"
  probe_check "p['centre_view'] == 0" || fail "the Pipeline tab did not open ($(get centre_view))"

  # 1. Gradients instead of values: every heatmap of the first equation is a gradient
  click_item "show gradients"
  probe_check "p['gradients']['view'] == 'gradients' and p['gradients']['loss'] is not None" ||
    fail "'gradients' showed $(get gradients)"
  probe_check "any(h['stage'] == 'grad.W_q' for h in p['heatmaps']) and not any(h['stage'] == 'W_q' for h in p['heatmaps'])" ||
    fail "the Pipeline does not draw ∂L/∂W_q in place of W_q"

  # 2. Hover a gradient cell: its backward rule, its numbers, the cells it comes from
  inspect_cell grad.W_q 1 0 "∂L/∂W_q[1,0]" "X[i,1]·∂L/∂Q[i,0]"
  probe_check "p['inspector_numbers'].count('×') >= 4 and p['lit'] >= 2" ||
    fail "∂L/∂W_q[1,0] shows '$(get inspector_numbers)' and lights $(get lit) sources"
  scroll_to "grad.scores[0]" 2 1 || fail "∂L/∂S₀ never scrolled into view"
  inspect_cell "grad.scores[0]" 2 1 "∂L/∂S₀[2,1]" "∂L/∂S′₀[2,1]"
  shot_of_screen "gradients-$app_size" "the gradients"

  # 3. Ctrl+G: values and gradients both
  xdotool mousemove --window "$wid" 5 400
  xdotool key ctrl+g
  probe_check "p['gradients']['view'] == 'both'" || fail "Ctrl+G after gradients shows $(get gradients)"
  probe_check "any(h['stage'] == 'grad.W_q' for h in p['heatmaps']) and any(h['stage'] == 'W_q' for h in p['heatmaps'])" ||
    fail "'both' does not draw W_q and ∂L/∂W_q"

  # 4. Ctrl+Z takes the loss back: no gradients, and the bar says why
  xdotool key ctrl+z
  probe_check "p['gradients']['loss'] is None and 'no loss' in p['gradients']['problem']" ||
    fail "after Ctrl+Z the gradients are $(get gradients)"
  probe_check "not any(h['stage'].startswith('grad.') for h in p['heatmaps'])" || fail "gradients are drawn without a loss"
  stop_app
done

# 5. Model mode: the model's next-token loss, through the layers after the focused one
for app_size in 1280x720 1920x1080; do
  start_app --model "$fixtures/gpt2-conv1d" --text "3 14 15 9 2 6 53" --layer 1 --view pipeline
  model_check 'm["layer"] == 1 and m["T"] == 7' || fail "the model did not open at layer 1: $(get model)"
  xdotool mousemove --window "$wid" 5 400
  xdotool key ctrl+g
  # tests/models/fixtures/gpt2-conv1d/gradients.json: PyTorch's loss, 5.194771…
  probe_check "p['gradients']['of'] == 'model' and abs(p['gradients']['loss'] - 5.194771) < 1e-4" ||
    fail "Ctrl+G in model mode shows $(get gradients)"
  inspect_cell grad.W_q 1 0 "∂L/∂W_q[1,0]" "X[i,1]·∂L/∂Q[i,0]"
  scroll_to "grad.output" 2 3 || fail "∂L/∂O never scrolled into view"
  inspect_cell grad.output 2 3 "∂L/∂O[2,3]" "from the rest of the model"
  shot_of_screen "model-gradients-$app_size" "the model's gradients"

  # an edit of W_v (in "both", its values are drawn): the loss follows it
  xdotool mousemove --window "$wid" 5 400
  xdotool key ctrl+g
  probe_check "p['gradients']['view'] == 'both'" || fail "Ctrl+G did not show both: $(get gradients)"
  before=$(python3 "$here/probe.py" "$probe" get gradients | python3 -c "import json,sys; print(json.load(sys.stdin)['loss'])")
  scroll_to W_v 0 0 || fail "W_v never scrolled into view"
  read -r x y < <(python3 "$here/probe.py" "$probe" cell W_v 0 0)
  xdotool mousemove --window "$wid" "$x" "$y"
  python3 "$here/probe.py" "$probe" wait hovered '{"stage": "W_v", "row": 0, "col": 0}' || fail "hovering W_v[0,0] did not register ($(state))"
  xdotool click --repeat 2 --delay 60 1
  python3 "$here/probe.py" "$probe" wait typing '{"stage": "W_v", "row": 0, "col": 0}' 3 ||
    fail "double-clicking W_v[0,0] did not open the value popup ($(state))"
  settle 2
  replace_text "2.5"
  probe_check "p['undo'] and p['gradients']['of'] == 'model' and abs(p['gradients']['loss'] - $before) > 1e-5" ||
    fail "editing W_v[0,0] did not change the model's loss ($before): $(get gradients)"
  xdotool key ctrl+z
  probe_check "not p['undo']" || fail "Ctrl+Z did not undo the edit ($(state))"
  # (the same to float32 rounding: the layer's output after the undo is the engine's own recompute)
  probe_check "abs(p['gradients']['loss'] - $before) < 1e-6" || fail "Ctrl+Z did not bring the loss back to $before: $(get gradients)"
  stop_app
done

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
