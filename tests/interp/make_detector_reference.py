#!/usr/bin/env python3
"""The head detectors' float64 reference for kjv-gpt2 (../shared/models/kjv-gpt2).

Reads the prompt's ids and every head's attention weights that transformers
computed in float64 (reference.expected.json.gz beside the model) and scores
them with TransformerLens's head_detector definitions, written here as that
module does (its detection patterns from the token ids, error measure "mul",
no position excluded; tokens as given, no BOS added):

  previous token:  zeros, then eye(T - 1) below the diagonal, tril
  duplicate token: ids equal, diagonal cleared, tril
  induction:       the duplicate pattern rolled one key right, first column
                   cleared, tril
  score:           (attention * pattern).sum() / attention.sum()

Writes tests/interp/kjv_detect_heads.json. Needs Debian's PyTorch:
    /usr/bin/python3 tests/interp/make_detector_reference.py
"""
import gzip
import json
import os

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
    for name, rows in out["scores"].items():
        best = max((v, l, h) for l, row in enumerate(rows) for h, v in enumerate(row))
        print("%-16s most: layer %d head %d (%.4f)" % (name, best[1], best[2], best[0]))


if __name__ == "__main__":
    main()
