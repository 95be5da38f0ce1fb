#!/usr/bin/env python3
"""Float64 references of the interpretability operations, for kjv-gpt2
(../shared/models/kjv-gpt2), from what transformers computed in float64 on
its prompt (reference.expected.json.gz beside the model).

The head detectors: every head's attention weights scored with
TransformerLens's head_detector definitions, written here as that module
does (its detection patterns from the token ids, error measure "mul", no
position excluded; tokens as given, no BOS added):

  previous token:  zeros, then eye(T - 1) below the diagonal, tril
  duplicate token: ids equal, diagonal cleared, tril
  induction:       the duplicate pattern rolled one key right, first column
                   cleared, tril
  score:           (attention * pattern).sum() / attention.sum()

The logit lens: the last token's hidden state after each layer (hidden
states 0 … L − 1; the last one transformers gives is already normed) through
ln_f and the tied unembedding (the model's F16 weights read from
model.safetensors), its top 5 tokens with their logits and probabilities.

Writes tests/interp/kjv_detect_heads.json and kjv_logit_lens.json. Needs
Debian's PyTorch:
    /usr/bin/python3 tests/interp/make_interp_reference.py
"""
import gzip
import json
import os
import struct

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "..", "..", "..", "shared", "models", "kjv-gpt2")


def previous_token_pattern(tokens):
    p = torch.zeros(tokens.shape[-1], tokens.shape[-1], dtype=torch.float64)
    p[1:, :-1] = torch.eye(tokens.shape[-1] - 1, dtype=torch.float64)
    return torch.tril(p)


def duplicate_token_pattern(tokens):
    token_pattern = tokens.repeat(tokens.shape[-1], 1).numpy()
    eq_mask = np.equal(token_pattern, token_pattern.T).astype(int)
    np.fill_diagonal(eq_mask, 0)
    return torch.tril(torch.as_tensor(eq_mask).double())


def induction_pattern(tokens):
    duplicate = duplicate_token_pattern(tokens)
    shifted = torch.roll(duplicate, shifts=1, dims=1)
    zeros = torch.zeros(duplicate.shape[0], 1, dtype=torch.float64)
    return torch.tril(torch.cat((zeros, shifted[:, 1:]), dim=1))


def score(attention, pattern):
    return ((attention * pattern).sum() / attention.sum()).item()


def read_safetensors_f16(path, names):
    """The named F16 tensors of a safetensors file, as float64 numpy arrays."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        out = {}
        for name in names:
            t = header[name]
            assert t["dtype"] == "F16", (name, t["dtype"])
            begin, end = t["data_offsets"]
            f.seek(8 + n + begin)
            out[name] = np.frombuffer(f.read(end - begin), dtype="<f2").astype(np.float64).reshape(t["shape"])
    return out


def logit_lens(ref, top=5):
    w = read_safetensors_f16(os.path.join(MODEL, "model.safetensors"),
                             ["transformer.ln_f.weight", "transformer.ln_f.bias", "transformer.wte.weight"])
    with open(os.path.join(MODEL, "config.json")) as f:
        eps = json.load(f)["layer_norm_epsilon"]
    hidden = [np.array(h, dtype=np.float64)[-1] for h in ref["hidden_states"]]  # the last token's row
    layers = []
    for after, h in enumerate(hidden):
        if after < len(hidden) - 1:  # transformers' last hidden state is already ln_f(h)
            h = torch.nn.functional.layer_norm(torch.tensor(h), h.shape, torch.tensor(w["transformer.ln_f.weight"]),
                                               torch.tensor(w["transformer.ln_f.bias"]), eps).numpy()
        z = w["transformer.wte.weight"] @ h
        p = np.exp(z - z.max())
        p /= p.sum()
        order = np.argsort(-z, kind="stable")[:top]
        layers.append({"after": after, "top": [{"id": int(i), "logit": float(z[i]), "p": float(p[i])} for i in order]})
    return {"text": ref["text"], "ids": ref["ids"], "row": len(ref["ids"]) - 1, "layers": layers}


def main():
    with gzip.open(os.path.join(MODEL, "reference.expected.json.gz")) as f:
        ref = json.load(f)
    tokens = torch.tensor(ref["ids"])
    patterns = {"previous_token": previous_token_pattern(tokens), "duplicate_token": duplicate_token_pattern(tokens),
                "induction": induction_pattern(tokens)}
    attentions = [torch.tensor(layer, dtype=torch.float64) for layer in ref["attentions"]]  # [heads, T, T] each
    out = {"text": ref["text"], "ids": ref["ids"], "scores": {}}
    for name, p in patterns.items():
        out["scores"][name] = [[score(layer[h], p) for h in range(layer.shape[0])] for layer in attentions]
    with open(os.path.join(HERE, "kjv_detect_heads.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    lens = logit_lens(ref)
    assert lens["layers"][-1]["top"][0]["id"] == ref["greedy_20"][0]  # the model's own prediction
    with open(os.path.join(HERE, "kjv_logit_lens.json"), "w") as f:
        json.dump(lens, f, indent=1)
        f.write("\n")
    for l in lens["layers"]:
        print("after %d layers: %s" % (l["after"], [(t["id"], round(t["p"], 4)) for t in l["top"]]))
    for name, rows in out["scores"].items():
        best = max((v, l, h) for l, row in enumerate(rows) for h, v in enumerate(row))
        print("%-16s most: layer %d head %d (%.4f)" % (name, best[1], best[2], best[0]))


if __name__ == "__main__":
    main()
