#!/usr/bin/env bash
# The Interpret tab with real X input, on the trained kjv-gpt2
# (../shared/models): a corrupted text typed beside the model's, "Run
# patching" clicked, the residual-stream grid holds what `attention-lab-cli
# patch` computes and its cell's tooltip is the hovered one; the per-head
# sweep chosen from the list, run, and a click on a cell focuses that head;
# the attribution of the predicted token is `attribute`'s; a corrupted text
# of another length is refused with both lengths, and the button stays off;
# a head ablated from its right-click menu gives the CLI's `ablate`
# predictions and Ctrl+Z takes it back; a typed spec ablates too. The head
# detectors on repeated random tokens and over a prompts file, and the
# attribution over it, are the CLI's detect-heads and attribute; the logit
# lens is the CLI's; "Compare the stages" makes the corrupted run Compare's
# snapshot.
# usage: gui_interp.sh APP_BINARY SHARED_MODELS_DIR OUT_DIR CLI_BINARY
set -u
export XVFB_SCREEN=${XVFB_SCREEN:-1920x1080x24}
source "$(dirname "$0")/run_in_xvfb.sh"
app=$1 models=$2 out=${3:-} cli=${4:-}
source "$(dirname "$0")/app_session.sh"

kjv="$models/kjv-gpt2"
if [ ! -f "$kjv/model.safetensors" ]; then
  echo "SKIP: $kjv is missing (the shared models folder is not here)"
  exit 77
fi
clean="the sons of Aaron and the sons of"
corrupted="the sons of Jacob and the sons of"
interp() { python3 -c "import json,sys; print(json.dumps(json.load(open(sys.argv[1]))['interp']))" "$probe"; }
# interp_check PYTHON_CONDITION [S]: probe_check of the Interpret tab's state `i`.
interp_check() { probe_check "i is not None and ($1)" "${2:-60}"; }
# set_corrupted TEXT: types TEXT into the corrupted text field until the app
# has it (next to a busy machine a ctrl+a can be lost, and TEXT appended).
set_corrupted() {
  for _ in 1 2 3; do
    click_input "interp corrupted" || fail "no corrupted text field ($(state))"
    replace_text "$1"
    interp_check "i['corrupted_text'] == $(python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1")" 10 && return 0
  done
  fail "could not type '$1' into the corrupted text: $(interp)"
}

for size in 1280x720 1920x1080; do
  app_size=$size
  start_app --model "$kjv" --text "$clean" --view interp
  model_check "m['T'] == 9" 60 || fail "the model did not open on its text ($(state))"
  settle 5

  # 1. A corrupted text of another length: refused, by name, and nothing runs.
  set_corrupted "the sons of Jacob"
  settle 3
  click_item "interp run"
  settle 5
  interp_check "i['patch'] is None and not i['patch_running']" 5 || fail "a sweep ran on texts of two lengths: $(interp)"
  interp_check "'patching needs the same number of tokens' in i['patch_problem']" 5 || fail "the lengths are not named: $(interp)"

  # 2. The same length: the residual-stream sweep, as the CLI computes it.
  set_corrupted "$corrupted"
  settle 3
  click_item "interp run"
  interp_check "i['patch'] is not None and i['patch']['kind'] == 'resid_pre' and not i['patch_running']" 120 ||
    fail "the residual sweep did not finish: $(interp)"
  "$cli" patch --model "$kjv" --clean "$clean" --corrupted "$corrupted" --json >"$out/patch.json" || fail "the CLI's patch failed"
  python3 - "$probe" "$out/patch.json" <<'PY' || fail "the app's residual sweep is not the CLI's"
import json, sys
app = json.load(open(sys.argv[1]))["interp"]["patch"]
cli = json.load(open(sys.argv[2]))
assert app["answer"] == cli["metric"]["answer"] and app["wrong"] == cli["metric"]["wrong"], (app["answer"], cli["metric"])
want = cli["sweeps"][0]["normalised"]
got = app["normalised"]
assert len(got) == len(want) and all(abs(a - b) < 1e-6 for ra, rb in zip(got, want) for a, b in zip(ra, rb)), (got, want)
assert abs(got[0][4] - 1.0) < 1e-9, got[0]  # layer 0 at the changed token: the clean run itself
PY
  # Hover position 4 ('Aaron' / 'Jacob') of layer 0: the probe names the hovered cell.
  bring_into_view "patch 4 0" || fail "the grid's cell is not in view ($(state))"
  read -r x y < <(python3 "$here/probe.py" "$probe" item "patch 4 0")
  xdotool mousemove --window "$wid" "$x" "$y"
  interp_check "i['hovered'] == 'patch 4 0'" 10 || fail "hovering a cell of the grid is not seen: $(interp)"
  shot "interp-resid-$size"

  # 3. Every head's output, chosen from the list; a click on a cell focuses the head.
  choose_in_list "interp kind" 3 || fail "the list of patching kinds did not open ($(state))"
  settle 3
  click_item "interp run"
  interp_check "i['patch']['kind'] == 'z' and not i['patch_running']" 120 || fail "the head sweep did not finish: $(interp)"
  python3 - "$probe" <<'PY' || fail "the head sweep's grid is not layers × heads"
import json, sys
p = json.load(open(sys.argv[1]))["interp"]["patch"]
assert len(p["normalised"]) == 4 and all(len(r) == 8 for r in p["normalised"]), p["normalised"]
PY
  # (scrolled into view first when the window is short)
  for _ in $(seq 20); do
    read -r x y < <(python3 "$here/probe.py" "$probe" item "patch 2 6")
    [ "$y" -lt "${size#*x}" ] && break
    xdotool mousemove --window "$wid" 640 400 click 5; settle 2
  done
  shot "interp-heads-$size"
  click_item "patch 2 6"
  model_check "m['layer'] == 2 and m['head'] == 6" 60 || fail "a click on layer 2, head 6 did not focus it ($(state))"

  # 4. The attribution of the predicted token is the CLI's.
  "$cli" attribute --model "$kjv" --text "$clean" --json >"$out/attribute.json" || fail "the CLI's attribute failed"
  interp_check "i['attribution'] is not None" 60 || fail "no attribution: $(interp)"
  python3 - "$probe" "$out/attribute.json" <<'PY' || fail "the app's attribution is not the CLI's"
import json, sys
a = json.load(open(sys.argv[1]))["interp"]["attribution"]
c = json.load(open(sys.argv[2]))
assert a["token"] == c["token"], (a["token"], c["token"])
assert abs(a["logit"] - c["logit"]) < 1e-4
assert all(abs(x - y) < 1e-4 for ra, rc in zip(a["heads"], c["heads"]) for x, y in zip(ra, rc))
PY

  # The logit lens at the last token: the CLI's logit-lens, the prediction followed.
  interp_check "i['lens'] is not None and not i['lens_running']" 60 || fail "no logit lens: $(interp)"
  "$cli" logit-lens --model "$kjv" --text "$clean" --k 5 --json >"$out/lens.json" || fail "the CLI's logit-lens failed"
  python3 - "$probe" "$out/lens.json" <<'PY' || fail "the app's logit lens is not the CLI's"
import json, sys
a = json.load(open(sys.argv[1]))["interp"]["lens"]
c = json.load(open(sys.argv[2]))
assert a["row"] == c["row"] and len(a["layers"]) == len(c["layers"]), (a["row"], c["row"])
for la, lc in zip(a["layers"], c["layers"]):
    assert [t["id"] for t in la["top"]] == [t["id"] for t in lc["top"]], (la, lc)
    assert all(abs(x["p"] - y["p"]) < 1e-5 for x, y in zip(la["top"], lc["top"]))
last = a["layers"][-1]
assert last["tracked"]["id"] == last["top"][0]["id"] and last["tracked"]["rank"] == 0, last
PY
  bring_into_view "lens 4 0" && {
    read -r x y < <(python3 "$here/probe.py" "$probe" item "lens 4 0")
    xdotool mousemove --window "$wid" "$x" "$y"
    interp_check "i['hovered'] == 'lens 4 0'" 10 || fail "hovering the lens's top token is not seen: $(interp)"
    shot "interp-lens-$size"
  } || fail "the logit lens is not in view ($(state))"

  # The attribution of a logit difference: the CLI's --minus.
  bring_into_view "interp attribution minus"
  for _ in 1 2 3; do
    click_input "interp attribution minus" || fail "no minus field ($(state))"
    replace_text " Levi"
    settle 3
    click_item "interp attribute"
    interp_check "i['attribution'] is not None and i['attribution']['minus'] >= 0 and not i['attribution_running']" 20 && break
  done
  "$cli" attribute --model "$kjv" --text "$clean" --minus " Levi" --json >"$out/attribute-minus.json" || fail "the CLI's attribute --minus failed"
  python3 - "$probe" "$out/attribute-minus.json" <<'PY' || fail "the app's attribution of a difference is not the CLI's"
import json, sys
a = json.load(open(sys.argv[1]))["interp"]["attribution"]
c = json.load(open(sys.argv[2]))
assert a["minus"] == c["minus"] and a["token"] == c["token"], (a["minus"], c["minus"])
assert abs(a["logit"] - c["logit"]) < 1e-4, (a["logit"], c["logit"])
assert all(abs(x - y) < 1e-4 for ra, rc in zip(a["heads"], c["heads"]) for x, y in zip(ra, rc))
PY
  shot "interp-attribution-minus-$size"

  # 5. Head detectors on repeated random tokens: the CLI's --repeat scores.
  bring_into_view "interp detectors run" || fail "the detectors' Run is not in view ($(state))"
  click_item "interp detectors run"
  interp_check "i['detectors'] is not None and not i['detectors_running'] and not i['detectors']['batch']" 120 ||
    fail "the detectors on random tokens did not finish: $(interp)"
  "$cli" detect-heads --model "$kjv" --repeat 25 --seed 1 --json >"$out/detect-random.json" || fail "the CLI's detect-heads failed"
  python3 - "$probe" "$out/detect-random.json" <<'PY' || fail "the app's detectors on random tokens are not the CLI's"
import json, sys
d = json.load(open(sys.argv[1]))["interp"]["detectors"]
c = json.load(open(sys.argv[2]))
assert d["ids"] == c["ids"], (d["ids"][:5], c["ids"][:5])
for kind, rows in c["scores"].items():
    assert all(abs(x - y) < 1e-6 for ra, rc in zip(d["mean"][kind], rows) for x, y in zip(ra, rc)), kind
assert d["mean_patterns"] == 32, d["mean_patterns"]
PY
  shot "interp-detectors-random-$size"

  # 6. A prompts file: typed and loaded, the detectors over it are the CLI's
  #    --prompts mean; one prompt chosen shows its own; the attribution over
  #    the file is the CLI's mean.
  printf 'And Moses said unto Aaron\nAnd the LORD spake unto Moses, saying\nIn the beginning God created the heaven\n' >"$out/prompts.txt"
  bring_into_view "interp prompts path"
  for _ in 1 2 3; do
    click_input "interp prompts path" || fail "no prompts path field ($(state))"
    replace_text "$out/prompts.txt"
    interp_check "i['prompts']['count'] == 3" 20 && break
  done
  interp_check "i['prompts']['count'] == 3 and i['detector_source'] == 'prompts'" 5 || fail "the prompts file was not read: $(interp)"
  bring_into_view "interp detectors run"
  click_item "interp detectors run"
  interp_check "i['detectors'] is not None and not i['detectors_running'] and i['detectors']['batch']" 120 ||
    fail "the detectors over the prompts did not finish: $(interp)"
  "$cli" detect-heads --model "$kjv" --prompts "$out/prompts.txt" --json >"$out/detect-prompts.json" || fail "the CLI's detect-heads --prompts failed"
  python3 - "$probe" "$out/detect-prompts.json" <<'PY' || fail "the app's detectors over the prompts are not the CLI's"
import json, sys
d = json.load(open(sys.argv[1]))["interp"]["detectors"]
c = json.load(open(sys.argv[2]))
for kind, rows in c["scores"].items():
    assert all(abs(x - y) < 1e-6 for ra, rc in zip(d["mean"][kind], rows) for x, y in zip(ra, rc)), kind
for got, want in zip(d["each_induction"], c["prompts"]):
    assert all(abs(x - y) < 1e-6 for ra, rc in zip(got, want["scores"]["induction"]) for x, y in zip(ra, rc))
assert d["mean_patterns"] == 0  # the prompts differ in length
PY
  bring_into_view "interp attribution batch" || fail "the attribution's batch box is not in view ($(state))"
  click_item "interp attribution batch"
  interp_check "i['attribution'] is not None and i['attribution']['prompts'] == 3 and not i['attribution_running']" 60 ||
    fail "the attribution over the prompts did not come: $(interp)"
  "$cli" attribute --model "$kjv" --prompts "$out/prompts.txt" --minus " Levi" --json >"$out/attribute-prompts.json" ||
    fail "the CLI's attribute --prompts failed"
  python3 - "$probe" "$out/attribute-prompts.json" <<'PY' || fail "the app's attribution over the prompts is not the CLI's mean"
import json, sys
a = json.load(open(sys.argv[1]))["interp"]["attribution"]
c = json.load(open(sys.argv[2]))["mean"]
assert abs(a["logit"] - c["logit"]) < 1e-4, (a["logit"], c["logit"])
assert all(abs(x - y) < 1e-4 for ra, rc in zip(a["heads"], c["heads"]) for x, y in zip(ra, rc))
PY
  bring_into_view "interp prompt shown"
  click_item "interp prompt shown"
  python3 "$here/probe.py" "$probe" wait popup true 5 >/dev/null || fail "the list of prompts did not open ($(state))"
  settle 2
  click_item "interp prompt 1"
  interp_check "i['prompts']['shown'] == 1" 10 || fail "choosing line 2 did not show it: $(interp)"
  xdotool mousemove_relative 5 5  # (a frame after the list has closed)
  settle 3
  shot "interp-prompts-$size"

  # 7. "Compare the stages": the corrupted run's focused layer becomes
  #    Compare's snapshot, and the Pipeline shows every stage's difference.
  bring_into_view "interp compare" || fail "no 'Compare the stages' in view ($(state))"
  click_item "interp compare"
  probe_check "'corrupted text' in p['snapshot_of'] and p['snapshot_T'] == 9 and p['centre_view'] == 0" 60 ||
    fail "the corrupted run did not become the snapshot: $(python3 -c "import json,sys; p=json.load(open(sys.argv[1])); print(p['snapshot'], p['snapshot_of'], p['centre_view'])" "$probe")"
  probe_check "p['difference_heatmaps'] > 0" 30 || fail "the Pipeline shows no differences to the corrupted run"
  shot "interp-compare-$size"
  quit_app

  # 8. Ablation from the Model tab: a right-click on layer 2, head 6 of the
  #    overview and "Ablate head 6 of layer 2": the predictions are those of
  #    `attention-lab-cli ablate`, their "before" the model's; Ctrl+Z takes it
  #    back. A spec typed (one position, mean) is ablated too.
  start_app --model "$kjv" --text "$clean" --view model
  model_check "m['T'] == 9 and m['predictions_revision_current'] and len(m['predictions']) > 0" 60 ||
    fail "the model did not open on its text ($(state))"
  read -r x y < <(python3 "$here/probe.py" "$probe" item "overview 2 6")
  xdotool mousemove --window "$wid" "$x" "$y"
  settle 2
  xdotool click 3
  python3 "$here/probe.py" "$probe" wait popup true 5 >/dev/null || fail "no menu on a right-click of a head ($(state))"
  settle 2
  click_item "ablate L2H6"
  model_check "m['ablations'] == ['L2H6'] and m['predictions_revision_current'] and len(m['predictions']) > 0" 60 ||
    fail "choosing 'Ablate head 6 of layer 2' did not ablate it: $(get model)"
  "$cli" ablate --model "$kjv" --text "$clean" --ablate L2H6 --k 10 --json >"$out/ablate.json" || fail "the CLI's ablate failed"
  python3 - "$probe" "$out/ablate.json" <<'PY' || fail "the app's ablated predictions are not the CLI's"
import json, sys
m = json.load(open(sys.argv[1]))["model"]
cli = {t["id"]: t for t in json.load(open(sys.argv[2]))["tokens"]}
moved = False
for p in m["predictions"]:
    t = cli[p["id"]]
    assert abs(p["p"] - t["p_after"]) < 2e-5 and abs(p["before"] - t["p_before"]) < 2e-5, (p, t)
    moved |= abs(p["p"] - p["before"]) > 1e-3
assert moved, m["predictions"]
PY
  shot "model-ablated-$size"
  xdotool key ctrl+z
  model_check "m['ablations'] == [] and m['predictions_revision_current'] and len(m['predictions']) > 0 and
               all(p['p'] == p['before'] for p in m['predictions'])" 60 ||
    fail "Ctrl+Z did not take the ablation back: $(get model)"
  for _ in 1 2 3; do  # (retyped when a busy machine lost the ctrl+a: the field then says what it refused)
    click_input "ablation spec" || fail "no field for an ablation spec ($(state))"
    replace_text "L0.mlp@8:mean"
    model_check "m['ablations'] == ['L0.mlp@8:mean']" 20 && break
  done
  model_check "m['ablations'] == ['L0.mlp@8:mean']" 5 || fail "a typed spec was not ablated: $(get model)"
  quit_app
done
exit $((fails > 0))
