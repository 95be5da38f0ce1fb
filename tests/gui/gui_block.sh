#!/usr/bin/env bash
# Model mode's Block tab with real X input: every stage of the focused
# layer's block (embeddings, norms, residual sums, MLP) is drawn with its
# shape; hovering a cell explains it in the inspector; a pin in the Pipeline
# recomputes only the row it changed and Ctrl+Z brings the block back; the
# Llama layout shows RMSNorm and SwiGLU stages; File ▸ Close model leaves
# model mode. At 1280×720 and 1920×1080.
# usage: gui_block.sh APP_BINARY MODEL_FIXTURES_DIR [OUT_DIR]
set -u
export XVFB_SCREEN=${XVFB_SCREEN:-1920x1080x24}
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 fixtures=$2 out=${3:-}
source "$(dirname "$0")/app_session.sh"

# block_check CONDITION: model_check on `b`, the probe's model.block (which must exist).
block_check() { model_check "b is not None and ($1)" "${2:-20}"; }
block() { python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['model']['block']))" "$probe"; }
# hover_block KEY ROW ROWS: the pointer on row ROW (of ROWS) of a block heatmap, column 0.
hover_block() {
  local rect x0 y0 x1 y1
  rect=$(python3 -c "import json,sys; print(*json.load(open(sys.argv[1]))['items']['block $1'])" "$probe")
  read -r x0 y0 x1 y1 <<<"$rect"
  xdotool mousemove --window "$wid" "$(python3 -c "print(int($x0 + 2))")" \
    "$(python3 -c "print(int($y0 + ($y1 - $y0) * ($2 + 0.5) / $3))")"
}

# 1. GPT-2 layout, 1280×720, opened on the Block tab: every stage, shaped.
app_size=1280x720
start_app --model "$fixtures/gpt2-conv1d" --text "3 14 15 9 2 6 53" --step 6 --view block
block_check 'b["rows_recomputed"] == 7 and len(b["stages"]) == 16' ||
  fail "the Block tab did not open with the block's 16 stages: $(block)"
block_check 'all(s["rows"] == 7 for s in b["stages"].values()) and b["stages"]["mlp.up"]["cols"] == 128 and
             b["stages"]["norm1.mean"]["cols"] == 1 and b["stages"]["output"]["cols"] == 32' ||
  fail "a block stage has the wrong shape: $(block)"
[ "$(get centre_view)" = 5 ] || fail "--view block did not open the Block tab ($(get centre_view))"
shot block-1280x720

# 2. Hovering n₁[3,0]: the inspector derives it from x, μ₁ and σ²₁.
hover_block norm1 3 7
block_check 'b["hovered"] == {"stage": "norm1", "row": 3, "col": 0} and b["inspector"].startswith("n₁[3,0]") and
             "√(" in b["inspector_numbers"] and "X[3,0]" in b["inspector_note"]' ||
  fail "hovering n₁[3,0] did not explain it: $(block)"
before=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['model']['block']['stages']['output']['sum'])" "$probe")

# 3. A pin in the Pipeline (weights A₀[6,0] typed as 1) changes row 6 of the
#    attention output only: the block recomputes that row.
click_item "tab Pipeline"
python3 "$here/probe.py" "$probe" wait centre_view 0 || fail "clicking the Pipeline tab did not open it"
# The pipeline scrolls to the current step when first shown: wait until the cell stays put.
where=""
for _ in $(seq 30); do
  settle 3
  now=$(python3 "$here/probe.py" "$probe" cell "weights[0]" 6 0 1)
  [ "$now" = "$where" ] && break
  where=$now
done
read -r x y <<<"$where"
xdotool mousemove --window "$wid" "$x" "$y"
python3 "$here/probe.py" "$probe" wait hovered '{"stage": "weights[0]", "row": 6, "col": 0}' ||
  fail "hovering weights[0][6,0] did not register ($(state))"
xdotool click --repeat 2 --delay 60 1
python3 "$here/probe.py" "$probe" wait typing '{"stage": "weights[0]", "row": 6, "col": 0}' 3 ||
  fail "double-clicking weights[0][6,0] did not open the value popup ($(state))"
settle 2
replace_text "1"
python3 "$here/probe.py" "$probe" wait undo true || fail "typing a value did not pin the weight ($(state))"
click_item "tab Block"
python3 "$here/probe.py" "$probe" wait centre_view 5 || fail "clicking the Block tab did not open it"
block_check "b['rows_recomputed'] == 1 and abs(b['stages']['output']['sum'] - ($before)) > 1e-4" ||
  fail "the pin did not recompute exactly one row of the block: $(block)"
# (at 720 px the attention half is below the embeddings: scroll down to it)
hover_block embed 0 7
settle 2
xdotool click --repeat 4 --delay 50 5
settle 4
hover_block attention 6 7
block_check 'b["hovered"] == {"stage": "attention", "row": 6, "col": 0} and b["inspector_note"].startswith("Before the edits")' ||
  fail "the edited attention cell does not say what it was before: $(block)"
shot block-pinned

# 4. Ctrl+Z: the pin goes, the block is the model's again.
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait undo false || fail "Ctrl+Z did not undo the pin"
block_check "b['rows_recomputed'] == 1 and abs(b['stages']['output']['sum'] - ($before)) < 1e-5" ||
  fail "after Ctrl+Z the block's output differs from before: $(block)"
stop_app

# 5. Llama layout, 1920×1080, layer 1: RMSNorm (a mean square, no mean), the SwiGLU gate, no positions.
app_size=1920x1080
start_app --model "$fixtures/llama-gqa" --text "3 14 15 9 2 6 53" --layer 1 --view block
block_check 'b["layer"] == 1 and "mlp.gate" in b["stages"] and "norm1.mean_square" in b["stages"] and
             "norm1.mean" not in b["stages"] and "embed.position" not in b["stages"]' ||
  fail "the Llama block does not have RMSNorm and SwiGLU stages: $(block)"
settle 3
hover_block mlp.activation 2 7
block_check 'b["hovered"]["stage"] == "mlp.activation" and "σ(" in b["inspector_numbers"]' ||
  fail "hovering the SwiGLU activation did not explain it: $(block)"
shot block-1920x1080-llama

# 6. File ▸ Close model: back to the default scenario, out of model mode.
click_item "menu File"
python3 "$here/probe.py" "$probe" wait popup true || fail "clicking File opened no menu"
click_item "Close model"
for _ in $(seq 50); do [ "$(get model)" = null ] && break; sleep 0.1; done
[ "$(get model)" = null ] || fail "File ▸ Close model left model mode on: $(get model)"
python3 "$here/probe.py" "$probe" wait centre_view 0 || fail "after Close model the centre is not the Pipeline ($(get centre_view))"
[ "$(get T)" = 7 ] || fail "after Close model the scenario is not the default one (T = $(get T))"
stop_app

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
