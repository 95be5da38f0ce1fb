#!/usr/bin/python3
"""Writes tests/models/fixtures/gpt2-conv1d/gradients.json: the gradient of
the language-model loss of the fixture's GPT-2 on generate_models.IDS, by
PyTorch autograd in float64 from the stored weights.

    /usr/bin/python3 tests/models/generate_model_gradients.py

The loss is what transformers' GPT2LMHeadModel computes with labels = the
ids: the mean cross-entropy of each position's next token (T - 1 positions).
For every layer: dL/d(attention output) (T x d_model, the residual sum's
addend), dL/d(its normed input X), dL/dW_q (the query block of c_attn) and
dL/d(each head's attention weights). And once more with layer 1's attention
output edited (one cell moved by EDIT_ADD): the later layers run from the
edited output, as the app runs them.
"""

import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate_models as gm  # noqa: E402

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "gpt2-conv1d")
EDIT_LAYER, EDIT_ROW, EDIT_COL, EDIT_ADD = 1, 2, 3, 0.5


def load(folder):
    cfg = json.load(open(os.path.join(folder, "config.json")))
    raw = gm.read_safetensors(os.path.join(folder, "model.safetensors"))
    w = {name: torch.from_numpy(gm.decode(r, dt, shape)) for name, (dt, shape, r) in raw.items()}
    return cfg, w


def forward(cfg, w, ids, edit=None):
    """-> loss and, per layer, the tensors whose gradients are written."""
    T, D, H = len(ids), cfg["n_embd"], cfg["n_head"]
    dh, eps = D // H, cfg["layer_norm_epsilon"]
    x = (w["wte.weight"][ids] + w["wpe.weight"][:T]).requires_grad_(True)  # a leaf: every later tensor has a gradient
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool))
    layers = []
    for l in range(cfg["n_layer"]):
        p = "h.%d." % l
        a = F.layer_norm(x, (D,), w[p + "ln_1.weight"], w[p + "ln_1.bias"], eps)
        a.retain_grad()
        W_attn = w[p + "attn.c_attn.weight"].clone().requires_grad_(True)
        qkv = a @ W_attn + w[p + "attn.c_attn.bias"]
        q, k, v = qkv.split(D, dim=1)
        heads, contexts = [], []
        for h in range(H):
            sl = slice(h * dh, (h + 1) * dh)
            s = (q[:, sl] @ k[:, sl].T) / dh ** 0.5
            s = s.masked_fill(~causal, float("-inf"))
            weights = torch.softmax(s, dim=-1)
            weights.retain_grad()
            heads.append(weights)
            contexts.append(weights @ v[:, sl])
        attn_out = torch.cat(contexts, dim=1) @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
        if edit is not None and l == edit:
            moved = attn_out.detach().clone()
            moved[EDIT_ROW, EDIT_COL] += EDIT_ADD
            attn_out = moved.requires_grad_(True)
        else:
            attn_out.retain_grad()
        mid = x + attn_out
        m = F.layer_norm(mid, (D,), w[p + "ln_2.weight"], w[p + "ln_2.bias"], eps)
        act = F.gelu(m @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"], approximate="tanh")
        x = mid + act @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
        layers.append({"attention_out": attn_out, "X": a, "W_attn": W_attn, "weights": heads})
    f = F.layer_norm(x, (D,), w["ln_f.weight"], w["ln_f.bias"], eps)
    logits = f @ w["wte.weight"].T
    loss = F.cross_entropy(logits[:-1], torch.tensor(ids[1:]))
    return loss, layers


def grads(cfg, w, ids, edit=None):
    loss, layers = forward(cfg, w, ids, edit)
    loss.backward()
    D = cfg["n_embd"]
    out = {"loss": loss.item(), "layers": []}
    for l, t in enumerate(layers):
        entry = {"d_attention_out": t["attention_out"].grad.tolist()}
        if edit is None:
            entry.update({"d_X": t["X"].grad.tolist(), "d_W_q": t["W_attn"].grad[:, :D].tolist(),
                          "d_weights": [h.grad.tolist() for h in t["weights"]]})
        out["layers"].append(entry)
    return out


def main():
    torch.set_num_threads(1)
    cfg, w = load(FIXTURE)
    ids = gm.IDS
    doc = {"ids": ids, **grads(cfg, w, ids)}
    # the same, with the attention output of EDIT_LAYER moved in one cell: only
    # the layers from it on see the change, so its and the later layers' gradients are written
    edited = grads(cfg, w, ids, edit=EDIT_LAYER)
    doc["edited"] = {"layer": EDIT_LAYER, "row": EDIT_ROW, "col": EDIT_COL, "add": EDIT_ADD,
                     "loss": edited["loss"], "d_attention_out": edited["layers"][EDIT_LAYER]["d_attention_out"]}
    path = os.path.join(FIXTURE, "gradients.json")
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")
    print("wrote", path, os.path.getsize(path), "bytes; loss", doc["loss"])


if __name__ == "__main__":
    main()
