#!/usr/bin/env python3
"""Float64 references of ablation, activation patching, direct logit
attribution, the logit lens and the head detectors, written from
TransformerLens's definitions:

- hooks as TransformerLens places them: hook_z (each head's context before
  W_o), hook_q/k/v (after the projections' biases, before RoPE),
  hook_pattern (the softmax), hook_attn_out / hook_mlp_out (what each adds
  to the residual stream), hook_resid_pre (a layer's input);
- ablation: the hooked activation at every position (or at one) replaced by
  zero or by its mean over the prompt's positions;
- patching (transformer_lens.patching): the corrupted run with one clean
  activation put in place — resid_pre / attn_out / mlp_out per layer ×
  position, z / q / k / v / pattern per layer × head at every position, z per
  layer × position × head — measured by the logit difference of two answer
  tokens (or the probability of one) at the last position, normalised
  (m − corrupted) / (clean − corrupted);
- direct logit attribution (ActivationCache.apply_ln_to_stack): every head's
  result, every W_o bias, every MLP output and the embeddings, each centred
  (LayerNorm) and divided by the final residual's own norm scale, through
  ln_f's gain and the answer token's unembedding column (minus the wrong
  one's);
- the logit lens (accumulated_resid through the final norm and the
  unembedding): the five likeliest tokens after each layer, and the wrong
  token's probability and rank;
- head detectors (head_detector.detect_head, error measure "mul"): every
  head's previous-token, duplicate-token and induction score on the clean
  prompt and on its first six tokens twice.

The forward is a plain float64 numpy GPT-2 / Llama written here, checked
first against transformers' own hidden states of each model (its reference
file) to 1e-9 where transformers ran in float64 (1e-4 where in float32).

Models: ../shared/models/kjv-gpt2, and the transformers-written gpt2 and
llama-plain (grouped-query: 4 heads, 2 K/V heads) fixtures. Writes
tests/interp/interventions_<model>.json. Needs numpy (and Debian's python3):
    /usr/bin/python3 tests/interp/make_intervention_reference.py
"""
import gzip
import json
import math
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
from generate_models import read_safetensors, decode  # noqa: E402

SHARED = os.path.join(HERE, "..", "..", "..", "shared")
MODELS = {
    "kjv-gpt2": (os.path.join(SHARED, "models", "kjv-gpt2"), "reference.expected.json.gz"),
    "gpt2": (os.path.join(SHARED, "fixtures", "hf-transformers", "gpt2"), None),
    "llama-plain": (os.path.join(SHARED, "fixtures", "hf-transformers", "llama-plain"), None),
}


def load(folder):
    raw = read_safetensors(os.path.join(folder, "model.safetensors"))
    w = {name: decode(b, dt, shape) for name, (dt, shape, b) in raw.items()}
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    return w, cfg


def layer_norm(x, w, b, eps):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class Model:
    """A float64 forward with TransformerLens's hook points. `hooks` maps a
    hook name ("blocks.L.attn.hook_z", …) to a function of the activation
    (a numpy array, changed in place or returned)."""

    def __init__(self, folder):
        self.w, self.cfg = load(folder)
        self.gpt2 = self.cfg["model_type"] == "gpt2"
        c = self.cfg
        if self.gpt2:
            self.L, self.H, self.d = c["n_layer"], c["n_head"], c["n_embd"]
            self.KV, self.eps = self.H, c["layer_norm_epsilon"]
            self.dh = self.d // self.H
        else:
            self.L, self.H, self.d = c["num_hidden_layers"], c["num_attention_heads"], c["hidden_size"]
            self.KV, self.eps = c["num_key_value_heads"], c["rms_norm_eps"]
            self.dh = c.get("head_dim") or self.d // self.H
            self.theta = c["rope_parameters"]["rope_theta"]

    def unembedding(self):
        w = self.w
        if self.gpt2:
            return w["transformer.wte.weight"]  # tied
        return w["lm_head.weight"]

    def final_norm(self, x):
        w = self.w
        if self.gpt2:
            return layer_norm(x, w["transformer.ln_f.weight"], w["transformer.ln_f.bias"], self.eps)
        return rms_norm(x, w["model.norm.weight"], self.eps)

    def rope(self, x, n):
        T = x.shape[0]
        half = self.dh // 2
        inv = 1.0 / (self.theta ** (np.arange(0, self.dh, 2, dtype=np.float64) / self.dh))
        ang = np.outer(np.arange(T, dtype=np.float64), inv)
        cos, sin = np.cos(ang), np.sin(ang)
        out = x.copy()
        for h in range(n):
            a = x[:, h * self.dh:h * self.dh + half]
            b = x[:, h * self.dh + half:(h + 1) * self.dh]
            out[:, h * self.dh:h * self.dh + half] = a * cos - b * sin
            out[:, h * self.dh + half:(h + 1) * self.dh] = b * cos + a * sin
        return out

    def run(self, ids, hooks=None, cache=None):
        """-> last layer output (T × d); cache (a dict) gets every hook's value."""
        hooks = hooks or {}
        w, T = self.w, len(ids)

        def hook(name, x):
            if name in hooks:
                r = hooks[name](x)
                x = x if r is None else r
            if cache is not None:
                cache[name] = x.copy()
            return x

        if self.gpt2:
            x = w["transformer.wte.weight"][ids] + w["transformer.wpe.weight"][:T]
        else:
            x = w["model.embed_tokens.weight"][ids].copy()
        x = hook("hook_embed", x)
        mask = np.tril(np.ones((T, T), dtype=bool))
        for l in range(self.L):
            x = hook("blocks.%d.hook_resid_pre" % l, x)
            if self.gpt2:
                p = "transformer.h.%d." % l
                n = layer_norm(x, w[p + "ln_1.weight"], w[p + "ln_1.bias"], self.eps)
                qkv = n @ w[p + "attn.c_attn.weight"] + w[p + "attn.c_attn.bias"]
                q, k, v = qkv[:, :self.d], qkv[:, self.d:2 * self.d], qkv[:, 2 * self.d:]
            else:
                p = "model.layers.%d." % l
                n = rms_norm(x, w[p + "input_layernorm.weight"], self.eps)
                q = n @ w[p + "self_attn.q_proj.weight"].T
                k = n @ w[p + "self_attn.k_proj.weight"].T
                v = n @ w[p + "self_attn.v_proj.weight"].T
            q = hook("blocks.%d.attn.hook_q" % l, q)
            k = hook("blocks.%d.attn.hook_k" % l, k)
            v = hook("blocks.%d.attn.hook_v" % l, v)
            if not self.gpt2:
                q, k = self.rope(q, self.H), self.rope(k, self.KV)
            z = np.zeros((T, self.H * self.dh))
            patterns = np.zeros((self.H, T, T))
            for h in range(self.H):
                g = h // (self.H // self.KV)
                qs = q[:, h * self.dh:(h + 1) * self.dh]
                ks = k[:, g * self.dh:(g + 1) * self.dh]
                s = qs @ ks.T / math.sqrt(self.dh)
                s = np.where(mask, s, -np.inf)
                patterns[h] = softmax(s)
            patterns = hook("blocks.%d.attn.hook_pattern" % l, patterns)
            for h in range(self.H):
                g = h // (self.H // self.KV)
                z[:, h * self.dh:(h + 1) * self.dh] = patterns[h] @ v[:, g * self.dh:(g + 1) * self.dh]
            z = hook("blocks.%d.attn.hook_z" % l, z)
            if self.gpt2:
                a = z @ w[p + "attn.c_proj.weight"] + w[p + "attn.c_proj.bias"]
            else:
                a = z @ w[p + "self_attn.o_proj.weight"].T
            a = hook("blocks.%d.hook_attn_out" % l, a)
            x = x + a
            if self.gpt2:
                n = layer_norm(x, w[p + "ln_2.weight"], w[p + "ln_2.bias"], self.eps)
                hdn = n @ w[p + "mlp.c_fc.weight"] + w[p + "mlp.c_fc.bias"]
                hdn = 0.5 * hdn * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (hdn + 0.044715 * hdn ** 3)))
                m = hdn @ w[p + "mlp.c_proj.weight"] + w[p + "mlp.c_proj.bias"]
            else:
                n = rms_norm(x, w[p + "post_attention_layernorm.weight"], self.eps)
                gate = n @ w[p + "mlp.gate_proj.weight"].T
                m = (gate / (1.0 + np.exp(-gate)) * (n @ w[p + "mlp.up_proj.weight"].T)) @ w[p + "mlp.down_proj.weight"].T
            m = hook("blocks.%d.hook_mlp_out" % l, m)
            x = x + m
        return hook("hook_resid_final", x)

    def logits(self, out, row=-1):
        return self.final_norm(out[row]) @ self.unembedding().T

    def o_weight(self, l):
        if self.gpt2:
            return self.w["transformer.h.%d.attn.c_proj.weight" % l]  # [in, out]
        return self.w["model.layers.%d.self_attn.o_proj.weight" % l].T

    def o_bias(self, l):
        return self.w.get("transformer.h.%d.attn.c_proj.bias" % l) if self.gpt2 else None


def check_forward(model, folder, expected_name):
    """The float64 forward against transformers' own hidden states."""
    path = os.path.join(folder, expected_name) if expected_name else folder + ".expected.json.gz"
    with gzip.open(path) as f:
        ref = json.load(f)
    cache = {}
    out = model.run(ref["ids"], cache=cache)
    worst = 0.0
    for l in range(model.L):
        worst = max(worst, np.abs(cache["blocks.%d.hook_resid_pre" % l] - np.array(ref["hidden_states"][l])).max())
    logits = np.array([model.final_norm(r) @ model.unembedding().T for r in out])
    worst = max(worst, np.abs(logits - np.array(ref["logits"])).max())
    # transformers ran some fixtures in float32 (its "dtype" says which)
    assert worst < (1e-9 if ref.get("dtype", "torch.float64") == "torch.float64" else 1e-4), (folder, worst)
    return ref["ids"]


def metric_of(logits, metric):
    if metric["kind"] == "logit_diff":
        return logits[metric["answer"]] - logits[metric["wrong"]]
    p = softmax(logits)
    return p[metric["answer"]]


def mean_rows(x):
    return np.broadcast_to(x.mean(0), x.shape).copy()


def ablation_cases(model):
    last = model.L - 1
    return [
        {"target": "head", "mode": "zero", "layer": 0, "head": 1, "position": -1},
        {"target": "head", "mode": "mean", "layer": last, "head": model.H - 1, "position": -1},
        # one position of layer 0 (at the last layer only that row would change, not the last one)
        {"target": "head", "mode": "zero", "layer": 0, "head": 0, "position": 3},
        {"target": "attention", "mode": "zero", "layer": 0, "head": 0, "position": -1},
        {"target": "attention", "mode": "mean", "layer": 0, "head": 0, "position": 2},
        {"target": "mlp", "mode": "zero", "layer": 0, "head": 0, "position": -1},
        {"target": "mlp", "mode": "mean", "layer": last, "head": 0, "position": -1},
    ]


def ablate(model, ids, case, clean_cache):
    l, h, pos, dh = case["layer"], case["head"], case["position"], model.dh
    rows = slice(None) if pos < 0 else slice(pos, pos + 1)
    if case["target"] == "head":
        name = "blocks.%d.attn.hook_z" % l
        cols = slice(h * dh, (h + 1) * dh)
    else:
        name = "blocks.%d.hook_%s" % (l, "attn_out" if case["target"] == "attention" else "mlp_out")
        cols = slice(None)
    mean = clean_cache[name].mean(0)

    def f(x):
        x[rows, cols] = 0.0 if case["mode"] == "zero" else mean[cols]

    return model.logits(model.run(ids, hooks={name: f}))


def sweep(model, clean, corrupted, kind, metric):
    cc, kc = {}, {}
    clean_m = metric_of(model.logits(model.run(clean, cache=cc)), metric)
    corr_m = metric_of(model.logits(model.run(corrupted, cache=kc)), metric)
    T, dh = len(clean), model.dh
    out = []
    for l in range(model.L):
        row = []
        if kind in ("resid_pre", "attn_out", "mlp_out"):
            name = "blocks.%d.hook_%s" % (l, kind)
            items = [(name, (p, slice(None))) for p in range(T)]
        elif kind in ("z", "q", "k", "v"):
            n = model.KV if kind in ("k", "v") else model.H
            name = "blocks.%d.attn.hook_%s" % (l, kind)
            items = [(name, (slice(None), slice(h * dh, (h + 1) * dh))) for h in range(n)]
        elif kind == "pattern":
            name = "blocks.%d.attn.hook_pattern" % l
            items = [(name, (h,)) for h in range(model.H)]
        else:  # z_by_position: column p·heads + h
            name = "blocks.%d.attn.hook_z" % l
            items = [(name, (p, slice(h * dh, (h + 1) * dh))) for p in range(T) for h in range(model.H)]
        for name, index in items:
            def f(x, name=name, index=index):
                x[index] = cc[name][index]
            m = metric_of(model.logits(model.run(corrupted, hooks={name: f})), metric)
            row.append((m - corr_m) / (clean_m - corr_m))
        out.append(row)
    return {"kind": kind, "clean": clean_m, "corrupted": corr_m, "normalised": out}


def attribution(model, ids, row, token, minus):
    cache = {}
    out = model.run(ids, cache=cache)
    u = model.unembedding()[token] - (model.unembedding()[minus] if minus >= 0 else 0.0)
    x = out[row]
    if model.gpt2:
        scale = 1.0 / np.sqrt(((x - x.mean()) ** 2).mean() + model.eps)
        gain, bias = model.w["transformer.ln_f.weight"], model.w["transformer.ln_f.bias"]
        centre = lambda p: p - p.mean()  # noqa: E731
    else:
        scale = 1.0 / np.sqrt((x * x).mean() + model.eps)
        gain, bias = model.w["model.norm.weight"], None
        centre = lambda p: p  # noqa: E731
    through = lambda p: float((centre(p) * scale * gain) @ u)  # noqa: E731
    heads = []
    for l in range(model.L):
        z = cache["blocks.%d.attn.hook_z" % l][row]
        wo = model.o_weight(l)
        heads.append([through(z[h * model.dh:(h + 1) * model.dh] @ wo[h * model.dh:(h + 1) * model.dh])
                      for h in range(model.H)])
    bo = [through(model.o_bias(l)) if model.o_bias(l) is not None else 0.0 for l in range(model.L)]
    mlp = [through(cache["blocks.%d.hook_mlp_out" % l][row]) for l in range(model.L)]
    embeddings = through(cache["hook_embed"][row])
    constant = float(bias @ u) if bias is not None else 0.0
    logit = float(model.final_norm(x) @ u)
    total = constant + embeddings + sum(map(sum, heads)) + sum(bo) + sum(mlp)
    assert abs(total - logit) < 1e-9 * max(1.0, abs(logit)), (total, logit)
    return {"row": row, "token": token, "minus": minus, "logit": logit, "constant": constant, "embeddings": embeddings,
            "heads": heads, "attention_bias": bo, "mlp": mlp}


def logit_lens(model, ids, row, k, track):
    """The residual stream after each layer (TransformerLens's
    accumulated_resid) through the final norm and the unembedding."""
    cache = {}
    out = model.run(ids, cache=cache)
    streams = [cache["blocks.%d.hook_resid_pre" % l][row] for l in range(model.L)] + [out[row]]
    layers = []
    for after, x in enumerate(streams):
        z = model.final_norm(x) @ model.unembedding().T
        p = np.exp(z - z.max())
        p /= p.sum()
        order = np.argsort(-z, kind="stable")[:k]
        rank = int(((z > z[track]) | ((z == z[track]) & (np.arange(len(z)) < track))).sum())
        layers.append({"after": after, "top": [{"id": int(i), "logit": float(z[i]), "p": float(p[i])} for i in order],
                       "tracked": {"id": track, "p": float(p[track]), "rank": rank}})
    return {"row": row, "layers": layers}


def detection_patterns(ids):
    """TransformerLens's head_detector patterns: previous token, duplicate
    token (j < i, same token) and induction (the duplicate pattern shifted
    one to the right, lower triangular)."""
    T = len(ids)
    prev = np.zeros((T, T))
    dup = np.zeros((T, T))
    for i in range(T):
        if i > 0:
            prev[i, i - 1] = 1.0
        for j in range(i):
            dup[i, j] = float(ids[j] == ids[i])
    ind = np.roll(dup, 1, axis=1)
    ind[:, 0] = 0.0
    ind = np.tril(ind)
    return {"previous_token": prev, "duplicate_token": dup, "induction": ind}


def detect_heads(model, ids):
    """detect_head with error measure "mul": Σ A⊙P / Σ A for every head."""
    cache = {}
    model.run(ids, cache=cache)
    patterns = detection_patterns(ids)
    out = {}
    for kind, P in patterns.items():
        out[kind] = [[float((cache["blocks.%d.attn.hook_pattern" % l][h] * P).sum() /
                            cache["blocks.%d.attn.hook_pattern" % l][h].sum())
                      for h in range(model.H)] for l in range(model.L)]
    return {"ids": list(ids), "scores": out}


def make(name):
    folder, expected = MODELS[name]
    model = Model(folder)
    ids = check_forward(model, folder, expected)
    clean = ids[:12]
    clean_logits = model.logits(model.run(clean))
    answer = int(np.argmax(clean_logits))
    # The corrupted prompt: tokens 4 and 9 replaced until the prediction changes.
    for swap in range(1, 200):
        corrupted = list(clean)
        corrupted[4] = (clean[4] + swap) % len(model.unembedding())
        corrupted[9] = (clean[9] + 3 * swap) % len(model.unembedding())
        wrong = int(np.argmax(model.logits(model.run(corrupted))))
        if wrong != answer:
            break
    logit_diff = {"kind": "logit_diff", "answer": answer, "wrong": wrong}
    probability = {"kind": "probability", "answer": answer, "wrong": 0}
    clean_cache = {}
    model.run(clean, cache=clean_cache)
    # The ablated logits of the clean run's 20 likeliest tokens (a whole row of
    # a 4096-token vocabulary per case would make the file large).
    watched = [int(i) for i in np.argsort(-clean_logits, kind="stable")[:20]]
    out = {"model": name, "clean": clean, "corrupted": corrupted, "metric": logit_diff, "watched": watched,
           "ablations": [dict(case, logits=ablate(model, clean, case, clean_cache)[watched].tolist())
                         for case in ablation_cases(model)],
           "unablated": clean_logits[watched].tolist(),
           "patching": [sweep(model, clean, corrupted, kind, logit_diff)
                        for kind in ("resid_pre", "attn_out", "mlp_out", "z", "q", "k", "v", "pattern", "z_by_position")],
           "patching_probability": sweep(model, clean, corrupted, "resid_pre", probability),
           "attribution": [attribution(model, clean, len(clean) - 1, answer, -1),
                           attribution(model, clean, 5, answer, wrong)],
           "logit_lens": logit_lens(model, clean, len(clean) - 1, 5, wrong),
           # The text itself, and its first six tokens twice (where induction shows).
           "detectors": [detect_heads(model, clean), detect_heads(model, clean[:6] + clean[:6])]}
    path = os.path.join(HERE, "interventions_%s.json" % name)
    with open(path, "w") as f:
        json.dump(out, f)
        f.write("\n")
    print("%s: answer %d, wrong %d, clean %.4f, corrupted %.4f -> %s (%d bytes)" % (
        name, answer, wrong, out["patching"][0]["clean"], out["patching"][0]["corrupted"], path, os.path.getsize(path)))


def main():
    for name in MODELS:
        make(name)


if __name__ == "__main__":
    main()
