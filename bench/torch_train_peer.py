#!/usr/bin/python3
"""PyTorch eager float32 peer of `attention-lab-cli bench --train`: the same
tiny GPT-2 (learned positions, pre-LayerNorm blocks, GELU tanh, the head tied
to the token embeddings) trained with torch.optim.AdamW on random batches,
timed as the CLI times its own steps (a step: forward, cross-entropy,
backward, AdamW; median of runs of STEPS steps after a warm-up).

    /usr/bin/python3 bench/torch_train_peer.py --layers 2 --heads 4 --d 64 --T 32 --batch 16 --vocab 64 \
        [--steps 20] [--runs 5] [--threads 2] [--json]

The model is written with torch.nn.functional ops as the app's TinyGpt
computes it (tests/golden/generate_tiny_gpt.py checks the same arithmetic in
float64). BLAS: see torch_gpt2_peer.py (unset OPENBLAS_CORETYPE and
OPENBLAS_L2_SIZE for a benchmark run; the BLAS in use is printed).
"""

import argparse
import json
import math
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def make_params(L, d, f, V, T):
    g = torch.Generator().manual_seed(1)
    n = lambda *s: (torch.randn(*s, generator=g) * 0.02).requires_grad_(True)
    ones = lambda k: torch.ones(k, requires_grad=True)
    zeros = lambda k: torch.zeros(k, requires_grad=True)
    p = {"wte": n(V, d), "wpe": n(T, d), "lnf_w": ones(d), "lnf_b": zeros(d)}
    for l in range(L):
        p.update({f"{l}.ln1_w": ones(d), f"{l}.ln1_b": zeros(d), f"{l}.attn_w": n(d, 3 * d), f"{l}.attn_b": zeros(3 * d),
                  f"{l}.proj_w": n(d, d), f"{l}.proj_b": zeros(d), f"{l}.ln2_w": ones(d), f"{l}.ln2_b": zeros(d),
                  f"{l}.fc_w": n(d, f), f"{l}.fc_b": zeros(f), f"{l}.fcp_w": n(f, d), f"{l}.fcp_b": zeros(d)})
    return p


def loss_of(p, ids, targets, L, H, d):
    B, T = ids.shape
    dh = d // H
    x = p["wte"][ids] + p["wpe"][:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    for l in range(L):
        h = F.layer_norm(x, (d,), p[f"{l}.ln1_w"], p[f"{l}.ln1_b"])
        q, k, v = (h @ p[f"{l}.attn_w"] + p[f"{l}.attn_b"]).split(d, dim=2)
        q, k, v = (t.view(B, T, H, dh).transpose(1, 2) for t in (q, k, v))
        a = ((q @ k.transpose(-1, -2)) / math.sqrt(dh)).masked_fill(mask, float("-inf")).softmax(-1)
        x = x + (a @ v).transpose(1, 2).reshape(B, T, d) @ p[f"{l}.proj_w"] + p[f"{l}.proj_b"]
        h = F.layer_norm(x, (d,), p[f"{l}.ln2_w"], p[f"{l}.ln2_b"])
        x = x + F.gelu(h @ p[f"{l}.fc_w"] + p[f"{l}.fc_b"], approximate="tanh") @ p[f"{l}.fcp_w"] + p[f"{l}.fcp_b"]
    logits = F.layer_norm(x, (d,), p["lnf_w"], p["lnf_b"]) @ p["wte"].T
    return F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1))


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 2), ("heads", 4), ("d", 64), ("T", 32), ("batch", 16), ("vocab", 64), ("steps", 20),
                          ("runs", 5), ("threads", 2)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    p = make_params(a.layers, a.d, 4 * a.d, a.vocab, a.T)
    decay = [v for k, v in p.items() if k.endswith(("_w", "wte", "wpe")) and "ln" not in k]
    rest = [v for k, v in p.items() if not (k.endswith(("_w", "wte", "wpe")) and "ln" not in k)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.98))
    g = torch.Generator().manual_seed(2)
    batches = [(torch.randint(0, a.vocab, (a.batch, a.T), generator=g), torch.randint(0, a.vocab, (a.batch, a.T), generator=g))
               for _ in range(8)]

    def steps(n):
        for i in range(n):
            ids, targets = batches[i % len(batches)]
            opt.zero_grad(set_to_none=True)
            loss = loss_of(p, ids, targets, a.layers, a.heads, a.d)
            loss.backward()
            opt.step()
        return float(loss)

    steps(5)  # warm-up
    times = []
    for _ in range(a.runs):
        start = time.perf_counter()
        steps(a.steps)
        times.append((time.perf_counter() - start) / a.steps)
    step_ms = statistics.median(times) * 1e3
    # The BLAS library this process loaded (Debian's torch calls whatever libblas.so.3 resolves to).
    with open("/proc/self/maps") as maps:
        libs = {line.split()[-1].rsplit("/", 1)[-1] for line in maps if "blas" in line}
    blas = ", ".join(sorted(libs)) or "none loaded"
    result = {"peer": "pytorch", "torch": torch.__version__, "threads": a.threads, "blas": blas, "step_ms": round(step_ms, 4),
              "steps_per_s": round(1e3 / step_ms, 2)}
    print(json.dumps(result) if a.json else f"pytorch {torch.__version__}: {step_ms:.3f} ms a step, "
          f"{1e3 / step_ms:.1f} steps/s ({a.threads} threads, {blas})")


if __name__ == "__main__":
    sys.exit(main())
