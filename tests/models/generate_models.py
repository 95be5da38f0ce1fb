#!/usr/bin/python3
"""Writes the tiny random model fixtures under tests/models/fixtures/.

Run with Debian's /usr/bin/python3 (torch 1.13 + numpy; no transformers, no
safetensors package needed: the safetensors format is written by hand).

    /usr/bin/python3 tests/models/generate_models.py            # rewrite fixtures/
    /usr/bin/python3 tests/models/generate_models.py --out DIR  # elsewhere
    /usr/bin/python3 tests/models/generate_models.py --gpt2-small DIR
        # a GPT-2-small-shaped random model (~550 MB, not committed, no reference)

Every model gets its own fixed seed, so reruns are byte-identical.

Each fixture folder holds config.json, the weights (model.safetensors, or two
shards + model.safetensors.index.json) and reference.safetensors: every
intermediate of the forward pass on IDS, computed in float64 by a hand-written
numpy implementation from the (already rounded) stored weights, cross-checked
against an independently written torch path.
"""

import argparse
import hashlib
import json
import math
import os
import shutil
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F

IDS = [3, 14, 15, 9, 2, 6, 53]
N_GREEDY = 5
V, D, H, DH, L, P = 61, 32, 4, 8, 2, 16
D_FF_GPT2 = 4 * D
D_FF_LLAMA = 48

MAT_STD, GAIN_STD, BIAS_STD = 0.3, 0.1, 0.1
CHECK_TOL = 1e-10

ST_DTYPES = {  # safetensors dtype -> bytes per element
    "F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8,
}
TORCH_DTYPE_NAME = {"F32": "float32", "F16": "float16", "BF16": "bfloat16"}


# --------------------------------------------------------------------------
# safetensors, by hand
# --------------------------------------------------------------------------

def encode(t32, dtype):
    """float32 torch tensor -> (raw little-endian bytes in dtype, float64 numpy
    array of exactly the values stored)."""
    t32 = t32.detach().to(torch.float32).contiguous()
    if dtype == "F32":
        stored = t32
        raw = t32.numpy().astype("<f4").tobytes()
    elif dtype == "F16":
        stored = t32.to(torch.float16)
        raw = stored.numpy().astype("<f2").tobytes()
    elif dtype == "BF16":
        stored = t32.to(torch.bfloat16)
        raw = stored.view(torch.int16).numpy().astype("<i2").tobytes()
    else:
        raise ValueError(dtype)
    return raw, stored.to(torch.float64).numpy().copy()


def decode(raw, dtype, shape):
    """Inverse of encode, as a loader would do it: -> float64 numpy."""
    if dtype == "F64":
        a = np.frombuffer(raw, "<f8")
    elif dtype == "F32":
        a = np.frombuffer(raw, "<f4")
    elif dtype == "F16":
        a = np.frombuffer(raw, "<f2")
    elif dtype == "BF16":
        a = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view("<f4")
    elif dtype == "I64":
        return np.frombuffer(raw, "<i8").reshape(shape).copy()
    else:
        raise ValueError(dtype)
    return a.astype(np.float64).reshape(shape)


def st_header(specs, metadata):
    """specs: list of (name, dtype, shape). -> header bytes (with the u64 length
    prefix), tensors packed in the order given."""
    hdr = {"__metadata__": metadata} if metadata is not None else {}
    off = 0
    for name, dtype, shape in specs:
        n = ST_DTYPES[dtype] * int(np.prod(shape, dtype=np.int64))
        hdr[name] = {"dtype": dtype, "shape": [int(s) for s in shape], "data_offsets": [off, off + n]}
        off += n
    js = json.dumps(hdr, separators=(",", ":")).encode("utf-8")
    js += b" " * ((-len(js)) % 8)
    return struct.pack("<Q", len(js)) + js, off


def write_safetensors(path, entries, metadata={"format": "pt"}):
    """entries: list of (name, dtype, shape, raw bytes). Returns file size."""
    head, total = st_header([(n, d, s) for n, d, s, _ in entries], metadata)
    assert total == sum(len(r) for _, _, _, r in entries)
    with open(path, "wb") as f:
        f.write(head)
        for name, dtype, shape, raw in entries:
            assert len(raw) == ST_DTYPES[dtype] * int(np.prod(shape, dtype=np.int64)), name
            f.write(raw)
    return os.path.getsize(path)


def read_safetensors(path):
    """-> {name: (dtype, shape, raw bytes)}; checks the layout strictly."""
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0 and 8 + n <= len(blob)
    hdr = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    out, ends = {}, []
    for name, info in hdr.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        assert e - b == ST_DTYPES[info["dtype"]] * int(np.prod(info["shape"], dtype=np.int64)), name
        out[name] = (info["dtype"], tuple(info["shape"]), data[b:e])
        ends.append((b, e))
    ends.sort()
    pos = 0
    for b, e in ends:  # packed, no holes, no overlap, nothing after
        assert b == pos, path
        pos = e
    assert pos == len(data), path
    return out


# --------------------------------------------------------------------------
# random weights
# --------------------------------------------------------------------------

class Rng:
    def __init__(self, seed):
        self.g = torch.Generator().manual_seed(seed)

    def _n(self, shape):
        return torch.randn(*shape, generator=self.g, dtype=torch.float32)

    def mat(self, *shape, std=MAT_STD):
        return self._n(shape) * std

    def gain(self, n):
        return 1.0 + self._n((n,)) * GAIN_STD

    def bias(self, n):
        return self._n((n,)) * BIAS_STD


class Store:
    """Tensors to write, in order, plus the float64 values a loader will see."""

    def __init__(self, dtype):
        self.dtype = dtype
        self.entries = []  # (name, dtype, shape, raw)
        self.values = {}   # name -> float64 numpy (only for weights)

    def add(self, name, t32, dtype=None):
        dtype = dtype or self.dtype
        raw, val = encode(t32, dtype)
        self.entries.append((name, dtype, tuple(t32.shape), raw))
        self.values[name] = val
        return val


# --------------------------------------------------------------------------
# float64 reference: hand-written numpy
# --------------------------------------------------------------------------

def np_softmax(x):
    m = np.max(x, axis=-1, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=-1, keepdims=True)


def gelu_new(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x / (1.0 + np.exp(-x))


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def rms_norm(x, w, eps):
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * w


def allowed_mask(T, window=None):
    i = np.arange(T)[:, None]
    j = np.arange(T)[None, :]
    ok = j <= i
    if window is not None:
        ok &= j > i - window
    return ok


def attention(q, k, v, n_heads, n_kv, window, rec, pre, scale=None, dh=DH):
    """q [T, n_heads*dh], k/v [T, n_kv*dh] (already rotated where relevant); the
    scores are multiplied by `scale` (default 1/sqrt(dh))."""
    DH = dh
    scale = 1.0 / math.sqrt(DH) if scale is None else scale
    T = q.shape[0]
    ok = allowed_mask(T, window)
    scores = np.empty((n_heads, T, T))
    weights = np.empty((n_heads, T, T))
    ctx = np.empty((T, n_heads * DH))
    for h in range(n_heads):
        g = (h * n_kv) // n_heads
        qh = q[:, DH * h:DH * h + DH]
        kh = k[:, DH * g:DH * g + DH]
        vh = v[:, DH * g:DH * g + DH]
        s = (qh @ kh.T) * scale
        s = np.where(ok, s, -np.inf)
        w = np_softmax(s)
        scores[h], weights[h] = s, w
        ctx[:, DH * h:DH * h + DH] = w @ vh
    if rec is not None:
        rec[pre + "scores"] = scores
        rec[pre + "weights"] = weights
        rec[pre + "context"] = ctx
    return ctx


def gpt2_forward(p, ids, eps, rec=None):
    """p: canonical params in Conv1D orientation (y = x @ W + b)."""
    T = len(ids)
    x = p["wte"][ids] + p["wpe"][:T]
    if rec is not None:
        rec["embed"] = x.copy()
    for i in range(L):
        pre = "layers.%d." % i
        lp = p["h"][i]
        a = layer_norm(x, lp["ln1_w"], lp["ln1_b"], eps)
        qkv = a @ lp["attn_w"] + lp["attn_b"]
        q, k, v = qkv[:, :D], qkv[:, D:2 * D], qkv[:, 2 * D:]
        ctx = attention(q, k, v, H, H, None, rec, pre)
        attn_out = ctx @ lp["proj_w"] + lp["proj_b"]
        mid = x + attn_out
        m = layer_norm(mid, lp["ln2_w"], lp["ln2_b"], eps)
        act = gelu_new(m @ lp["fc_w"] + lp["fc_b"])
        mlp_out = act @ lp["fcproj_w"] + lp["fcproj_b"]
        out = mid + mlp_out
        if rec is not None:
            rec.update({pre + "input": x, pre + "norm1": a, pre + "q": q, pre + "k": k, pre + "v": v,
                        pre + "attn_out": attn_out, pre + "resid_mid": mid, pre + "norm2": m,
                        pre + "mlp_act": act, pre + "mlp_out": mlp_out, pre + "output": out})
        x = out
    f = layer_norm(x, p["lnf_w"], p["lnf_b"], eps)
    lm = p["lm_head"] if p.get("lm_head") is not None else p["wte"]
    logits = f @ lm.T
    if rec is not None:
        rec["final_norm"] = f
        rec["logits"] = logits
        rec["probs"] = np_softmax(logits)
    return logits


def rope_cos_sin(T, theta, dh=DH):
    inv_freq = 1.0 / theta ** (np.arange(0, dh, 2, dtype=np.float64) / dh)
    freqs = np.arange(T, dtype=np.float64)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    return np.cos(emb), np.sin(emb)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def apply_rope(x, n, cos, sin):
    DH = cos.shape[-1]
    out = np.empty_like(x)
    for h in range(n):
        xh = x[:, DH * h:DH * h + DH]
        out[:, DH * h:DH * h + DH] = xh * cos + rotate_half(xh) * sin
    return out


def llama_forward(p, cfg, ids, rec=None):
    T = len(ids)
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    eps = cfg["rms_norm_eps"]
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window", True) else None
    dh = cfg.get("head_dim", DH)
    cos, sin = rope_cos_sin(T, cfg["rope_theta"], dh)
    # Granite's multipliers (GraniteModel, GraniteAttention, GraniteDecoderLayer; 1 elsewhere)
    em, rm = cfg.get("embedding_multiplier", 1.0), cfg.get("residual_multiplier", 1.0)
    x = p["embed"][ids] * em
    if rec is not None:
        rec["embed"] = x.copy()
    for i in range(L):
        pre = "layers.%d." % i
        lp = p["layers"][i]
        a = rms_norm(x, lp["in_norm"], eps)
        q = a @ lp["q"].T + (lp["qb"] if lp.get("qb") is not None else 0.0)
        k = a @ lp["k"].T + (lp["kb"] if lp.get("kb") is not None else 0.0)
        v = a @ lp["v"].T + (lp["vb"] if lp.get("vb") is not None else 0.0)
        if lp.get("q_norm") is not None:  # Qwen3: an RMSNorm of each head's q and k, before RoPE
            q = np.concatenate([rms_norm(q[:, dh * h:dh * h + dh], lp["q_norm"], eps) for h in range(nh)], axis=1)
            k = np.concatenate([rms_norm(k[:, dh * h:dh * h + dh], lp["k_norm"], eps) for h in range(nkv)], axis=1)
        q_rot = apply_rope(q, nh, cos, sin)
        k_rot = apply_rope(k, nkv, cos, sin)
        ctx = attention(q_rot, k_rot, v, nh, nkv, window, rec, pre, cfg.get("attention_multiplier"), dh)
        attn_out = ctx @ lp["o"].T
        mid = x + attn_out * rm
        m = rms_norm(mid, lp["post_norm"], eps)
        act = silu(m @ lp["gate"].T) * (m @ lp["up"].T)
        mlp_out = act @ lp["down"].T
        out = mid + mlp_out * rm
        if rec is not None:
            rec.update({pre + "input": x, pre + "norm1": a, pre + "q": q, pre + "k": k, pre + "v": v,
                        pre + "q_rot": q_rot, pre + "k_rot": k_rot,
                        pre + "attn_out": attn_out, pre + "resid_mid": mid, pre + "norm2": m,
                        pre + "mlp_act": act, pre + "mlp_out": mlp_out, pre + "output": out})
        x = out
    f = rms_norm(x, p["norm"], eps)
    lm = p["lm_head"] if p.get("lm_head") is not None else p["embed"]
    logits = f @ lm.T / cfg.get("logits_scaling", 1.0)
    if rec is not None:
        rec["final_norm"] = f
        rec["logits"] = logits
        rec["probs"] = np_softmax(logits)
    return logits


def greedy(forward, ids, n=N_GREEDY):
    seq = list(ids)
    for _ in range(n):
        logits = forward(seq)
        seq.append(int(np.argmax(logits[-1])))
    assert len(seq) <= P
    return seq[len(ids):]


# --------------------------------------------------------------------------
# independent torch paths (self-check)
# --------------------------------------------------------------------------

def tt(a):
    return torch.from_numpy(np.ascontiguousarray(a)).to(torch.float64)


def gpt2_torch(p, ids, eps):
    """nn.MultiheadAttention + F.layer_norm + F.gelu(tanh), Linear orientation."""
    T = len(ids)
    rec = {}
    x = tt(p["wte"])[ids] + tt(p["wpe"])[:T]
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)  # True = not allowed
    for i in range(L):
        lp = p["h"][i]
        pre = "layers.%d." % i
        a = F.layer_norm(x, (D,), tt(lp["ln1_w"]), tt(lp["ln1_b"]), eps)
        mha = torch.nn.MultiheadAttention(D, H, bias=True, batch_first=True, dtype=torch.float64)
        with torch.no_grad():
            mha.in_proj_weight.copy_(tt(lp["attn_w"]).T)
            mha.in_proj_bias.copy_(tt(lp["attn_b"]))
            mha.out_proj.weight.copy_(tt(lp["proj_w"]).T)
            mha.out_proj.bias.copy_(tt(lp["proj_b"]))
            attn_out, w = mha(a[None], a[None], a[None], attn_mask=mask, need_weights=True,
                              average_attn_weights=False)
        attn_out, w = attn_out[0], w[0]
        mid = x + attn_out
        m = F.layer_norm(mid, (D,), tt(lp["ln2_w"]), tt(lp["ln2_b"]), eps)
        act = F.gelu(F.linear(m, tt(lp["fc_w"]).T, tt(lp["fc_b"])), approximate="tanh")
        mlp_out = F.linear(act, tt(lp["fcproj_w"]).T, tt(lp["fcproj_b"]))
        x = mid + mlp_out
        rec.update({pre + "norm1": a, pre + "weights": w, pre + "attn_out": attn_out,
                    pre + "resid_mid": mid, pre + "norm2": m, pre + "mlp_act": act,
                    pre + "mlp_out": mlp_out, pre + "output": x})
    f = F.layer_norm(x, (D,), tt(p["lnf_w"]), tt(p["lnf_b"]), eps)
    lm = tt(p["lm_head"] if p.get("lm_head") is not None else p["wte"])
    rec["final_norm"] = f
    rec["logits"] = f @ lm.T
    rec["probs"] = torch.softmax(rec["logits"], -1)
    return rec


def rope_complex(x, n, T, theta, DH=DH):
    """HF's rotate_half pairs element j with j + DH/2: view those pairs as one
    complex number and multiply by exp(i * pos * inv_freq)."""
    inv_freq = 1.0 / theta ** (torch.arange(0, DH, 2, dtype=torch.float64) / DH)
    ang = torch.outer(torch.arange(T, dtype=torch.float64), inv_freq)  # [T, DH/2]
    rot = torch.polar(torch.ones_like(ang), ang)                       # complex128
    xh = x.view(T, n, 2, DH // 2).transpose(-1, -2).contiguous()       # [T, n, DH/2, 2]
    z = torch.view_as_complex(xh) * rot[:, None, :]
    return torch.view_as_real(z).transpose(-1, -2).reshape(T, n * DH)


def llama_torch(p, cfg, ids):
    T = len(ids)
    nh, nkv = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    eps, theta = cfg["rms_norm_eps"], cfg["rope_theta"]
    window = cfg.get("sliding_window") if cfg.get("use_sliding_window", True) else None
    DH = cfg.get("head_dim", globals()["DH"])
    rec = {}

    def rms(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * tt(w)

    def opt(b):
        return None if b is None else tt(b)

    blocked = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
    if window is not None:
        blocked |= torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-window)
    em, rm = cfg.get("embedding_multiplier", 1.0), cfg.get("residual_multiplier", 1.0)
    scaling = cfg.get("attention_multiplier", 1.0 / math.sqrt(DH))
    x = tt(p["embed"])[ids] * em
    for i in range(L):
        lp = p["layers"][i]
        pre = "layers.%d." % i
        a = rms(x, lp["in_norm"])
        q = F.linear(a, tt(lp["q"]), opt(lp.get("qb")))
        k = F.linear(a, tt(lp["k"]), opt(lp.get("kb")))
        v = F.linear(a, tt(lp["v"]), opt(lp.get("vb")))
        if lp.get("q_norm") is not None:
            q = rms(q.view(T, nh, DH), lp["q_norm"]).reshape(T, nh * DH)
            k = rms(k.view(T, nkv, DH), lp["k_norm"]).reshape(T, nkv * DH)
        q_rot, k_rot = rope_complex(q, nh, T, theta, DH), rope_complex(k, nkv, T, theta, DH)
        qh = q_rot.view(T, nh, DH).transpose(0, 1)
        kh = k_rot.view(T, nkv, DH).transpose(0, 1).repeat_interleave(nh // nkv, dim=0)
        vh = v.view(T, nkv, DH).transpose(0, 1).repeat_interleave(nh // nkv, dim=0)
        s = torch.einsum("htd,hsd->hts", qh, kh) * scaling
        s = s.masked_fill(blocked, float("-inf"))
        w = torch.softmax(s, -1)
        ctx = torch.einsum("hts,hsd->thd", w, vh).reshape(T, nh * DH)
        attn_out = F.linear(ctx, tt(lp["o"]))
        mid = x + attn_out * rm
        m = rms(mid, lp["post_norm"])
        act = F.silu(F.linear(m, tt(lp["gate"]))) * F.linear(m, tt(lp["up"]))
        mlp_out = F.linear(act, tt(lp["down"]))
        x = mid + mlp_out * rm
        rec.update({pre + "norm1": a, pre + "q": q, pre + "k": k, pre + "v": v, pre + "q_rot": q_rot,
                    pre + "k_rot": k_rot, pre + "scores": s, pre + "weights": w, pre + "context": ctx,
                    pre + "attn_out": attn_out, pre + "resid_mid": mid, pre + "norm2": m,
                    pre + "mlp_act": act, pre + "mlp_out": mlp_out, pre + "output": x})
    f = rms(x, p["norm"])
    lm = tt(p["lm_head"] if p.get("lm_head") is not None else p["embed"])
    rec["final_norm"] = f
    rec["logits"] = f @ lm.T / cfg.get("logits_scaling", 1.0)
    rec["probs"] = torch.softmax(rec["logits"], -1)
    return rec


def compare(model, ref, other):
    worst = 0.0
    for name, b in other.items():
        a = ref[name]
        b = b.detach().numpy()
        assert a.shape == b.shape, (model, name, a.shape, b.shape)
        fin = np.isfinite(a)
        assert np.array_equal(fin, np.isfinite(b)), (model, name, "masking differs")
        assert np.array_equal(a[~fin], b[~fin]), (model, name)
        if fin.any():
            scale = max(1.0, float(np.max(np.abs(a[fin]))))
            err = float(np.max(np.abs(a[fin] - b[fin]))) / scale
            worst = max(worst, err)
            if err > CHECK_TOL:
                raise SystemExit("%s: %s differs from the torch path by %.3g" % (model, name, err))
    return worst


# --------------------------------------------------------------------------
# the models
# --------------------------------------------------------------------------

def make_gpt2(name, seed, dtype, prefix, layout, tied, buffers):
    rng = Rng(seed)
    st = Store(dtype)
    pf = prefix

    def W(tname, conv_t):
        """conv_t is in Conv1D orientation [in, out]; emit per layout and
        return the stored values in Conv1D orientation."""
        if layout == "conv1d":
            return st.add(pf + tname, conv_t)
        return st.add(pf + tname, conv_t.T.contiguous()).T.copy()

    p = {"h": []}
    p["wte"] = st.add(pf + "wte.weight", rng.mat(V, D))
    p["wpe"] = st.add(pf + "wpe.weight", rng.mat(P, D))
    for i in range(L):
        h = "h.%d." % i
        lp = {}
        lp["ln1_w"] = st.add(pf + h + "ln_1.weight", rng.gain(D))
        lp["ln1_b"] = st.add(pf + h + "ln_1.bias", rng.bias(D))
        if buffers:
            # buffers HF GPT-2 checkpoints carry (model.half() converts them too)
            st.add(pf + h + "attn.bias", torch.tril(torch.ones(P, P)).view(1, 1, P, P))
            st.add(pf + h + "attn.masked_bias", torch.tensor(-1e4))
        lp["attn_w"] = W(h + "attn.c_attn.weight", rng.mat(D, 3 * D))
        lp["attn_b"] = st.add(pf + h + "attn.c_attn.bias", rng.bias(3 * D))
        lp["proj_w"] = W(h + "attn.c_proj.weight", rng.mat(D, D))
        lp["proj_b"] = st.add(pf + h + "attn.c_proj.bias", rng.bias(D))
        lp["ln2_w"] = st.add(pf + h + "ln_2.weight", rng.gain(D))
        lp["ln2_b"] = st.add(pf + h + "ln_2.bias", rng.bias(D))
        lp["fc_w"] = W(h + "mlp.c_fc.weight", rng.mat(D, D_FF_GPT2))
        lp["fc_b"] = st.add(pf + h + "mlp.c_fc.bias", rng.bias(D_FF_GPT2))
        lp["fcproj_w"] = W(h + "mlp.c_proj.weight", rng.mat(D_FF_GPT2, D))
        lp["fcproj_b"] = st.add(pf + h + "mlp.c_proj.bias", rng.bias(D))
        p["h"].append(lp)
    p["lnf_w"] = st.add(pf + "ln_f.weight", rng.gain(D))
    p["lnf_b"] = st.add(pf + "ln_f.bias", rng.bias(D))
    p["lm_head"] = None if tied else st.add("lm_head.weight", rng.mat(V, D))

    cfg = {
        "model_type": "gpt2",
        "architectures": ["GPT2LMHeadModel"],
        "vocab_size": V,
        "n_positions": P,
        "n_ctx": P,
        "n_embd": D,
        "n_layer": L,
        "n_head": H,
        "layer_norm_epsilon": 1e-5,
        "activation_function": "gelu_new",
        "torch_dtype": TORCH_DTYPE_NAME[dtype],
    }
    if not tied:
        cfg["tie_word_embeddings"] = False
    eps = cfg["layer_norm_epsilon"]

    rec = {}
    gpt2_forward(p, IDS, eps, rec)
    worst = compare(name, rec, gpt2_torch(p, IDS, eps))
    g = greedy(lambda s: gpt2_forward(p, s, eps), IDS)
    g_t = greedy(lambda s: gpt2_torch(p, s, eps)["logits"].numpy(), IDS)
    assert g == g_t, (name, g, g_t)
    return cfg, st, rec, g, worst


def make_llama(name, seed, dtype, cfg_extra, n_kv, q_bias, tied, shards=None, dh=DH, qk_norm=False):
    DH = dh
    rng = Rng(seed)
    st = Store(dtype)
    p = {"layers": []}
    p["embed"] = st.add("model.embed_tokens.weight", rng.mat(V, D))
    layer_starts = []
    for i in range(L):
        layer_starts.append(len(st.entries))
        m = "model.layers.%d." % i
        lp = {}
        lp["in_norm"] = st.add(m + "input_layernorm.weight", rng.gain(D))
        lp["q"] = st.add(m + "self_attn.q_proj.weight", rng.mat(H * DH, D))
        if q_bias:
            lp["qb"] = st.add(m + "self_attn.q_proj.bias", rng.bias(H * DH))
        lp["k"] = st.add(m + "self_attn.k_proj.weight", rng.mat(n_kv * DH, D))
        if q_bias:
            lp["kb"] = st.add(m + "self_attn.k_proj.bias", rng.bias(n_kv * DH))
        lp["v"] = st.add(m + "self_attn.v_proj.weight", rng.mat(n_kv * DH, D))
        if q_bias:
            lp["vb"] = st.add(m + "self_attn.v_proj.bias", rng.bias(n_kv * DH))
        if qk_norm:
            lp["q_norm"] = st.add(m + "self_attn.q_norm.weight", rng.gain(DH))
            lp["k_norm"] = st.add(m + "self_attn.k_norm.weight", rng.gain(DH))
        lp["o"] = st.add(m + "self_attn.o_proj.weight", rng.mat(D, H * DH))
        lp["post_norm"] = st.add(m + "post_attention_layernorm.weight", rng.gain(D))
        lp["gate"] = st.add(m + "mlp.gate_proj.weight", rng.mat(D_FF_LLAMA, D))
        lp["up"] = st.add(m + "mlp.up_proj.weight", rng.mat(D_FF_LLAMA, D))
        lp["down"] = st.add(m + "mlp.down_proj.weight", rng.mat(D, D_FF_LLAMA))
        p["layers"].append(lp)
    p["norm"] = st.add("model.norm.weight", rng.gain(D))
    p["lm_head"] = None if tied else st.add("lm_head.weight", rng.mat(V, D))

    cfg = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "vocab_size": V,
        "hidden_size": D,
        "intermediate_size": D_FF_LLAMA,
        "num_hidden_layers": L,
        "num_attention_heads": H,
        "num_key_value_heads": n_kv,
        "max_position_embeddings": P,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "attention_bias": False,
        "tie_word_embeddings": tied,
        "torch_dtype": TORCH_DTYPE_NAME[dtype],
    }
    if dh != D // H:
        cfg["head_dim"] = dh
    cfg.update(cfg_extra)

    # RoPE: rotate_half form (numpy) against complex multiplication (torch).
    x = np.random.RandomState(seed).standard_normal((len(IDS), H * DH))
    cos, sin = rope_cos_sin(len(IDS), cfg["rope_theta"], DH)
    a = apply_rope(x, H, cos, sin)
    b = rope_complex(tt(x), H, len(IDS), cfg["rope_theta"], DH).numpy()
    rope_err = float(np.max(np.abs(a - b)))
    assert rope_err < CHECK_TOL, (name, rope_err)

    rec = {}
    llama_forward(p, cfg, IDS, rec)
    worst = max(rope_err, compare(name, rec, llama_torch(p, cfg, IDS)))
    g = greedy(lambda s: llama_forward(p, cfg, s), IDS)
    g_t = greedy(lambda s: llama_torch(p, cfg, s)["logits"].numpy(), IDS)
    assert g == g_t, (name, g, g_t)
    split = layer_starts[1] if shards else None
    return cfg, st, rec, g, worst, split


def reference_entries(rec, g):
    order = ["embed"]
    for i in range(L):
        for k in ["input", "norm1", "q", "k", "v", "q_rot", "k_rot", "scores", "weights", "context",
                  "attn_out", "resid_mid", "norm2", "mlp_act", "mlp_out", "output"]:
            n = "layers.%d.%s" % (i, k)
            if n in rec:
                order.append(n)
    order += ["final_norm", "logits", "probs"]
    assert set(order) == set(rec), set(rec) ^ set(order)
    ents = [("ids", "I64", (len(IDS),), np.array(IDS, dtype="<i8").tobytes())]
    for n in order:
        a = np.ascontiguousarray(rec[n], dtype="<f8")
        ents.append((n, "F64", a.shape, a.tobytes()))
    ents.append(("greedy", "I64", (len(g),), np.array(g, dtype="<i8").tobytes()))
    return ents


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


def verify_folder(folder, st, rec, g):
    """Read the folder back as a loader would and check every value."""
    idx = os.path.join(folder, "model.safetensors.index.json")
    if os.path.exists(idx):
        with open(idx) as f:
            index = json.load(f)
        files = sorted(set(index["weight_map"].values()))
        got = {}
        for fn in files:
            part = read_safetensors(os.path.join(folder, fn))
            for n in part:
                assert index["weight_map"][n] == fn, n
            got.update(part)
        assert set(got) == set(index["weight_map"])
        assert index["metadata"]["total_size"] == sum(len(r) for _, _, r in got.values())
    else:
        got = read_safetensors(os.path.join(folder, "model.safetensors"))
    assert set(e[0] for e in st.entries) == set(got)
    for n, val in st.values.items():
        dt, shape, raw = got[n]
        assert np.array_equal(decode(raw, dt, shape), val), n
    ref = read_safetensors(os.path.join(folder, "reference.safetensors"))
    for n, a in rec.items():
        dt, shape, raw = ref[n]
        assert dt == "F64" and np.array_equal(decode(raw, dt, shape), a), n
    assert list(decode(ref["greedy"][2], "I64", ref["greedy"][1])) == g
    assert list(decode(ref["ids"][2], "I64", ref["ids"][1])) == IDS


def write_model(out, name, cfg, st, rec, g, worst, split=None):
    folder = os.path.join(out, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    write_json(os.path.join(folder, "config.json"), cfg)
    if split is None:
        write_safetensors(os.path.join(folder, "model.safetensors"), st.entries)
    else:
        parts = [st.entries[:split], st.entries[split:]]
        wmap = {}
        for k, part in enumerate(parts):
            fn = "model-%05d-of-%05d.safetensors" % (k + 1, len(parts))
            write_safetensors(os.path.join(folder, fn), part)
            for e in part:
                wmap[e[0]] = fn
        total = sum(len(e[3]) for e in st.entries)
        write_json(os.path.join(folder, "model.safetensors.index.json"),
                   {"metadata": {"total_size": total}, "weight_map": dict(sorted(wmap.items()))})
    write_safetensors(os.path.join(folder, "reference.safetensors"), reference_entries(rec, g))
    verify_folder(folder, st, rec, g)
    files = sorted(os.listdir(folder))
    size = sum(os.path.getsize(os.path.join(folder, f)) for f in files)
    print("%-24s %-5s %-70s %7d bytes  greedy=%s  torch-check %.1e" %
          (name, st.dtype, ",".join(files), size, g, worst))
    return size


def generate_fixtures(out):
    os.makedirs(out, exist_ok=True)
    total = 0
    # name, seed, dtype, prefix, layout, tied, buffers
    for args in [("gpt2-conv1d", 101, "F32", "", "conv1d", True, True),
                 ("gpt2-conv1d-f16", 102, "F16", "transformer.", "conv1d", False, True),
                 ("mingpt-linear-bf16", 103, "BF16", "transformer.", "linear", False, False)]:
        cfg, st, rec, g, worst = make_gpt2(*args)
        total += write_model(out, args[0], cfg, st, rec, g, worst)

    llamas = [
        ("llama-gqa", 104, "F32", {}, 2, False, False, None),
        ("qwen2-bias-tied-bf16", 105, "BF16",
         {"model_type": "qwen2", "architectures": ["Qwen2ForCausalLM"], "rope_theta": 1000000.0,
          "use_sliding_window": False, "sliding_window": 4, "max_window_layers": L},
         2, True, True, None),
        ("mistral-window-sharded", 106, "F16",
         {"model_type": "mistral", "architectures": ["MistralForCausalLM"], "sliding_window": 3},
         1, False, False, 2),
        ("smollm-tied", 107, "F32", {}, 4, False, True, None),
        ("granite-multipliers", 108, "F32",
         {"model_type": "granite", "architectures": ["GraniteForCausalLM"], "embedding_multiplier": 3.5,
          "attention_multiplier": 0.2, "residual_multiplier": 0.22, "logits_scaling": 2.5, "mlp_bias": False},
         2, False, False, None),
    ]
    for name, seed, dtype, extra, n_kv, qb, tied, shards in llamas:
        cfg, st, rec, g, worst, split = make_llama(name, seed, dtype, extra, n_kv, qb, tied, shards)
        if cfg["model_type"] in ("qwen2", "mistral"):
            cfg.pop("attention_bias")  # Qwen2Config / MistralConfig have no such key
        total += write_model(out, name, cfg, st, rec, g, worst, split)
    # Qwen3's shape the transformers fixtures do not have: head_dim 12, not
    # d_model / heads = 8 (q is 48 wide, o_proj 48 → 32), a per-head q/k
    # RMSNorm, in BF16.
    qwen3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], "rope_theta": 1000000.0,
             "use_sliding_window": False, "sliding_window": None, "max_window_layers": L,
             "layer_types": ["full_attention"] * L}
    for name, seed, dtype, extra, n_kv, qb, tied, shards, dh in [
            ("qwen3-head-dim-bf16", 109, "BF16", qwen3, 2, False, False, None, 12)]:
        cfg, st, rec, g, worst, split = make_llama(name, seed, dtype, extra, n_kv, qb, tied, shards, dh, True)
        total += write_model(out, name, cfg, st, rec, g, worst, split)
    print("total %d bytes in %s" % (total, out))


# --------------------------------------------------------------------------
# Benchmark models (GPT-2 small, a 1.1 B Llama), streamed
# --------------------------------------------------------------------------

def stream_random_model(folder, name, dtype, specs, seed, tensor):
    """Writes folder/model.safetensors tensor by tensor (peak RAM ~ the largest
    one): specs are (name, shape, kind), tensor(shape, kind, generator) makes
    each as float32, stored as dtype (F32 or BF16)."""
    head, total = st_header([(n, dtype, s) for n, s, _ in specs], {"format": "pt"})
    g = torch.Generator().manual_seed(seed)
    path = os.path.join(folder, "model.safetensors")
    assert sys.byteorder == "little"
    with open(path, "wb") as f:
        f.write(head)
        for _, shape, kind in specs:
            t = tensor(shape, kind, g)
            assert t.dtype == torch.float32 and tuple(t.shape) == tuple(shape)
            if dtype == "BF16":
                t = t.to(torch.bfloat16).contiguous().view(torch.int16)
            f.write(memoryview(t.contiguous().numpy()).cast("B"))  # no copy of an F32 tensor
            del t
    size = os.path.getsize(path)
    assert size == len(head) + total
    print("%s  %s  config.json,model.safetensors  %d bytes in %s" % (name, dtype, size, folder))


def generate_gpt2_small(folder, seed=124):
    Vs, Ds, Hs, Ls, Ps = 50257, 768, 12, 12, 1024
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), {
        "model_type": "gpt2", "architectures": ["GPT2LMHeadModel"], "vocab_size": Vs,
        "n_positions": Ps, "n_ctx": Ps, "n_embd": Ds, "n_layer": Ls, "n_head": Hs,
        "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", "torch_dtype": "float32"})
    # (name, shape, kind): kind in mat / gain / bias / tril / masked
    specs = [("wte.weight", (Vs, Ds), "mat"), ("wpe.weight", (Ps, Ds), "mat")]
    for i in range(Ls):
        h = "h.%d." % i
        specs += [(h + "ln_1.weight", (Ds,), "gain"), (h + "ln_1.bias", (Ds,), "bias"),
                  (h + "attn.bias", (1, 1, Ps, Ps), "tril"), (h + "attn.masked_bias", (), "masked"),
                  (h + "attn.c_attn.weight", (Ds, 3 * Ds), "mat"), (h + "attn.c_attn.bias", (3 * Ds,), "bias"),
                  (h + "attn.c_proj.weight", (Ds, Ds), "mat"), (h + "attn.c_proj.bias", (Ds,), "bias"),
                  (h + "ln_2.weight", (Ds,), "gain"), (h + "ln_2.bias", (Ds,), "bias"),
                  (h + "mlp.c_fc.weight", (Ds, 4 * Ds), "mat"), (h + "mlp.c_fc.bias", (4 * Ds,), "bias"),
                  (h + "mlp.c_proj.weight", (4 * Ds, Ds), "mat"), (h + "mlp.c_proj.bias", (Ds,), "bias")]
    specs += [("ln_f.weight", (Ds,), "gain"), ("ln_f.bias", (Ds,), "bias")]
    def tensor(shape, kind, g):
        if kind == "tril":
            return torch.tril(torch.ones(Ps, Ps)).view(shape)
        if kind == "masked":
            return torch.tensor(-1e4)
        t = torch.randn(*shape, generator=g).mul_(0.02)
        return t.add_(1.0) if kind == "gain" else t

    stream_random_model(folder, "gpt2-small", "F32", specs, seed, tensor)


def generate_llama_1b(folder, seed=1100):
    """A TinyLlama-1.1B-shaped random Llama in BF16 (~2.2 GB): 22 layers of
    d_model 2048, 32 heads sharing 4 K/V heads, SwiGLU of 5632, vocabulary
    32000, its own lm_head — the memory and speed figures' 1 B model."""
    V, D, H, KV, L, F = 32000, 2048, 32, 4, 22, 5632
    dh = D // H
    os.makedirs(folder, exist_ok=True)
    write_json(os.path.join(folder, "config.json"), {
        "model_type": "llama", "architectures": ["LlamaForCausalLM"], "vocab_size": V, "hidden_size": D,
        "intermediate_size": F, "num_hidden_layers": L, "num_attention_heads": H, "num_key_value_heads": KV,
        "max_position_embeddings": 2048, "rms_norm_eps": 1e-5, "rope_theta": 10000.0, "hidden_act": "silu",
        "tie_word_embeddings": False, "attention_bias": False, "mlp_bias": False, "torch_dtype": "bfloat16"})
    specs = [("model.embed_tokens.weight", (V, D), "mat")]
    for i in range(L):
        h = "model.layers.%d." % i
        specs += [(h + "input_layernorm.weight", (D,), "gain"),
                  (h + "self_attn.q_proj.weight", (H * dh, D), "mat"), (h + "self_attn.k_proj.weight", (KV * dh, D), "mat"),
                  (h + "self_attn.v_proj.weight", (KV * dh, D), "mat"), (h + "self_attn.o_proj.weight", (D, H * dh), "mat"),
                  (h + "post_attention_layernorm.weight", (D,), "gain"),
                  (h + "mlp.gate_proj.weight", (F, D), "mat"), (h + "mlp.up_proj.weight", (F, D), "mat"),
                  (h + "mlp.down_proj.weight", (D, F), "mat")]
    specs += [("model.norm.weight", (D,), "gain"), ("lm_head.weight", (V, D), "mat")]
    def tensor(shape, kind, g):
        t = torch.randn(*shape, generator=g).mul_(0.02)
        return t.add_(1.0) if kind == "gain" else t

    stream_random_model(folder, "llama-1b", "BF16", specs, seed, tensor)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures"),
                    help="where to write the fixture folders (default: tests/models/fixtures)")
    ap.add_argument("--gpt2-small", metavar="DIR",
                    help="instead, write a GPT-2-small-shaped random model (~550 MB) to DIR")
    ap.add_argument("--llama-1b", metavar="DIR",
                    help="instead, write a TinyLlama-1.1B-shaped random BF16 Llama (~2.2 GB) to DIR")
    a = ap.parse_args()
    torch.set_num_threads(1)  # keeps the torch self-check path deterministic
    if a.gpt2_small:
        generate_gpt2_small(a.gpt2_small)
    elif a.llama_1b:
        generate_llama_1b(a.llama_1b)
    else:
        generate_fixtures(a.out)


if __name__ == "__main__":
    main()
