#!/usr/bin/env python3
"""The default induction run (`attention-lab-cli train` with RUN.json `{}`:
2 layers, 4 heads, d_model 64) forms an induction head, as the README says:
by step 1100 the loss on the repeated part is below half the loss on the
random part, a second-layer head puts more than 0.3 of its weight on the
token after the earlier copy of the current one, and the first layer holds
a previous-token head. The run is seeded, so this is the same run every time.

usage: induction_forms.py ATTENTION_LAB_CLI
"""
import json
import os
import subprocess
import sys
import tempfile


def main(cli):
    with tempfile.TemporaryDirectory() as folder:
        run = os.path.join(folder, "run.json")
        with open(run, "w") as f:
            f.write("{}")
        done = subprocess.run([cli, "train", run, "--steps", "1100"], capture_output=True, text=True, timeout=280)
    if done.returncode != 0:
        print("train failed:", done.returncode, done.stderr)
        return 1
    logs = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    last = logs[-1]
    failures = []
    if last["step"] != 1100:
        failures.append(f"the log ends at step {last['step']}, not 1100")
    first = next((l["step"] for l in logs if l["repeat_loss"] < 0.5 * l["random_loss"]), None)
    if first is None:
        failures.append(f"the repeat never cost less than half the random part (last: {last['repeat_loss']:.3f} "
                        f"against {last['random_loss']:.3f})")
    induction = max(last["induction_score"][1])
    if induction <= 0.3:
        failures.append(f"no second-layer head scores above 0.3 as an induction head ({last['induction_score'][1]})")
    previous = max(last["previous_token_score"][0])
    if previous <= 0.2:
        failures.append(f"no first-layer head looks at the previous token ({last['previous_token_score'][0]})")
    for f in failures:
        print("FAIL:", f)
    if failures:
        return 1
    print(f"PASS: the repeat below half the random part from step {first}; at step 1100 the best induction score "
          f"{induction:.2f}, the best previous-token score {previous:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
