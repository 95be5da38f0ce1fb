#!/usr/bin/python3
"""PyTorch eager float32 peer of `attention-lab-cli bench --model`: the same
GPT-2 checkpoint (a Hugging Face folder: config.json + model.safetensors, F32,
Conv1D [in, out] weights) through a plain GPT-2 forward written here with
torch.nn.functional ops, timed as the CLI times its own forward_ms (the full
forward of T token ids, the last row's logits, median of runs after a warm-up).

    /usr/bin/python3 bench/torch_gpt2_peer.py MODEL_DIR [--T 256 1024] [--threads 2] [--runs 5] [--json]

The safetensors header is parsed by hand (no safetensors package): u64 little
endian length N, N bytes of JSON, then the tensors' bytes. Only what a GPT-2
forward uses is read (the attn.bias / attn.masked_bias buffers are skipped).

BLAS: Debian's torch 1.13 calls whatever libblas.so.3 the system resolves; with
only the reference BLAS (libblas3) installed its products are slow and the
comparison says little. A fair peer uses OpenBLAS: install libopenblas0-openmp
(or -pthread), or, without touching the system, extract the package
(`dpkg-deb -x libopenblas0-pthread_*.deb DIR`) and run this script with
LD_LIBRARY_PATH=DIR/usr/lib/x86_64-linux-gnu/openblas-pthread. The BLAS in use
is printed. On this project's build machine the environment sets
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (safe for old builds, slower): for a
benchmark run unset them (`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`).

--check-ids I,J,... prints the last row's top-5 logits for those ids instead of
timing, to compare with `attention-lab-cli trace --model MODEL --ids I,J,...`.
"""

import argparse
import json
import math
import os
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def read_safetensors(path, wanted):
    """{name: float32 tensor} for the names `wanted` accepts; the file's bytes
    are read once into one writable buffer that the tensors view (no copies)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = bytearray(os.path.getsize(path) - 8 - n)
        view = memoryview(data)
        got = 0
        while got < len(data):
            k = f.readinto(view[got:])
            if not k:
                raise ValueError("%s: file ends early" % path)
            got += k
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or not wanted(name):
            continue
        if info["dtype"] != "F32":
            raise ValueError("%s: tensor %s is %s; this peer reads F32 only" % (path, name, info["dtype"]))
        begin, end = info["data_offsets"]
        shape = info["shape"]
        count = math.prod(shape) if shape else 1
        if end - begin != 4 * count:
            raise ValueError("%s: tensor %s: %d bytes for shape %s" % (path, name, end - begin, shape))
        t = torch.frombuffer(data, dtype=torch.float32, count=count, offset=begin)
        out[name] = t.view(*shape) if shape else t.view(())
    return out


class Gpt2:
    def __init__(self, folder):
        with open(os.path.join(folder, "config.json")) as f:
            c = json.load(f)
        if c.get("model_type") != "gpt2":
            raise ValueError("%s: model_type %r; this peer runs GPT-2 only" % (folder, c.get("model_type")))
        self.layers, self.heads, self.d = c["n_layer"], c["n_head"], c["n_embd"]
        self.positions, self.vocab = c["n_positions"], c["vocab_size"]
        self.eps = c.get("layer_norm_epsilon", 1e-5)
        if c.get("activation_function", "gelu_new") not in ("gelu_new", "gelu_pytorch_tanh"):
            raise ValueError("activation %r: this peer runs gelu_new only" % c.get("activation_function"))
        p = read_safetensors(os.path.join(folder, "model.safetensors"),
                             lambda n: not n.endswith(".attn.bias") and not n.endswith(".attn.masked_bias"))
        # HF files may carry a "transformer." prefix (GPT2LMHeadModel)
        p = {k[len("transformer."):] if k.startswith("transformer.") else k: v for k, v in p.items()}
        self.p = p
        self.lm_head = p.get("lm_head.weight", p["wte.weight"])  # tied: the token embeddings
        self.mask = torch.ones(self.positions, self.positions, dtype=torch.bool).triu(1)  # True = hidden

    def forward(self, ids):
        """The last row's logits (vocab) for a 1-D LongTensor of ids."""
        p, D, H = self.p, self.d, self.heads
        dh = D // H
        T = ids.shape[0]
        x = p["wte.weight"][ids] + p["wpe.weight"][:T]
        mask = self.mask[:T, :T]
        scale = 1.0 / math.sqrt(dh)
        for i in range(self.layers):
            h = "h.%d." % i
            a = F.layer_norm(x, (D,), p[h + "ln_1.weight"], p[h + "ln_1.bias"], self.eps)
            qkv = torch.addmm(p[h + "attn.c_attn.bias"], a, p[h + "attn.c_attn.weight"])  # Conv1D: x·W + b
            q, k, v = (t.view(T, H, dh).transpose(0, 1) for t in qkv.split(D, dim=1))  # H × T × dh
            s = torch.matmul(q, k.transpose(1, 2)).mul_(scale).masked_fill_(mask, float("-inf"))
            w = torch.softmax(s, dim=-1)
            ctx = torch.matmul(w, v).transpose(0, 1).reshape(T, D)
            x = x + torch.addmm(p[h + "attn.c_proj.bias"], ctx, p[h + "attn.c_proj.weight"])
            m = F.layer_norm(x, (D,), p[h + "ln_2.weight"], p[h + "ln_2.bias"], self.eps)
            act = F.gelu(torch.addmm(p[h + "mlp.c_fc.bias"], m, p[h + "mlp.c_fc.weight"]), approximate="tanh")
            x = x + torch.addmm(p[h + "mlp.c_proj.bias"], act, p[h + "mlp.c_proj.weight"])
        last = F.layer_norm(x[-1:], (D,), p["ln_f.weight"], p["ln_f.bias"], self.eps)
        return F.linear(last, self.lm_head)[0]


def blas_in_use():
    """The BLAS library this process mapped (what torch's products call)."""
    found = set()
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            base = os.path.basename(path)
            if "blas" in base or "blis" in base or "mkl" in base:
                found.add(os.path.realpath(path))
    return ", ".join(sorted(found)) or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="a GPT-2 folder: config.json + model.safetensors (F32)")
    ap.add_argument("--T", type=int, nargs="+", default=[256, 1024], help="token counts (default 256 1024)")
    ap.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    ap.add_argument("--runs", type=int, default=5, help="timed runs per T after one warm-up (default 5)")
    ap.add_argument("--seed", type=int, default=0x70c3e5, help="seed of the random token ids")
    ap.add_argument("--json", action="store_true", help="one JSON object per T instead of a line of text")
    ap.add_argument("--check-ids", metavar="I,J,...", help="print the last row's top-5 logits for these ids")
    a = ap.parse_args()

    torch.set_num_threads(a.threads)
    t0 = time.perf_counter()
    model = Gpt2(a.model)
    load_ms = (time.perf_counter() - t0) * 1e3
    blas = blas_in_use()

    with torch.inference_mode():
        if a.check_ids:
            ids = torch.tensor([int(s) for s in a.check_ids.replace(",", " ").split()], dtype=torch.long)
            logits = model.forward(ids)
            top = torch.topk(logits, 5)
            print(json.dumps({"ids": ids.tolist(), "top5": top.indices.tolist(),
                              "logits": [round(v, 6) for v in top.values.tolist()]}))
            return 0
        g = torch.Generator().manual_seed(a.seed)
        for T in a.T:
            if not 1 <= T <= model.positions:
                print("torch_gpt2_peer: --T %d: expected 1 to %d (the model's positions)" % (T, model.positions),
                      file=sys.stderr)
                return 2
            ids = torch.randint(0, model.vocab, (T,), generator=g)
            t0 = time.perf_counter()
            model.forward(ids)
            first_ms = (time.perf_counter() - t0) * 1e3
            ms = []
            for _ in range(a.runs):
                t0 = time.perf_counter()
                out = model.forward(ids)
                ms.append((time.perf_counter() - t0) * 1e3)
                assert torch.isfinite(out).all()
            forward_ms = float(np.median(ms))
            r = {"peer": "pytorch-eager", "torch": torch.__version__, "T": T, "threads": torch.get_num_threads(),
                 "forward_ms": round(forward_ms, 3), "forward_first_ms": round(first_ms, 3), "runs": len(ms),
                 "load_ms": round(load_ms, 1), "blas": blas}
            if a.json:
                print(json.dumps(r), flush=True)
            else:
                print("pytorch %s eager float32, %d threads, T=%d: forward_ms %.2f (median of %d; first %.2f), "
                      "load %.0f ms; BLAS %s" % (torch.__version__, r["threads"], T, forward_ms, len(ms), first_ms,
                                                  load_ms, blas), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
