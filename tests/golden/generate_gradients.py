#!/usr/bin/python3
"""Golden gradients: ∂L/∂(every stage) of the golden scenarios, by PyTorch autograd in float64.

How to rerun (from the repository root, after generate_golden.py):

    /usr/bin/python3 tests/golden/generate_gradients.py

Use /usr/bin/python3 (PyTorch 1.13). For every golden scenario whose settings
the engine's backward pass covers (no RoPE, q/k norm, soft-cap, sinks,
grouped K/V heads, cross-attention or pins: those are refused by name, and
tests/core/gradients_test.cpp checks that too), it writes
tests/golden/fixtures/<name>.grad-<loss>.json:

  {"scenario": "<name>.scenario.json", "loss": {…the scenario file's "loss"…},
   "expected": {"loss": L, "grad": {"X", "W_q", …, "heads": [{…}], "concat", "output"}}}

with two losses: "attend" (head 0, row i attends to the first key its mask
allows; left out when a row allows none) and "mse" (a seeded random target).
The forward pass here is written in torch from the same rules as
generate_golden.py's reference and checked against it to 1e-12 before its
gradients are taken. Deterministic: rerunning rewrites the files byte for byte.
"""

import json
import math
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_golden as golden  # noqa: E402

FIXTURES = golden.FIXTURES
UNSUPPORTED = ("rope", "qk_norm", "softcap", "sinks", "X_kv")


def supported(s):
    return all(s[k] is None for k in ("rope", "qk_norm", "softcap", "sinks", "X_kv")) and s["kv_heads"] == s["heads"]


def forward(s, leaves, loss):
    """The engine's math in torch; returns (loss, every stage by our trace names)."""
    X, Wq, Wk, Wv = leaves["X"], leaves["W_q"], leaves["W_k"], leaves["W_v"]
    H = s["heads"]
    T = X.shape[0]
    d_k = Wq.shape[1] // H
    d_v = Wv.shape[1] // H
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    if "b_q" in leaves:
        Q, K, V = Q + leaves["b_q"], K + leaves["b_k"], V + leaves["b_v"]
    stages = {"Q": Q, "K": K, "V": V}
    mask = torch.tensor(s["mask"] != 0)
    any_allowed = mask.any(dim=1, keepdim=True)
    heads, contexts = [], []
    for i in range(H):
        Qi, Ki, Vi = Q[:, i * d_k:(i + 1) * d_k], K[:, i * d_k:(i + 1) * d_k], V[:, i * d_v:(i + 1) * d_v]
        scores = Qi @ Ki.T
        if s["scale"] and s["scale_factor"] is not None:
            scaled = scores * s["scale_factor"]
        else:
            scaled = scores / math.sqrt(d_k) if s["scale"] else scores
        scaled = scaled / s["temperature"]
        plus = scaled
        if s["alibi"]:
            m = float(golden.f32(golden.get_slopes(H)[i]))
            plus = scaled + torch.tensor([[m * (k - q) for k in range(T)] for q in range(T)])
        masked = torch.where(mask, plus, torch.tensor(-math.inf))
        # a row that allows no key gets weights 0 (the engine's convention, not NaN)
        safe = torch.where(any_allowed, masked, torch.zeros_like(masked))
        weights = torch.where(any_allowed, torch.softmax(safe, dim=1), torch.zeros_like(masked))
        context = weights @ Vi
        head = {"Q": Qi, "K": Ki, "V": Vi, "scores": scores, "scaled": scaled, "masked": masked, "weights": weights,
                "context": context}
        heads.append(head)
        contexts.append(context)
    concat = torch.cat(contexts, dim=1)
    output = concat @ leaves["W_o"] if "W_o" in leaves else concat
    if "b_o" in leaves:
        output = output + leaves["b_o"]
    stages.update({"heads": heads, "concat": concat, "output": output})
    if loss["kind"] == "mse":
        L = ((output - torch.tensor(np.array(loss["target"]))) ** 2).mean()
    else:
        A = heads[loss["head"]]["weights"]
        L = -sum(torch.log(A[r, j]) for r, j in enumerate(loss["targets"])) / T
    return L, stages


def gradients(s, loss):
    names = ["X", "W_q", "W_k", "W_v"] + (["b_q", "b_k", "b_v"] if "b_q" in s else [])
    names += [k for k in ("W_o", "b_o") if s[k] is not None]
    leaves = {k: torch.tensor(np.array(s[k]), requires_grad=True) for k in names}
    L, stages = forward(s, leaves, loss)
    kept = [stages["Q"], stages["K"], stages["V"], stages["concat"], stages["output"]]
    for h in stages["heads"]:
        kept += [h[k] for k in ("Q", "K", "V", "scores", "scaled", "masked", "weights", "context")]
    for t in kept:
        t.retain_grad()
    L.backward()
    return float(L), leaves, stages


def check_forward(s, stages):
    ref = golden.reference(s)
    worst = max(float(np.max(np.abs(np.nan_to_num(ref["output"]) - stages["output"].detach().numpy()))), 0.0)
    for h, rh in zip(stages["heads"], ref["heads"]):
        worst = max(worst, float(np.max(np.abs(rh["weights"] - h["weights"].detach().numpy()))))
    return worst


def grad_text(L, leaves, stages):
    fmt = golden.num
    g = lambda t: t.grad.numpy() if t.grad is not None else np.zeros(tuple(t.shape))  # noqa: E731
    out = ['  "expected": {', f'    "loss": {fmt(L)},', '    "grad": {']
    parts = [f'      "{k}": {golden.matrix_text(np.atleast_2d(g(leaves[k])), fmt, 6)}'
             for k in ("X", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o") if k in leaves]
    parts += [f'      "{k}": {golden.matrix_text(g(stages[k]), fmt, 6)}' for k in ("Q", "K", "V")]
    heads = []
    for h in stages["heads"]:
        heads.append("{\n" + ",\n".join(f'        "{k}": {golden.matrix_text(g(h[k]), fmt, 8)}'
                                        for k in ("Q", "K", "V", "scores", "scaled", "masked", "weights", "context"))
                     + "\n      }")
    parts.append('      "heads": [' + ", ".join(heads) + "]")
    parts += [f'      "{k}": {golden.matrix_text(g(stages[k]), fmt, 6)}' for k in ("concat", "output")]
    out.append(",\n".join(parts))
    out.append("    }")
    out.append("  }")
    return "\n".join(out)


def losses(name, s):
    T = s["X"].shape[0]
    out = []
    allowed = [[j for j in range(T) if s["mask"][i][j] != 0] for i in range(T)]
    if all(allowed):
        out.append(("attend", {"kind": "attend", "head": 0, "targets": [row[0] for row in allowed]}))
    d_out = s["W_o"].shape[1] if s["W_o"] is not None else s["W_v"].shape[1]
    rng = np.random.default_rng(sum(map(ord, name)))
    target = golden.f32(rng.uniform(-1.0, 1.0, size=(T, d_out)))
    out.append(("mse", {"kind": "mse", "target": [[float(v) for v in row] for row in target]}))
    return out


def main():
    torch.set_default_dtype(torch.float64)
    names = sorted(f[:-len(".scenario.json")] for f in os.listdir(FIXTURES) if f.endswith(".scenario.json"))
    for name in names:
        s = golden.load_scenario(os.path.join(FIXTURES, name + ".scenario.json"))
        if not supported(s):
            continue
        for kind, loss in losses(name, s):
            L, leaves, stages = gradients(s, loss)
            worst = check_forward(s, stages)
            if not worst <= 1e-12:
                sys.exit(f"{name}: the torch forward pass and the reference differ by {worst:.3g}")
            loss_text = json.dumps(loss, separators=(", ", ": "))
            text = "{\n" + f'  "scenario": "{name}.scenario.json",\n  "loss": {loss_text},\n' + grad_text(L, leaves, stages) + "\n}\n"
            json.loads(text)
            path = os.path.join(FIXTURES, f"{name}.grad-{kind}.json")
            with open(path, "w") as f:
                f.write(text)
            print(f"{name} {kind}: L = {L:.6g}")


if __name__ == "__main__":
    main()
