#!/usr/bin/env bash
# The attention variants' controls with real X input: the ALiBi checkbox adds
# each head's position_bias heatmap (and Ctrl+Z takes it away again), and the
# mask list's "window" item gives a sliding window of half the tokens; the
# inspector explains a bias cell as m·(j − i); the RoPE checkbox adds Q and K
# before rotation and a rotated cell is derived from two; typing into "K/V
# heads" groups the query heads; the RoPE angles have a heatmap; the sinks
# checkbox adds a logit per head that a drag changes; the head view of the
# translation preset has the queries and the keys on their own sides; the
# soft-cap checkbox adds the capped scores (a typed c changes them) and the
# q/k norm checkbox the queries and keys before their norm, its scope a list.
# usage: gui_variants.sh APP_BINARY [OUT_DIR]
set -u
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 out=${2:-}
source "$(dirname "$0")/app_session.sh"

drawn() {  # drawn STAGE: exits 0 when a heatmap of STAGE is on the probe's list
  python3 -c "import json,sys; sys.exit(0 if any(m['stage'] == sys.argv[2] for m in json.load(open(sys.argv[1]))['heatmaps']) else 1)" "$probe" "$1"
}
until_drawn() {  # until_drawn STAGE yes|no
  for _ in $(seq 100); do
    if drawn "$1"; then [ "$2" = yes ] && return 0; else [ "$2" = no ] && return 0; fi
    sleep 0.1
  done
  return 1
}

start_app --preset fat-cat --step 5
[ "$(get alibi)" = false ] || fail "fat-cat starts with ALiBi on"

# 1. ALiBi on, with a click on its checkbox: the bias is a heatmap of its own.
read -r x y < <(python3 "$here/probe.py" "$probe" item "ALiBi position bias")
xdotool mousemove --window "$wid" "$x" "$y"; settle 2; xdotool click 1
python3 "$here/probe.py" "$probe" wait alibi true || fail "clicking 'ALiBi position bias' did not turn ALiBi on ($(state))"
until_drawn "position_bias[0]" yes || fail "with ALiBi on, no position_bias[0] heatmap is drawn"
settle 3
inspect_cell "position_bias[0]" 5 2 "B₀[5,2]"
shot alibi-on
xdotool mousemove --window "$wid" 5 400

# 2. Ctrl+Z: ALiBi off again, its heatmap gone.
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait alibi false || fail "Ctrl+Z did not turn ALiBi off"
until_drawn "position_bias[0]" no || fail "after Ctrl+Z a position_bias heatmap is still drawn"

# 3. The mask list: its third item is the sliding window, of T/2 = 3 keys for 7 tokens.
choose_in_list mask 2 || fail "the mask list is not on the probe's items or did not open"
python3 "$here/probe.py" "$probe" wait mask '"window 3"' || fail "choosing 'window' gave mask $(get mask), expected 'window 3'"
settle 3
shot window

# 4. RoPE on with a click: Q before rotation gets a heatmap of its own, and a
#    rotated query cell is explained as a turn of two unrotated ones.
read -r x y < <(python3 "$here/probe.py" "$probe" item "RoPE")
xdotool mousemove --window "$wid" "$x" "$y"; settle 2; xdotool click 1
python3 "$here/probe.py" "$probe" wait rope true || fail "clicking 'RoPE' did not turn RoPE on ($(state))"
until_drawn "Q_unrotated" yes || fail "with RoPE on, no Q_unrotated heatmap is drawn"
xdotool mousemove --window "$wid" 600 400
xdotool key Left Left Left  # back to step 2, the projections: the view scrolls to them
python3 "$here/probe.py" "$probe" wait step 1 || fail "three Left keys from step 5 gave step index $(get step), expected 1"
settle 3
inspect_cell "Q" 2 1 "Q[2,1]" "Qᵤ[2,3]·sin φ"  # a turn of Qᵤ[2,1] and its partner Qᵤ[2,3]
shot rope-on
#    The angles are a heatmap of their own (position × pair), explained per cell.
until_drawn "rope_angle" yes || fail "with RoPE on, no rope_angle heatmap is drawn"
inspect_cell "rope_angle" 3 0 "φ[3,0]" "φ = 3·θ^(−0/"
shot rope-angle
xdotool mousemove --window "$wid" 5 400

# 5. Attention sinks with a click: one logit per head (an input row) and each
#    head's sink share; dragging a logit up changes it, Ctrl+Z brings it back.
stop_app
start_app --preset fat-cat --step 6  # the softmax, where the sinks join each row
[ "$(get sinks)" = null ] || fail "fat-cat starts with sinks $(get sinks)"
click_item "attention sinks"
python3 "$here/probe.py" "$probe" wait sinks '[0]' || fail "clicking 'attention sinks' did not turn sinks on at 0 ($(get sinks))"
until_drawn "sinks" yes || fail "with sinks on, no heatmap of the sink logits is drawn"
until_drawn "sink_share[0]" yes || fail "with sinks on, no sink_share[0] heatmap is drawn"
settle 3
# The sinks are drawn twice (with A₀ and with the sink's share): press on a
# drawing whose cell is inside the view.
on_screen=$(python3 -c "
import json, sys
p = json.load(open(sys.argv[1]))
x0, y0, x1, y1 = p['centre']
for n, m in enumerate(m for m in p['heatmaps'] if m['stage'] == 'sinks'):
    cy = m['y0'] + (m['y1'] - m['y0']) / 2
    if x0 <= m['x0'] and m['x1'] <= x1 and y0 + 10 <= cy <= y1 - 10:
        print(n); break
" "$probe")
[ -n "$on_screen" ] || fail "no drawing of the sink logits is inside the view ($(state))"
press_on sinks 0 0 "${on_screen:-0}"
x=$press_x y=$press_y
for dy in 5 15 30 45 60; do xdotool mousemove --window "$wid" "$x" $((y - dy)); sleep 0.05; done
xdotool mouseup 1
python3 -c "import json,sys; v = json.load(open(sys.argv[1]))['sinks']; sys.exit(0 if v and v[0] > 0 else 1)" "$probe" ||
  fail "dragging the sink logit up left it at $(get sinks)"
share_bottom() { python3 -c "
import json, sys
print(int(max([m['y1'] for m in json.load(open(sys.argv[1]))['heatmaps'] if m['stage'] == 'sink_share[0]'] or [99999])))" "$probe"; }
for _ in $(seq 30); do [ "$(share_bottom)" -lt 690 ] && break; xdotool mousemove --window "$wid" 930 400 click 5; settle 1; done
[ "$(share_bottom)" -lt 690 ] || fail "could not scroll to sink_share[0] ($(state))"
inspect_cell "sink_share[0]" 2 0 "σ₀[2,0]"
shot sinks
xdotool mousemove --window "$wid" 5 400
xdotool key ctrl+z
python3 "$here/probe.py" "$probe" wait sinks '[0]' || fail "Ctrl+Z did not bring the sink logit back to 0 ($(get sinks))"
stop_app

# 6. Cross-attention in the head view: the four French queries on the left,
#    the five English keys on the right; clicking the line from 'chat' to its
#    key selects that weight.
start_app --preset translate
click_item "tab Head view"
python3 "$here/probe.py" "$probe" wait centre_view 1 || fail "clicking the Head view tab did not open it ($(get centre_view))"
settle 3
read -r queries keys < <(python3 -c "
import json, sys
hv = json.load(open(sys.argv[1]))['head_view']
print(','.join(t['label'] for t in hv['queries']), ','.join(t['label'] for t in hv['keys']))" "$probe")
[ "$queries" = "le,chat,noir,dort" ] || fail "the head view's queries are '$queries', expected le,chat,noir,dort"
[ "$keys" = "the,black,cat,sleeps,." ] || fail "the head view's keys are '$keys', expected the,black,cat,sleeps,."
# A quarter of the way along the line from query 1 to key 2 (lines fan out from the query).
read -r x y < <(python3 -c "
import json, sys
hv = json.load(open(sys.argv[1]))['head_view']
q, k = hv['queries'][1]['y'], hv['keys'][2]['y']
print(int(hv['left_x'] + 0.25 * (hv['right_x'] - hv['left_x'])), int(q + 0.25 * (k - q)))" "$probe")
xdotool mousemove --window "$wid" "$x" "$y"
settle 2
xdotool click 1
python3 "$here/probe.py" "$probe" wait selected '{"stage": "weights[0]", "row": 1, "col": 2}' ||
  fail "clicking the line from 'chat' to 'cat' selected $(get selected)"
shot translate-head-view
stop_app

# 7. Grouped-query heads: type 2 into "K/V heads" of the four-head preset.
start_app --preset multi-head --step 2
[ "$(get kv_heads)" = 4 ] || fail "multi-head starts with $(get kv_heads) K/V heads, expected 4"
type_into "K/V heads" 2 || fail "the K/V heads input is not on the probe's items"
python3 "$here/probe.py" "$probe" wait kv_heads 2 || fail "typing 2 into K/V heads gave $(get kv_heads) K/V heads"
settle 3
shot gqa
stop_app

# 8. The step-through brings its step on screen: at step 5 (the mask) of the
#    ALiBi preset, the masked scores are in the view once the layout has
#    settled, and the bias before them too when both fit.
start_app --preset alibi --step 5
settle 10
python3 - "$probe" <<'PY' || { fail "step 5 of the alibi preset is not on screen"; shot alibi-step-5; }
import json, sys
p = json.load(open(sys.argv[1]))
top, bottom = p["centre"][1], p["centre"][3]
def rect(stage):
    return next(m for m in p["heatmaps"] if m["stage"] == stage)
masked, bias = rect("masked[0]"), rect("position_bias[0]")
if not (top <= masked["y0"] and masked["y1"] <= bottom):
    sys.exit(f"masked[0] is at {masked['y0']}..{masked['y1']}, the view is {top}..{bottom}")
# The bias starts the step: in view too when both fit.
if masked["y1"] - bias["y0"] < 0.85 * (bottom - top) and not top <= bias["y0"]:
    sys.exit(f"position_bias[0] starts at {bias['y0']}, above the view ({top}..{bottom}), though it fits with masked[0]")
PY
stop_app

# 9. Gemma 2's soft-cap with a click: the capped scores S″ are a heatmap of
#    their own, derived as c·tanh(S′/c); typing 2 into c caps them harder.
start_app --preset fat-cat --step 4
python3 "$here/probe.py" "$probe" wait softcap 0 5 || fail "fat-cat starts with soft-cap $(get softcap)"  # (a number: 0 or 0.0)
click_item "soft-cap"
python3 "$here/probe.py" "$probe" wait softcap 50 || fail "clicking 'soft-cap scores' did not cap at 50 ($(get softcap))"
until_drawn "capped[0]" yes || fail "with the soft-cap on, no capped[0] heatmap is drawn"
type_into "soft-cap c" 2 || fail "the soft-cap's c input is not on the probe's items"
python3 "$here/probe.py" "$probe" wait softcap 2 || fail "typing 2 into c gave a cap of $(get softcap)"
settle 3
capped_bottom() { python3 -c "
import json, sys
print(int(max([m['y1'] for m in json.load(open(sys.argv[1]))['heatmaps'] if m['stage'] == 'capped[0]'] or [99999])))" "$probe"; }
for _ in $(seq 30); do [ "$(capped_bottom)" -lt 680 ] && break; xdotool mousemove --window "$wid" 930 400 click 5; settle 1; done
[ "$(capped_bottom)" -lt 680 ] || fail "could not scroll to capped[0] ($(state))"
inspect_cell "capped[0]" 2 1 "S″₀[2,1]" "2·tanh(S′₀[2,1] / 2)"
shot softcap
xdotool mousemove --window "$wid" 5 400
xdotool key ctrl+z ctrl+z
python3 "$here/probe.py" "$probe" wait softcap 0 || fail "two Ctrl+Z left the soft-cap at $(get softcap)"
until_drawn "capped[0]" no || fail "after Ctrl+Z a capped heatmap is still drawn"

# 10. The q/k norm with a click: Q and K before their norm get heatmaps of
#     their own (Q_proj, per head), Q is derived as Q_proj over its root mean
#     square times a gain; the scope list switches to the whole row (OLMo-2).
click_item "q/k norm"
python3 "$here/probe.py" "$probe" wait qk_norm '"head"' || fail "clicking 'q/k norm' gave scope $(get qk_norm)"
until_drawn "Q_proj" yes || fail "with the q/k norm on, no Q_proj heatmap is drawn"
xdotool key Left Left  # step 2, the projections
settle 5
inspect_cell "Q" 2 1 "Q[2,1]" "√(mean("
shot qk-norm
choose_in_list "q/k norm over" 1 || fail "the q/k norm's scope list is not on the probe's items or did not open"
python3 "$here/probe.py" "$probe" wait qk_norm '"whole"' || fail "choosing 'whole row' gave scope $(get qk_norm)"
stop_app

[ $fails -eq 0 ] && echo "PASS" || { echo "$fails failure(s)"; exit 1; }
