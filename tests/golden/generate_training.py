#!/usr/bin/python3
"""Golden training runs: a few optimizer steps of torch.optim on golden scenarios, in float64.

How to rerun (from the repository root, after generate_golden.py):

    /usr/bin/python3 tests/golden/generate_training.py

For each case below and each optimizer (SGD, SGD with momentum, Adam, AdamW,
as torch.optim computes them) it writes
tests/golden/fixtures/<name>.fit-<optimizer>.json:

  {"scenario": "<name>.scenario.json", "loss": {…}, "settings": {"optimizer", "learning_rate",
   "weight_decay", "momentum", "trained": [...], "steps": n},
   "expected": {"losses": [the loss before each step], "final": {"W_q": …, …}}}

The forward pass is generate_gradients.py's (checked there against the
reference). tests/core/training_test.cpp replays each run with the engine's
Trainer. Deterministic: rerunning rewrites the files byte for byte.
"""

import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_golden as golden  # noqa: E402
import generate_gradients as grads  # noqa: E402

STEPS = 6
CASES = [
    # (scenario, loss kind, trained matrices, learning rate): attention learning where to look
    ("preset_fat_cat", "attend", ["W_q", "W_k", "W_v"], 0.05),
    ("mha_three_heads_biases_causal", "mse", ["W_q", "W_k", "W_v", "b_q", "b_v"], 0.05),
    ("qwen3_like_qk_norm_gqa_rope", "attend", ["W_q", "W_k", "q_norm", "k_norm"], 0.05),
    ("gqa_rope_alibi_sinks", "mse", ["W_v", "sinks", "W_q"], 0.05),
]
OPTIMIZERS = {
    "sgd": lambda params, lr: torch.optim.SGD(params, lr=lr, weight_decay=0.01),
    "momentum": lambda params, lr: torch.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=0.01),
    "adam": lambda params, lr: torch.optim.Adam(params, lr=lr, weight_decay=0.01),
    "adamw": lambda params, lr: torch.optim.AdamW(params, lr=lr, weight_decay=0.01),
}


def main():
    torch.set_default_dtype(torch.float64)
    for name, kind, trained, lr in CASES:
        s = golden.load_scenario(os.path.join(golden.FIXTURES, name + ".scenario.json"))
        loss = dict(grads.losses(name, s))[kind]
        for opt_name, make in OPTIMIZERS.items():
            leaves = {k: torch.tensor(np.array(v), requires_grad=k in trained) for k, v in grads.leaf_values(s).items()}
            missing = [k for k in trained if k not in leaves]
            if missing:
                sys.exit(f"{name}: has no {missing}")
            optimizer = make([leaves[k] for k in trained], lr)
            losses = []
            for _ in range(STEPS):
                optimizer.zero_grad()
                L, _ = grads.forward(s, leaves, loss)
                losses.append(float(L))
                L.backward()
                for k in trained:  # a matrix the loss does not reach has a zero gradient, not none: decay still applies
                    if leaves[k].grad is None:
                        leaves[k].grad = torch.zeros_like(leaves[k])
                optimizer.step()
            final = ",\n".join(f'      "{k}": {golden.matrix_text(np.atleast_2d(leaves[k].detach().numpy()), grads.short, 6)}'
                               for k in trained)
            settings = {"optimizer": opt_name, "learning_rate": lr, "weight_decay": 0.01, "momentum": 0.9,
                        "trained": trained, "steps": STEPS}
            text = ("{\n" + f'  "scenario": "{name}.scenario.json",\n'
                    f'  "loss": {json.dumps(loss, separators=(", ", ": "))},\n'
                    f'  "settings": {json.dumps(settings, separators=(", ", ": "))},\n'
                    '  "expected": {\n'
                    f'    "losses": [{", ".join(grads.short(x) for x in losses)}],\n'
                    '    "final": {\n' + final + "\n    }\n  }\n}\n")
            json.loads(text)
            with open(os.path.join(golden.FIXTURES, f"{name}.fit-{opt_name}.json"), "w") as f:
                f.write(text)
            print(f"{name} {opt_name}: loss {losses[0]:.5f} -> {losses[-1]:.5f}")


if __name__ == "__main__":
    main()
