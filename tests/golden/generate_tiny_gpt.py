#!/usr/bin/python3
"""A tiny GPT-2 trained by PyTorch in float64: the reference for the app's own training.

How to rerun (from the repository root):

    /usr/bin/python3 tests/golden/generate_tiny_gpt.py

Writes tests/golden/fixtures/tiny-gpt.train.json:

  {"shape": {layers, heads, d_model, d_ff, vocab, context},
   "optimizer": {learning_rate, beta1, beta2, eps, weight_decay},
   "initial": {HF tensor name: values (a vector, or rows of a matrix)},
   "batches": [{"ids": [[…]], "targets": [[…]]} per step],
   "first_gradients": {name: ∂loss/∂tensor at step 1},
   "losses": [the loss before each step]}

The model is GPT-2's block written out with torch ops (pre-LayerNorm,
causal attention, GELU tanh, learned positions, the head tied to wte),
trained with torch.optim.AdamW (decay on matrices and embeddings only, as
the app does). tests/core/tiny_gpt_reference_test.cpp loads the same
initial weights and batches into TinyGpt and must find the same losses,
within 1e-4, for every step. Deterministic: rerunning rewrites the file byte
for byte.
"""

import json
import math
import os

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures", "tiny-gpt.train.json")

SHAPE = {"layers": 2, "heads": 2, "d_model": 8, "d_ff": 16, "vocab": 11, "context": 8}
OPT = {"learning_rate": 3e-3, "beta1": 0.9, "beta2": 0.98, "eps": 1e-8, "weight_decay": 0.01}
STEPS = 50
BATCH = 4


def initial_weights(gen):
    L, d, f, V, T = SHAPE["layers"], SHAPE["d_model"], SHAPE["d_ff"], SHAPE["vocab"], SHAPE["context"]
    normal = lambda *shape, sigma=0.02: torch.randn(*shape, generator=gen, dtype=torch.float64) * sigma
    # Not GPT-2's 1 and 0 for gains and biases: the reference should see every parameter matter.
    near = lambda n, centre: centre + normal(n, sigma=0.1)
    w = {"transformer.wte.weight": normal(V, d, sigma=0.3), "transformer.wpe.weight": normal(T, d, sigma=0.3)}
    for l in range(L):
        h = f"transformer.h.{l}."
        w[h + "ln_1.weight"] = near(d, 1.0)
        w[h + "ln_1.bias"] = near(d, 0.0)
        w[h + "attn.c_attn.weight"] = normal(d, 3 * d, sigma=0.4)
        w[h + "attn.c_attn.bias"] = near(3 * d, 0.0)
        w[h + "attn.c_proj.weight"] = normal(d, d, sigma=0.3)
        w[h + "attn.c_proj.bias"] = near(d, 0.0)
        w[h + "ln_2.weight"] = near(d, 1.0)
        w[h + "ln_2.bias"] = near(d, 0.0)
        w[h + "mlp.c_fc.weight"] = normal(d, f, sigma=0.3)
        w[h + "mlp.c_fc.bias"] = near(f, 0.0)
        w[h + "mlp.c_proj.weight"] = normal(f, d, sigma=0.3)
        w[h + "mlp.c_proj.bias"] = near(d, 0.0)
    w["transformer.ln_f.weight"] = near(d, 1.0)
    w["transformer.ln_f.bias"] = near(d, 0.0)
    # Stored as float32 in the file: the app starts from exactly these values.
    return {k: v.float().double().requires_grad_(True) for k, v in w.items()}


def loss_of(w, ids, targets):
    L, H, d = SHAPE["layers"], SHAPE["heads"], SHAPE["d_model"]
    dh = d // H
    B, T = ids.shape
    x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:T]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    ln = lambda x, p: torch.nn.functional.layer_norm(x, (d,), w[p + ".weight"], w[p + ".bias"], 1e-5)
    for l in range(L):
        h = f"transformer.h.{l}."
        qkv = ln(x, h + "ln_1") @ w[h + "attn.c_attn.weight"] + w[h + "attn.c_attn.bias"]
        q, k, v = (t.reshape(B, T, H, dh).transpose(1, 2) for t in qkv.split(d, dim=2))
        s = (q @ k.transpose(-1, -2)) / math.sqrt(dh)
        a = s.masked_fill(~causal, float("-inf")).softmax(-1)
        ctx = (a @ v).transpose(1, 2).reshape(B, T, d)
        x = x + ctx @ w[h + "attn.c_proj.weight"] + w[h + "attn.c_proj.bias"]
        m = ln(x, h + "ln_2") @ w[h + "mlp.c_fc.weight"] + w[h + "mlp.c_fc.bias"]
        m = torch.nn.functional.gelu(m, approximate="tanh")
        x = x + m @ w[h + "mlp.c_proj.weight"] + w[h + "mlp.c_proj.bias"]
    logits = ln(x, "transformer.ln_f") @ w["transformer.wte.weight"].T
    return torch.nn.functional.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1), ignore_index=-1)


def values(t):
    t = t.detach()
    return [float(v) for v in t.tolist()] if t.dim() == 1 else [[float(v) for v in row] for row in t.tolist()]


def main():
    torch.set_default_dtype(torch.float64)
    gen = torch.Generator().manual_seed(4)
    w = initial_weights(gen)
    initial = {k: values(v) for k, v in w.items()}
    decays = [v for k, v in w.items() if k.endswith(".weight") and ".ln_" not in k]
    rest = [v for k, v in w.items() if not (k.endswith(".weight") and ".ln_" not in k)]
    opt = torch.optim.AdamW([{"params": decays, "weight_decay": OPT["weight_decay"]}, {"params": rest, "weight_decay": 0.0}],
                            lr=OPT["learning_rate"], betas=(OPT["beta1"], OPT["beta2"]), eps=OPT["eps"])
    batches, losses, first_gradients = [], [], None
    T = SHAPE["context"] - 1  # shorter than the context, as a task's batches may be
    for step in range(STEPS):
        ids = torch.randint(0, SHAPE["vocab"], (BATCH, T), generator=gen)
        targets = torch.randint(0, SHAPE["vocab"], (BATCH, T), generator=gen)
        targets[torch.rand(BATCH, T, generator=gen) < 0.25] = -1  # positions without a loss
        opt.zero_grad()
        loss = loss_of(w, ids, targets)
        loss.backward()
        if first_gradients is None:
            first_gradients = {k: values(v.grad) for k, v in w.items()}
        opt.step()
        batches.append({"ids": ids.tolist(), "targets": targets.tolist()})
        losses.append(float(loss))
    doc = {"shape": SHAPE, "optimizer": OPT, "initial": initial, "batches": batches,
           "first_gradients": first_gradients, "losses": losses}
    text = json.dumps(doc, separators=(",", ":"), default=float)
    # Seventeen significant digits are more than the test needs: round to 10.
    import re
    text = re.sub(r"-?\d+\.\d+(?:e-?\d+)?", lambda m: format(float(m.group(0)), ".10g"), text)
    with open(OUT, "w") as f:
        f.write(text + "\n")
    print(f"wrote {OUT} ({len(text)} bytes), loss {losses[0]:.4f} → {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
