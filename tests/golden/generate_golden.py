#!/usr/bin/python3
"""Golden fixtures for the attention engine, from a float64 reference.

How to rerun (from the repository root, after building the CLI):

    /usr/bin/python3 tests/golden/generate_golden.py [--cli build/<dir>/bin/attention-lab-cli]

Use /usr/bin/python3: it has PyTorch (1.13) and NumPy; the `python3` on PATH may
not. Without --cli the newest build/*/bin/attention-lab-cli is used; it is only
needed to export the built-in presets. The output is deterministic (fixed seeds,
fixed case list): rerunning rewrites tests/golden/fixtures/ byte for byte unless
the presets or this script changed. Review the diff and commit it.

For every case it writes two files into tests/golden/fixtures/:

  <name>.scenario.json  the scenario, in the scenario file format the engine loads
  <name>.expected.json  every stage, in the trace format of `attention-lab-cli
                        trace` ("attention-lab/trace@1"), computed in float64 by
                        the reference below; -inf as the string "-inf"

All inputs are float32-representable: the engine stores float32, so the
reference computes from exactly the numbers the engine reads (it reads each
scenario file back and rounds every value through float32, as the loader does).

The reference follows the engine's math (tokens are rows):
  Q = X·W_q + b_q, K = X·W_k + b_k, V = X·W_v + b_v
  head i: Q_i, K_i, V_i = i-th column blocks (widths d_k, d_k, d_v)
  scores_i = Q_i·K_iᵀ; scaled_i = scores_i / √d_k (if scale) / temperature
  position_bias_i[q][k] = m_i·(k − q) with ALiBi's slopes (get_slopes below, from
    the paper's reference code); only with "alibi": true
  masked_i = scaled_i (+ position_bias_i) with -inf where the mask forbids
  weights_i = row softmax of masked_i (a row that is all -inf gives all 0); with
    "sinks" the row gets one more logit, sinks[i], whose share (sink_share_i,
    T x 1) is dropped: weights_i[q][k] = e^(masked) / (sum_k e^(masked) + e^(sink))
  context_i = weights_i·V_i; concat = [context_0 … context_{h-1}]
  output = concat·W_o + b_o (W_o and b_o each optional)
Where torch.nn.MultiheadAttention computes the same thing (d_k = d_v =
d_model/heads, a d_model × d_model W_o or none (identity out_proj), scale on,
temperature 1, every row allowed some key)
the reference is checked against it to 1e-10, and the script aborts otherwise.

The test that reads the fixtures is tests/core/golden_test.cpp; it needs no PyTorch.
"""

import argparse
import glob
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURES = os.path.join(HERE, "fixtures")
TRACE_FORMAT = "attention-lab/trace@1"
MAX_FIXTURE_BYTES = 60 * 1024
MHA_TOLERANCE = 1e-10

# The engine's warning for a query row the mask lets attend to nothing
# (core/src/attention/softmax.cpp describe(RowIssue::NoAllowedKey), core/src/attention/values.cpp collect_warnings).
NO_ALLOWED_KEY = "the mask allows no key, so its weights and context are 0 (PyTorch would give NaN)"

PRESETS = ["fat-cat", "book", "naive", "multi-head"]


# ---------------------------------------------------------------------------
# Reading scenarios exactly as the engine does


def f32(x):
    """x rounded to float32, as float64 (what the C++ loader's static_cast<float> gives)."""
    return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def load_scenario(path):
    """The scenario file as float64 arrays of float32 values, with the loader's defaults."""
    with open(path) as f:
        raw = json.load(f)
    heads = int(raw["heads"])
    s = {
        "X": f32(raw["X"]),
        "W_q": f32(raw["W_q"]),
        "W_k": f32(raw["W_k"]),
        "W_v": f32(raw["W_v"]),
        "heads": heads,
        "scale": raw.get("scale", True),
        "temperature": float(f32(raw.get("temperature", 1.0))),
        "tokens": raw.get("tokens"),
        "alibi": raw.get("alibi", False),
        "sinks": f32(raw["sinks"]) if "sinks" in raw else None,
        "kv_heads": int(raw.get("kv_heads", heads)),
        "X_kv": f32(raw["X_kv"]) if "X_kv" in raw else None,
        "rope": raw.get("rope"),
        "qk_norm": raw.get("qk_norm"),
        "softcap": float(f32(raw["softcap"])) if "softcap" in raw else None,
        "scale_factor": float(f32(raw["scale_factor"])) if "scale_factor" in raw else None,
    }
    if any(k in raw for k in ("b_q", "b_k", "b_v")):  # a missing one next to given ones is zero
        s["b_q"] = f32(raw["b_q"]) if "b_q" in raw else np.zeros(s["W_q"].shape[1])
        s["b_k"] = f32(raw["b_k"]) if "b_k" in raw else np.zeros(s["W_k"].shape[1])
        s["b_v"] = f32(raw["b_v"]) if "b_v" in raw else np.zeros(s["W_v"].shape[1])
    s["W_o"] = f32(raw["W_o"]) if "W_o" in raw else None
    s["b_o"] = f32(raw["b_o"]) if "b_o" in raw else None
    pins = raw.get("attention_lab", {}).get("pins", [])
    if pins:
        sys.exit(f"{path}: has pins; the reference does not model them")
    T = s["X"].shape[0]
    Tk = s["X_kv"].shape[0] if s["X_kv"] is not None else T
    mask = raw.get("mask", "none")
    if mask == "none":
        s["mask"] = np.ones((T, Tk))
    elif mask == "causal":
        s["mask"] = np.tril(np.ones((T, T)))
    elif isinstance(mask, dict):
        # A sliding window (Mistral's definition): key j allowed iff i - W < j <= i.
        W = int(mask["window"])
        s["mask"] = np.array([[1.0 if i - W < j <= i else 0.0 for j in range(T)] for i in range(T)])
    else:
        s["mask"] = np.asarray(mask, dtype=np.float64)
    s["mask_kind"] = mask if isinstance(mask, str) else "window" if isinstance(mask, dict) else "custom"
    return s


# ---------------------------------------------------------------------------
# The float64 reference


def softmax_rows(m):
    """Row softmax; a row with no finite entry (all -inf) gives all zeros."""
    out = np.zeros_like(m)
    for r in range(m.shape[0]):
        row = m[r]
        top = row.max()
        if top == -math.inf:
            continue
        e = np.exp(row - top)  # exp(-inf) = 0 exactly
        out[r] = e / e.sum()
    return out


def get_slopes(n):
    """ALiBi's head slopes, as in Press et al.'s reference code (ofirpress/attention_with_linear_biases)."""
    def get_slopes_power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        ratio = start
        return [start * ratio ** i for i in range(n)]
    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][:n - closest_power_of_2]


def rotate_half(x):
    """HF transformers' Llama rotate_half: (x1, x2) -> (-x2, x1) over the two halves of the last axis."""
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def rotate_every_two(x):
    """HF transformers' GPT-J rotate_every_two: each adjacent pair (a, b) -> (-b, a)."""
    x1, x2 = x[..., ::2], x[..., 1::2]
    return np.stack([-x2, x1], axis=-1).reshape(x.shape)


def apply_rope(x, rope, T):
    """One head's T x d_k queries or keys turned by RoPE as HF computes it: inv_freq = 1 / theta^(2i/d),
    angle = position * inv_freq; Llama repeats the angles over the two halves (rotate_half), GPT-J
    over adjacent pairs (repeat_interleave). With "dims" (GPT-NeoX's partial rotary) only the first
    dims columns turn, as a head that wide; the rest pass unchanged."""
    if rope.get("dims") and rope["dims"] < x.shape[1]:
        r = rope["dims"]
        return np.concatenate([apply_rope(x[:, :r], {**rope, "dims": None}, T), x[:, r:]], axis=1)
    d = x.shape[1]
    theta = float(f32(rope.get("theta", 10000.0)))
    inv_freq = 1.0 / (theta ** (np.arange(0, d, 2, dtype=np.float64) / d))
    freqs = np.outer(np.arange(T, dtype=np.float64), inv_freq)  # T x d/2
    if rope.get("pairs", "half") == "half":
        emb = np.concatenate([freqs, freqs], axis=-1)
        return x * np.cos(emb) + rotate_half(x) * np.sin(emb)
    emb = np.repeat(freqs, 2, axis=-1)
    return x * np.cos(emb) + rotate_every_two(x) * np.sin(emb)


def qk_norm(P, norm, which, blocks, d_k):
    """The q/k norm: RMSNorm (x / sqrt(mean(x^2) + eps) * g) of each head's d_k values
    (scope "head", one d_k gain shared by every head: Qwen3) or of the whole row
    (scope "whole": OLMo-2), in float64."""
    g = f32(norm[which])
    eps = float(f32(norm.get("eps", 1e-6)))
    if norm["scope"] == "whole":
        return P / np.sqrt((P * P).mean(axis=1, keepdims=True) + eps) * g
    parts = []
    for b in range(blocks):
        x = P[:, b * d_k:(b + 1) * d_k]
        parts.append(x / np.sqrt((x * x).mean(axis=1, keepdims=True) + eps) * g)
    return np.concatenate(parts, axis=1)


def reference(s):
    X, H = s["X"], s["heads"]
    KV = s["kv_heads"]
    T, d_model = X.shape
    d_k = s["W_q"].shape[1] // H
    d_v = s["W_v"].shape[1] // KV
    Xkv = s["X_kv"] if s["X_kv"] is not None else X  # cross-attention: keys and values from X_kv
    Tk = Xkv.shape[0]
    Q, K, V = X @ s["W_q"], Xkv @ s["W_k"], Xkv @ s["W_v"]
    if "b_q" in s:
        Q, K, V = Q + s["b_q"], K + s["b_k"], V + s["b_v"]
    Q_proj, K_proj = Q, K
    if s["qk_norm"] is not None:
        Q = qk_norm(Q, s["qk_norm"], "q", H, d_k)
        K = qk_norm(K, s["qk_norm"], "k", KV, d_k)
    Q_unrotated, K_unrotated = Q, K
    if s["rope"] is not None:
        Q = np.concatenate([apply_rope(Q[:, i * d_k:(i + 1) * d_k], s["rope"], T) for i in range(H)], axis=1)
        K = np.concatenate([apply_rope(K[:, g * d_k:(g + 1) * d_k], s["rope"], Tk) for g in range(KV)], axis=1)
    heads, contexts, warnings = [], [], []
    for i in range(H):
        g = i // (H // KV)  # HF's repeat_kv: query head i reads K/V head i // (H / KV)
        Qi, Ki = Q[:, i * d_k:(i + 1) * d_k], K[:, g * d_k:(g + 1) * d_k]
        Vi = V[:, g * d_v:(g + 1) * d_v]
        scores = Qi @ Ki.T
        if s["scale"] and s["scale_factor"] is not None:
            scaled = scores * s["scale_factor"]  # the scenario's own factor instead of 1/sqrt(d_k)
        else:
            scaled = scores / math.sqrt(d_k) if s["scale"] else scores.copy()
        scaled = scaled / s["temperature"]
        head = {}
        if s["softcap"] is not None:  # Gemma 2's soft-cap: c*tanh(scaled/c), before the bias and the mask
            head["capped"] = s["softcap"] * np.tanh(scaled / s["softcap"])
        if s["alibi"]:
            # The engine keeps each slope as a float32 and multiplies in float32;
            # the reference uses the same float32 slope, in float64 arithmetic.
            m = float(f32(get_slopes(H)[i]))
            bias = np.array([[m * (k - q) for k in range(Tk)] for q in range(T)])
            head["position_bias"] = bias
            scaled_plus = head.get("capped", scaled) + bias
        else:
            scaled_plus = head.get("capped", scaled)
        masked = np.where(s["mask"] != 0, scaled_plus, -math.inf)
        if s["sinks"] is not None:
            sink = float(s["sinks"][i])
            weights = np.zeros_like(masked)
            share = np.zeros((T, 1))
            for r in range(T):
                m = max(masked[r].max(), sink)
                e = np.exp(masked[r] - m)
                z = e.sum() + math.exp(sink - m)
                weights[r] = e / z
                share[r, 0] = math.exp(sink - m) / z
            head["sink_share"] = share
        else:
            weights = softmax_rows(masked)
        context = weights @ Vi
        for r in range(T):
            if not np.isfinite(masked[r]).any() and s["sinks"] is None:
                label = s["tokens"][r] if s["tokens"] and s["tokens"][r] else f"t{r}"
                warnings.append(f"head {i}, row {r} ('{label}'): {NO_ALLOWED_KEY}")
        if s["qk_norm"] is not None:
            head["Q_proj"] = Q_proj[:, i * d_k:(i + 1) * d_k]
            head["K_proj"] = K_proj[:, g * d_k:(g + 1) * d_k]
        if s["rope"] is not None:
            head["Q_unrotated"] = Q_unrotated[:, i * d_k:(i + 1) * d_k]
            head["K_unrotated"] = K_unrotated[:, g * d_k:(g + 1) * d_k]
        head.update({"Q": Qi, "K": Ki, "V": Vi, "scores": scores, "scaled": scaled, "masked": masked,
                     "weights": weights, "context": context})
        heads.append(head)
        contexts.append(context)
    concat = np.concatenate(contexts, axis=1)
    output = concat @ s["W_o"] if s["W_o"] is not None else concat.copy()
    if s["b_o"] is not None:
        output = output + s["b_o"]
    dims = {"T": T, "d_model": d_model, "heads": H}
    if KV != H:
        dims["kv_heads"] = KV
    dims.update({"d_k": d_k, "d_v": d_v, "d_out": output.shape[1]})
    if s["X_kv"] is not None:
        dims.update({"T_k": Tk, "d_kv": Xkv.shape[1]})
    ref = {"format": TRACE_FORMAT, "dims": dims, "X": X, "Q": Q, "K": K, "V": V, "heads": heads,
           "concat": concat, "output": output, "warnings": warnings}
    if s["X_kv"] is not None:
        ref["X_kv"] = Xkv
    if s["rope"] is not None:
        ref["Q_unrotated"], ref["K_unrotated"] = Q_unrotated, K_unrotated
    if s["qk_norm"] is not None:
        ref["Q_proj"], ref["K_proj"] = Q_proj, K_proj
    return ref


# ---------------------------------------------------------------------------
# Cross-check against torch.nn.MultiheadAttention


def mha_applies(s, ref):
    """nn.MultiheadAttention needs d_k = d_v = d_model/heads and a d_model × d_model out_proj: W_o, or
    none at all (then out_proj is the identity, which is the same math), scale on, temperature 1, and
    no fully masked row (PyTorch gives NaN there, the engine 0)."""
    d = ref["dims"]
    # (with cross-attention: kdim and vdim are X_kv's width, as nn.MultiheadAttention's kdim/vdim)
    return (d["d_k"] == d["d_v"] and d["d_k"] * d["heads"] == d["d_model"] and d["d_out"] == d["d_model"]
            and s["scale"] and s["temperature"] == 1.0 and (s["mask"] != 0).any(axis=1).all()
            and s["sinks"] is None  # PyTorch 1.13 has no sinks
            and s["kv_heads"] == d["heads"] and s["rope"] is None  # nor grouped K/V heads or RoPE
            and s["qk_norm"] is None and s["softcap"] is None and s["scale_factor"] is None)  # nor Gemma's or Granite's


def mha_check(s, ref):
    """Max abs difference between the reference and nn.MultiheadAttention (weights, output)."""
    d = ref["dims"]
    E, H = d["d_model"], d["heads"]
    cross = s["X_kv"] is not None
    kdim = s["X_kv"].shape[1] if cross else E
    mha = torch.nn.MultiheadAttention(E, H, dropout=0.0, bias=True, batch_first=True, kdim=kdim, vdim=kdim,
                                      dtype=torch.float64)
    mha.eval()
    zeros = np.zeros(E)
    with torch.no_grad():
        # nn.Linear computes x·Wᵀ + b, the engine x·W + b: the weights go in transposed.
        b_in = np.concatenate([s.get("b_q", zeros), s.get("b_k", zeros), s.get("b_v", zeros)])
        if mha._qkv_same_embed_dim:
            w_in = np.concatenate([s["W_q"].T, s["W_k"].T, s["W_v"].T], axis=0)
            mha.in_proj_weight.copy_(torch.from_numpy(w_in))
        else:  # kdim/vdim differ from E: separate projection weights
            mha.q_proj_weight.copy_(torch.from_numpy(s["W_q"].T.copy()))
            mha.k_proj_weight.copy_(torch.from_numpy(s["W_k"].T.copy()))
            mha.v_proj_weight.copy_(torch.from_numpy(s["W_v"].T.copy()))
        mha.in_proj_bias.copy_(torch.from_numpy(b_in))
        w_o = s["W_o"] if s["W_o"] is not None else np.eye(E)
        mha.out_proj.weight.copy_(torch.from_numpy(w_o.T.copy()))
        mha.out_proj.bias.copy_(torch.from_numpy(s["b_o"] if s["b_o"] is not None else zeros))
        x = torch.from_numpy(s["X"]).unsqueeze(0)
        kv = torch.from_numpy(s["X_kv"]).unsqueeze(0) if cross else x
        attn_mask = torch.from_numpy(s["mask"] == 0)  # True = may not attend
        if s["alibi"]:
            # ALiBi as PyTorch users add it: a float mask per head, added to the scaled scores.
            bias = np.stack([ref["heads"][i]["position_bias"] for i in range(H)])
            attn_mask = torch.from_numpy(np.where(s["mask"] == 0, -math.inf, bias).reshape(H, *s["mask"].shape))
        out, weights = mha(x, kv, kv, attn_mask=attn_mask, need_weights=True, average_attn_weights=False)
    diff_out = np.abs(out[0].numpy() - ref["output"]).max()
    diff_w = max(np.abs(weights[0, i].numpy() - ref["heads"][i]["weights"]).max() for i in range(H))
    return max(diff_out, diff_w)


# ---------------------------------------------------------------------------
# Writing files


def num(x):
    """A float64 in repr precision (round-trips exactly); non-finite as the trace's strings."""
    x = float(x)
    if math.isnan(x):
        return '"nan"'
    if math.isinf(x):
        return '"inf"' if x > 0 else '"-inf"'
    return repr(x)


def num32(x):
    """A float32 value in its shortest round-trip form (what the CLI writes)."""
    v = np.float32(x)
    text = str(v)
    if "e" not in text and "." in text and text.endswith(".0"):
        text = text[:-2]
    assert np.float32(float(text)) == v, (x, text)  # the loader reads double, then casts
    return text


def matrix_text(m, fmt, indent):
    pad = " " * (indent + 2)
    rows = [pad + "[" + ", ".join(fmt(v) for v in row) + "]" for row in np.atleast_2d(m)]
    return "[\n" + ",\n".join(rows) + "\n" + " " * indent + "]"


def row_text(v, fmt):
    return "[" + ", ".join(fmt(x) for x in v) + "]"


def trace_text(ref):
    d = ref["dims"]
    out = ["{", f'  "format": {json.dumps(ref["format"])},',
           '  "dims": {' + ", ".join(f'"{k}": {v}' for k, v in d.items()) + "},"]
    for k in ("X", "X_kv", "Q", "K", "V", "Q_unrotated", "K_unrotated", "Q_proj", "K_proj"):
        if k in ref:
            out.append(f'  "{k}": {matrix_text(ref[k], num, 2)},')
    heads = []
    for h in ref["heads"]:
        parts = [f'    "{k}": {matrix_text(h[k], num, 4)}'
                 for k in ("Q", "K", "V", "Q_unrotated", "K_unrotated", "Q_proj", "K_proj", "scores", "scaled", "capped", "position_bias", "masked", "weights", "sink_share",
                           "context")
                 if k in h]
        heads.append("{\n" + ",\n".join(parts) + "\n  }")
    out.append('  "heads": [' + ", ".join(heads) + "],")
    out.append(f'  "concat": {matrix_text(ref["concat"], num, 2)},')
    out.append(f'  "output": {matrix_text(ref["output"], num, 2)},')
    out.append('  "warnings": [' + ", ".join(json.dumps(w, ensure_ascii=False) for w in ref["warnings"]) + "]")
    out.append("}")
    return "\n".join(out) + "\n"


def scenario_text(c):
    """A random case (see random_cases) as a scenario file."""
    lines = ["{"]
    fields = [("title", json.dumps(c["title"])), ("description", json.dumps(c["description"])),
              ("tokens", json.dumps(c["tokens"])), ("heads", str(c["heads"]))]
    if c.get("kv_heads", c["heads"]) != c["heads"]:
        fields.append(("kv_heads", str(c["kv_heads"])))
    if c.get("rope") is not None:
        fields.append(("rope", json.dumps(c["rope"])))
    if c.get("qk_norm") is not None:
        n = c["qk_norm"]
        fields.append(("qk_norm", '{"scope": %s, "eps": %s, "q": %s, "k": %s}' % (
            json.dumps(n["scope"]), num32(n["eps"]), row_text(n["q"], num32), row_text(n["k"], num32))))
    if c.get("X_kv") is not None:
        fields.append(("tokens_kv", json.dumps([f"src{i}" for i in range(len(c["X_kv"]))])))
    mask = c["mask"]
    fields.append(("mask", json.dumps(mask) if isinstance(mask, (str, dict))
                   else matrix_text(mask, lambda v: str(int(v)), 2)))
    fields += [("scale", "true" if c["scale"] else "false"), ("temperature", num32(c["temperature"]))]
    if c.get("scale_factor") is not None:
        fields.append(("scale_factor", num32(c["scale_factor"])))
    if c.get("softcap") is not None:
        fields.append(("softcap", num32(c["softcap"])))
    if c.get("alibi"):
        fields.append(("alibi", "true"))
    if c.get("sinks") is not None:
        fields.append(("sinks", row_text(c["sinks"], num32)))
    for k in ("X", "X_kv", "W_q", "W_k", "W_v"):
        if c.get(k) is not None:
            fields.append((k, matrix_text(c[k], num32, 2)))
    for k in ("b_q", "b_k", "b_v"):
        if k in c:
            fields.append((k, row_text(c[k], num32)))
    if "W_o" in c:
        fields.append(("W_o", matrix_text(c["W_o"], num32, 2)))
    if "b_o" in c:
        fields.append(("b_o", row_text(c["b_o"], num32)))
    lines.append(",\n".join(f'  "{k}": {v}' for k, v in fields))
    lines.append("}")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# The cases


def random_case(seed, name, description, T, d_model, heads, d_k, d_v, *, mask="none", bias=False,
                w_o=None, b_o=False, scale=True, temperature=1.0, alibi=False, sinks=None, kv_heads=None,
                rope=None, T_k=None, d_kv=None, qk_norm=None, softcap=None, scale_factor=None):
    """A small scenario of float32-representable values drawn with a fixed seed.
    w_o: None (no W_o) or d_out."""
    rng = np.random.default_rng(seed)

    def draw(shape, spread):
        return f32(rng.uniform(-1.0, 1.0, size=shape) * spread)  # float64 draw, rounded to float32

    c = {"title": name, "description": description, "tokens": [f"tok{i}" for i in range(T)],
         "heads": heads, "mask": mask, "scale": scale, "temperature": temperature, "alibi": alibi,
         "sinks": f32(sinks) if sinks is not None else None,
         "kv_heads": kv_heads or heads, "rope": rope, "softcap": softcap, "scale_factor": scale_factor,
         "X": draw((T, d_model), 1.0)}
    if T_k is not None:  # cross-attention: keys and values from another sequence
        c["X_kv"] = draw((T_k, d_kv), 1.0)
    kv = kv_heads or heads
    spread = 1.7 / math.sqrt(d_model)  # projections O(1)
    src = d_kv if T_k is not None else d_model
    c["W_q"] = draw((d_model, heads * d_k), spread)
    c["W_k"] = draw((src, kv * d_k), 1.7 / math.sqrt(src))
    c["W_v"] = draw((src, kv * d_v), 1.7 / math.sqrt(src))
    if bias:
        c["b_q"], c["b_k"], c["b_v"] = (draw(heads * d_k, 0.3), draw(kv * d_k, 0.3), draw(kv * d_v, 0.3))
    if qk_norm is not None:  # "head" or "whole": gains around 1
        wq, wk = (heads * d_k, kv * d_k) if qk_norm == "whole" else (d_k, d_k)
        c["qk_norm"] = {"scope": qk_norm, "eps": 1e-6, "q": f32(1.0 + draw(wq, 0.5)), "k": f32(1.0 + draw(wk, 0.5))}
    if w_o is not None:
        c["W_o"] = draw((heads * d_v, w_o), 1.7 / math.sqrt(heads * d_v))
    if b_o:
        c["b_o"] = draw(w_o if w_o is not None else heads * d_v, 0.3)
    return c


def random_cases():
    gap_mask = np.ones((5, 5))
    gap_mask[2, :] = 0  # token 2 may attend to nothing: weights 0, context 0, a warning
    gap_mask[0, 3] = 0
    gap_mask[4, 1] = 0
    return [
        random_case(101, "mha_three_heads_biases_causal",
                    "Three heads of d_k = d_v = 2 over d_model = 6, all biases, square W_o and b_o, causal: "
                    "exactly nn.MultiheadAttention.",
                    T=5, d_model=6, heads=3, d_k=2, d_v=2, mask="causal", bias=True, w_o=6, b_o=True),
        random_case(102, "mha_two_heads_no_mask",
                    "Two heads, no mask, square W_o, no biases: nn.MultiheadAttention with zero biases.",
                    T=4, d_model=4, heads=2, d_k=2, d_v=2, w_o=4),
        random_case(103, "two_heads_dk3_dv2_wo_dout5",
                    "d_k = 3 differs from d_v = 2, biases, and W_o maps h*d_v = 4 to d_out = 5 (not d_model = 4).",
                    T=4, d_model=4, heads=2, d_k=3, d_v=2, mask="causal", bias=True, w_o=5, b_o=True),
        random_case(104, "output_bias_without_wo",
                    "Three heads of d_k = 2, d_v = 3 and no W_o: the output is concat + b_o.",
                    T=3, d_model=5, heads=3, d_k=2, d_v=3, b_o=True),
        random_case(105, "custom_mask_fully_masked_row",
                    "A custom mask where token 2 may attend to nothing: its weights and context are 0 and its "
                    "output is b_o alone.",
                    T=5, d_model=4, heads=2, d_k=2, d_v=3, mask=gap_mask, bias=True, w_o=4, b_o=True),
        random_case(106, "scale_off",
                    "Scaling by 1/sqrt(d_k) switched off: scaled = scores.",
                    T=4, d_model=3, heads=1, d_k=4, d_v=3, mask="causal", w_o=3),
        random_case(107, "temperature_half_sharpens",
                    "Temperature 0.5 doubles the scaled scores: sharper weights.",
                    T=4, d_model=4, heads=2, d_k=2, d_v=2, mask="causal", bias=True, w_o=4, temperature=0.5),
        random_case(108, "temperature_two_scale_off",
                    "Temperature 2 with scaling off: scaled = scores / 2, flatter weights.",
                    T=4, d_model=3, heads=1, d_k=3, d_v=2, scale=False, temperature=2.0),
        random_case(110, "sliding_window_of_two",
                    "A sliding window of 2: each token sees itself and the one before; two heads, biases, "
                    "square W_o and b_o, so nn.MultiheadAttention checks it too.",
                    T=6, d_model=4, heads=2, d_k=2, d_v=2, mask={"window": 2}, bias=True, w_o=4, b_o=True),
        random_case(111, "sliding_window_of_one",
                    "A window of 1: each token sees only itself, every weight on the diagonal is 1 and each "
                    "context is the token's own value.",
                    T=4, d_model=3, heads=1, d_k=2, d_v=3, mask={"window": 1}),
        random_case(112, "sliding_window_wider_than_text",
                    "A window of 9 over 5 tokens: the same numbers as a causal mask.",
                    T=5, d_model=4, heads=2, d_k=3, d_v=2, mask={"window": 9}, w_o=4),
        random_case(113, "alibi_four_heads_causal",
                    "ALiBi over four heads (slopes 1/4, 1/16, 1/64, 1/256), causal, biases, square W_o.",
                    T=7, d_model=8, heads=4, d_k=2, d_v=2, mask="causal", bias=True, w_o=8, alibi=True),
        random_case(114, "alibi_three_heads_no_mask",
                    "ALiBi over three heads (not a power of two: the paper's interleaved rule), no mask, so keys "
                    "after the query get a positive bias.",
                    T=5, d_model=6, heads=3, d_k=2, d_v=3, alibi=True),
        random_case(115, "alibi_window_temperature",
                    "ALiBi with a sliding window of 3 and temperature 0.5.",
                    T=6, d_model=4, heads=2, d_k=2, d_v=2, mask={"window": 3}, temperature=0.5, alibi=True, w_o=4),
        random_case(116, "sinks_three_heads_causal",
                    "Attention sinks of logits 0.5, -1 and 2 over three causal heads with biases and W_o: rows "
                    "sum to 1 minus the sink's share.",
                    T=6, d_model=6, heads=3, d_k=2, d_v=2, mask="causal", bias=True, w_o=6, sinks=[0.5, -1.0, 2.0]),
        random_case(117, "sinks_with_an_empty_row",
                    "A sink of logit 0 with a custom mask that leaves token 2 nothing: the sink takes the whole "
                    "row (share 1, weights 0) and no warning is given.",
                    T=5, d_model=4, heads=1, d_k=2, d_v=3, mask=np.array([[1, 0, 0, 0, 0], [1, 1, 0, 0, 0],
                                                                          [0, 0, 0, 0, 0], [1, 1, 1, 1, 0],
                                                                          [1, 0, 1, 0, 1]], dtype=float),
                    sinks=[0.0]),
        random_case(118, "gqa_four_heads_over_two",
                    "Grouped-query attention: four query heads share two K/V heads (heads 0-1 read K/V head 0, "
                    "2-3 read head 1, HF's repeat_kv), causal, biases, W_o.",
                    T=6, d_model=8, heads=4, d_k=2, d_v=3, mask="causal", bias=True, w_o=8, kv_heads=2),
        random_case(119, "mqa_three_heads_over_one",
                    "Multi-query attention: three query heads read one K/V head; no mask.",
                    T=5, d_model=6, heads=3, d_k=2, d_v=2, kv_heads=1, w_o=6, b_o=True),
        random_case(120, "rope_half_causal",
                    "RoPE with HF Llama's rotate_half pairing (dimension i with i + d_k/2), theta 10000, two "
                    "heads of d_k = 4, causal.",
                    T=7, d_model=6, heads=2, d_k=4, d_v=3, mask="causal", bias=True, w_o=6,
                    rope={"theta": 10000, "pairs": "half"}),
        random_case(121, "rope_interleaved_small_theta",
                    "RoPE with GPT-J's adjacent pairs and theta 100, so the angles turn fast over six positions; "
                    "no mask.",
                    T=6, d_model=4, heads=1, d_k=6, d_v=2, rope={"theta": 100, "pairs": "interleaved"}),
        random_case(122, "llama_like_gqa_rope_window",
                    "A Llama/Mistral-like layer: four query heads over two K/V heads, RoPE (rotate_half, theta "
                    "500000), a sliding window of 3 and W_o.",
                    T=8, d_model=8, heads=4, d_k=4, d_v=2, mask={"window": 3}, w_o=8, kv_heads=2,
                    rope={"theta": 500000, "pairs": "half"}),
        random_case(123, "gqa_rope_alibi_sinks",
                    "Everything together: two query heads over one K/V head, RoPE, ALiBi and sinks, causal.",
                    T=5, d_model=4, heads=2, d_k=2, d_v=2, mask="causal", kv_heads=1, rope={"theta": 10000},
                    alibi=True, sinks=[0.5, -0.5], w_o=4),
        random_case(124, "cross_attention_kdim_vdim",
                    "Cross-attention: 4 queries from X (d_model 6) over 7 keys and values from X_kv (d_kv 5), "
                    "two heads, biases, square W_o: nn.MultiheadAttention with kdim = vdim = 5 checks it.",
                    T=4, d_model=6, heads=2, d_k=3, d_v=3, bias=True, w_o=6, b_o=True, T_k=7, d_kv=5),
        random_case(125, "cross_attention_custom_mask_gqa_rope",
                    "Cross-attention over 6 source rows with a custom 5 x 6 mask, four query heads over two K/V "
                    "heads, RoPE on queries (positions 0-4) and keys (positions 0-5), ALiBi.",
                    T=5, d_model=8, heads=4, d_k=2, d_v=2, kv_heads=2, T_k=6, d_kv=3,
                    mask=np.array([[1, 1, 0, 0, 0, 0], [1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 0, 0],
                                   [1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1]], dtype=float),
                    rope={"theta": 10000}, alibi=True, w_o=8),
        random_case(126, "qwen3_like_qk_norm_gqa_rope",
                    "A Qwen3-like layer: four query heads over two K/V heads, each head's query and key normed "
                    "(RMSNorm over d_k with one shared gain each) before RoPE, causal, W_o.",
                    T=6, d_model=8, heads=4, d_k=4, d_v=4, kv_heads=2, mask="causal", w_o=8,
                    rope={"theta": 10000, "pairs": "half"}, qk_norm="head"),
        random_case(127, "olmo2_like_whole_qk_norm",
                    "An OLMo-2-like layer: the whole query and key rows normed (RMSNorm over heads*d_k with a gain "
                    "per column) before RoPE, two heads, causal, W_o.",
                    T=5, d_model=6, heads=2, d_k=4, d_v=3, mask="causal", w_o=6,
                    rope={"theta": 10000, "pairs": "half"}, qk_norm="whole"),
        random_case(128, "qk_norm_without_rope",
                    "Queries and keys normed per head with no RoPE after them: Q and K are the normed projections.",
                    T=4, d_model=4, heads=2, d_k=3, d_v=2, qk_norm="head", bias=True),
        random_case(129, "gemma2_like_softcap_window",
                    "A Gemma-2-like layer: the scores times 0.3 (its own factor, not 1/sqrt(4)), soft-capped at 2 (c*tanh(s/c), "
                    "so large scores flatten), a sliding window of 3, two query heads over one K/V head, RoPE.",
                    T=6, d_model=8, heads=2, d_k=4, d_v=4, kv_heads=1, mask={"window": 3}, w_o=8,
                    rope={"theta": 10000, "pairs": "half"}, softcap=2.0, scale_factor=0.3),
        random_case(130, "pythia_like_partial_rotary",
                    "A Pythia-like layer: RoPE turns only the first 2 of each head's 8 dimensions (rotary_pct 0.25), "
                    "the other 6 pass unchanged; biases, causal, W_o with a bias.",
                    T=6, d_model=8, heads=2, d_k=8, d_v=4, mask="causal", bias=True, w_o=8, b_o=True,
                    rope={"theta": 10000, "pairs": "half", "dims": 2}),
        random_case(109, "single_token",
                    "T = 1: every weight is 1 and each context is the token's own value.",
                    T=1, d_model=4, heads=2, d_k=2, d_v=2, mask="causal", bias=True, w_o=4, b_o=True),
    ]


def find_cli():
    found = sorted(glob.glob(os.path.join(REPO, "build", "*", "bin", "attention-lab-cli")), key=os.path.getmtime)
    if not found:
        sys.exit("no build/*/bin/attention-lab-cli: build the CLI first or pass --cli")
    return found[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", help="attention-lab-cli binary (for the presets)")
    args = ap.parse_args()
    cli = args.cli or find_cli()
    torch.set_default_dtype(torch.float64)
    os.makedirs(FIXTURES, exist_ok=True)

    cases = []  # (name, scenario file text)
    with tempfile.TemporaryDirectory() as tmp:
        for p in PRESETS:
            out = os.path.join(tmp, p + ".json")
            subprocess.run([cli, "preset", p, "-o", out], check=True)
            with open(out) as f:
                cases.append(("preset_" + p.replace("-", "_"), f.read()))
    for c in random_cases():
        cases.append((c["title"], scenario_text(c)))

    for name, text in cases:
        scenario_path = os.path.join(FIXTURES, name + ".scenario.json")
        expected_path = os.path.join(FIXTURES, name + ".expected.json")
        with open(scenario_path, "w") as f:
            f.write(text)
        s = load_scenario(scenario_path)  # read back: the reference sees what the engine will
        ref = reference(s)
        note = ""
        if mha_applies(s, ref):
            diff = mha_check(s, ref)
            if not diff <= MHA_TOLERANCE:
                sys.exit(f"{name}: reference and nn.MultiheadAttention differ by {diff:.3g} (> {MHA_TOLERANCE})")
            note = f"  nn.MultiheadAttention max |diff| = {diff:.3g}"
        trace = trace_text(ref)
        json.loads(trace)  # well-formed
        with open(expected_path, "w") as f:
            f.write(trace)
        for path in (scenario_path, expected_path):
            size = os.path.getsize(path)
            if size > MAX_FIXTURE_BYTES:
                sys.exit(f"{path}: {size} bytes, more than {MAX_FIXTURE_BYTES}; make the case smaller")
        d = ref["dims"]
        print(f"{name}: T={d['T']} d_model={d['d_model']} heads={d['heads']} d_k={d['d_k']} d_v={d['d_v']} "
              f"d_out={d['d_out']} mask={s['mask_kind']}{note}")


if __name__ == "__main__":
    main()
