#!/usr/bin/python3
"""Golden gradients: ∂L/∂(every stage) of the golden scenarios, by PyTorch autograd in float64.

How to rerun (from the repository root, after generate_golden.py):

    /usr/bin/python3 tests/golden/generate_gradients.py

Use /usr/bin/python3 (PyTorch 1.13). For every golden scenario (every variant:
RoPE, the q/k norm, soft-caps, ALiBi, sinks, grouped K/V heads, cross-attention,
windows; the engine refuses only pins and a RoPE scaling, by name, which
tests/core/gradients_test.cpp checks), it writes
tests/golden/fixtures/<name>.grad-<loss>.json:

  {"scenario": "<name>.scenario.json", "loss": {…the scenario file's "loss"…},
   "expected": {"loss": L, "grad": {"X", "W_q", …, "heads": [{…}], "concat", "output"}}}

with three losses: "attend" (head 0, row i attends to the first key its mask
allows; left out when a row allows none), "mse" (a seeded random target) and
"next_token" (a seeded random d_out × 7 unembedding W_U and random targets).
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
def supported(s):
    return not (s["rope"] or {}).get("scaling")


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).reshape(x.shape)


def apply_rope(x, rope, T):
    """golden.apply_rope in torch (the angles are constants)."""
    if rope.get("dims") and rope["dims"] < x.shape[1]:
        r = rope["dims"]
        return torch.cat([apply_rope(x[:, :r], {**rope, "dims": None}, T), x[:, r:]], dim=1)
    d = x.shape[1]
    theta = float(golden.f32(rope.get("theta", 10000.0)))
    inv_freq = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    freqs = np.outer(np.arange(T, dtype=np.float64), inv_freq)
    if rope.get("pairs", "half") == "half":
        emb = torch.tensor(np.concatenate([freqs, freqs], axis=-1))
        return x * torch.cos(emb) + rotate_half(x) * torch.sin(emb)
    emb = torch.tensor(np.repeat(freqs, 2, axis=-1))
    return x * torch.cos(emb) + rotate_every_two(x) * torch.sin(emb)


def qk_norm(P, g, norm, blocks, d_k):
    """golden.qk_norm in torch, with the gain g a leaf."""
    eps = float(golden.f32(norm.get("eps", 1e-6)))
    if norm["scope"] == "whole":
        return P / torch.sqrt((P * P).mean(dim=1, keepdim=True) + eps) * g
    parts = []
    for b in range(blocks):
        x = P[:, b * d_k:(b + 1) * d_k]
        parts.append(x / torch.sqrt((x * x).mean(dim=1, keepdim=True) + eps) * g)
    return torch.cat(parts, dim=1)


def forward(s, leaves, loss):
    """The engine's math in torch (golden.reference's rules); returns (loss, every stage by our trace names)."""
    X, Wq, Wk, Wv = leaves["X"], leaves["W_q"], leaves["W_k"], leaves["W_v"]
    Xkv = leaves["X_kv"] if "X_kv" in leaves else X
    H, KV = s["heads"], s["kv_heads"]
    T, Tk = X.shape[0], Xkv.shape[0]
    d_k = Wq.shape[1] // H
    d_v = Wv.shape[1] // KV
    Q, K, V = X @ Wq, Xkv @ Wk, Xkv @ Wv
    if "b_q" in leaves:
        Q, K, V = Q + leaves["b_q"], K + leaves["b_k"], V + leaves["b_v"]
    stages = {}
    if s["qk_norm"] is not None:
        stages["Q_proj"], stages["K_proj"] = Q, K
        Q = qk_norm(Q, leaves["q_norm"], s["qk_norm"], H, d_k)
        K = qk_norm(K, leaves["k_norm"], s["qk_norm"], KV, d_k)
    if s["rope"] is not None:
        stages["Q_unrotated"], stages["K_unrotated"] = Q, K
        Q = torch.cat([apply_rope(Q[:, i * d_k:(i + 1) * d_k], s["rope"], T) for i in range(H)], dim=1)
        K = torch.cat([apply_rope(K[:, g * d_k:(g + 1) * d_k], s["rope"], Tk) for g in range(KV)], dim=1)
    stages.update({"Q": Q, "K": K, "V": V})
    mask = torch.tensor(s["mask"] != 0)
    any_allowed = mask.any(dim=1, keepdim=True)
    heads, contexts = [], []
    for i in range(H):
        g = i // (H // KV)
        Qi, Ki, Vi = Q[:, i * d_k:(i + 1) * d_k], K[:, g * d_k:(g + 1) * d_k], V[:, g * d_v:(g + 1) * d_v]
        scores = Qi @ Ki.T
        if s["scale"] and s["scale_factor"] is not None:
            scaled = scores * s["scale_factor"]
        else:
            scaled = scores / math.sqrt(d_k) if s["scale"] else scores
        scaled = scaled / s["temperature"]
        head = {"Q": Qi, "K": Ki, "V": Vi, "scores": scores, "scaled": scaled}
        plus = scaled
        if s["softcap"] is not None:
            plus = s["softcap"] * torch.tanh(scaled / s["softcap"])
            head["capped"] = plus
        if s["alibi"]:
            m = float(golden.f32(golden.get_slopes(H)[i]))
            plus = plus + torch.tensor([[m * (k - q) for k in range(Tk)] for q in range(T)])
        masked = torch.where(mask, plus, torch.tensor(-math.inf))
        # a row that allows no key gets weights 0 (the engine's convention, not NaN)
        safe = torch.where(any_allowed, masked, torch.zeros_like(masked))
        if s["sinks"] is not None:
            sink = leaves["sinks"][0, i].expand(T, 1)
            both = torch.softmax(torch.cat([safe, sink], dim=1), dim=1)
            weights = torch.where(any_allowed, both[:, :Tk], torch.zeros_like(masked))
        else:
            weights = torch.where(any_allowed, torch.softmax(safe, dim=1), torch.zeros_like(masked))
        context = weights @ Vi
        if s["rope"] is not None:
            head["Q_unrotated"] = stages["Q_unrotated"][:, i * d_k:(i + 1) * d_k]
            head["K_unrotated"] = stages["K_unrotated"][:, g * d_k:(g + 1) * d_k]
        if s["qk_norm"] is not None:
            head["Q_proj"] = stages["Q_proj"][:, i * d_k:(i + 1) * d_k]
            head["K_proj"] = stages["K_proj"][:, g * d_k:(g + 1) * d_k]
        head.update({"masked": masked, "weights": weights, "context": context})
        heads.append(head)
        contexts.append(context)
    concat = torch.cat(contexts, dim=1)
    output = concat @ leaves["W_o"] if "W_o" in leaves else concat
    if "b_o" in leaves:
        output = output + leaves["b_o"]
    stages.update({"heads": heads, "concat": concat, "output": output})
    if loss["kind"] == "mse":
        L = ((output - torch.tensor(np.array(loss["target"]))) ** 2).mean()
    elif loss["kind"] == "next_token":
        logits = output @ torch.tensor(np.array(loss["W_U"]))
        L = torch.nn.functional.cross_entropy(logits, torch.tensor(loss["targets"]))
    else:
        A = heads[loss["head"]]["weights"]
        L = -sum(torch.log(A[r, j]) for r, j in enumerate(loss["targets"])) / T
    return L, stages


HEAD_KEYS = ("Q", "K", "V", "Q_unrotated", "K_unrotated", "Q_proj", "K_proj", "scores", "scaled", "capped", "masked",
             "weights", "context")
TOP_KEYS = ("Q", "K", "V", "Q_unrotated", "K_unrotated", "Q_proj", "K_proj")
LEAF_KEYS = ("X", "X_kv", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o", "sinks", "q_norm", "k_norm")


def leaf_values(s):
    out = {k: s[k] for k in ("X", "W_q", "W_k", "W_v", "b_q", "b_k", "b_v", "W_o", "b_o") if s.get(k) is not None}
    if s["X_kv"] is not None:
        out["X_kv"] = s["X_kv"]
    if s["sinks"] is not None:
        out["sinks"] = np.atleast_2d(s["sinks"])
    if s["qk_norm"] is not None:
        out["q_norm"] = np.atleast_2d(golden.f32(s["qk_norm"]["q"]))
        out["k_norm"] = np.atleast_2d(golden.f32(s["qk_norm"]["k"]))
    return out


def gradients(s, loss):
    leaves = {k: torch.tensor(np.array(v), requires_grad=True) for k, v in leaf_values(s).items()}
    L, stages = forward(s, leaves, loss)
    kept = [stages[k] for k in TOP_KEYS + ("concat", "output") if k in stages]
    for h in stages["heads"]:
        kept += [h[k] for k in HEAD_KEYS if k in h]
    for t in kept:
        if t.requires_grad:
            t.retain_grad()
    L.backward()
    return float(L), leaves, stages


def check_forward(s, stages):
    ref = golden.reference(s)
    worst = float(np.max(np.abs(ref["output"] - stages["output"].detach().numpy())))
    for h, rh in zip(stages["heads"], ref["heads"]):
        worst = max(worst, float(np.max(np.abs(rh["weights"] - h["weights"].detach().numpy()))))
    return worst


def short(x):
    """Nine significant digits: the test's tolerance is 1e-3 of a value."""
    x = float(x)
    assert math.isfinite(x), x
    return "%.9g" % x


def grad_text(L, leaves, stages):
    fmt = short
    g = lambda t: t.grad.numpy() if t.grad is not None else np.zeros(tuple(t.shape))  # noqa: E731
    out = ['  "expected": {', f'    "loss": {fmt(L)},', '    "grad": {']
    parts = [f'      "{k}": {golden.matrix_text(np.atleast_2d(g(leaves[k])), fmt, 6)}' for k in LEAF_KEYS if k in leaves]
    parts += [f'      "{k}": {golden.matrix_text(g(stages[k]), fmt, 6)}' for k in TOP_KEYS if k in stages]
    # A head's Q, K, V (and their forms before RoPE and the norm) are views of
    # the whole matrix: their gradient is its block of the whole's, the total
    # derivative (with grouped heads, K[h] is the K/V head's, summed over the
    # query heads that share it).
    H = len(stages["heads"])
    KV = stages["K"].shape[1] // stages["heads"][0]["K"].shape[1]
    def view_grad(key, i, h):
        width = h[key].shape[1]
        block = i if key.startswith("Q") else i // (H // KV)
        return g(stages[key])[:, block * width:(block + 1) * width]
    heads = []
    for i, h in enumerate(stages["heads"]):
        heads.append("{\n" + ",\n".join(
            f'        "{k}": {golden.matrix_text(view_grad(k, i, h) if k in TOP_KEYS else g(h[k]), fmt, 8)}'
            for k in HEAD_KEYS if k in h) + "\n      }")
    parts.append('      "heads": [' + ", ".join(heads) + "]")
    parts += [f'      "{k}": {golden.matrix_text(g(stages[k]), fmt, 6)}' for k in ("concat", "output")]
    out.append(",\n".join(parts))
    out.append("    }")
    out.append("  }")
    return "\n".join(out)


def losses(name, s):
    T = s["X"].shape[0]
    out = []
    allowed = [[j for j in range(s["mask"].shape[1]) if s["mask"][i][j] != 0] for i in range(T)]
    if all(allowed):
        out.append(("attend", {"kind": "attend", "head": 0, "targets": [row[0] for row in allowed]}))
    d_out = s["W_o"].shape[1] if s["W_o"] is not None else s["W_v"].shape[1]
    rng = np.random.default_rng(sum(map(ord, name)))
    target = golden.f32(rng.uniform(-1.0, 1.0, size=(T, d_out)))
    out.append(("mse", {"kind": "mse", "target": [[float(v) for v in row] for row in target]}))
    vocab = 7
    W_U = golden.f32(rng.uniform(-1.0, 1.0, size=(d_out, vocab)))
    targets = [int(t) for t in rng.integers(0, vocab, size=T)]
    out.append(("next_token", {"kind": "next_token", "W_U": [[float(v) for v in row] for row in W_U], "targets": targets}))
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
