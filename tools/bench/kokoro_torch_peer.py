#!/usr/bin/env python3
"""A GPU peer for Banter: the reference Kokoro (PyPI `kokoro` 0.9.4, `KModel`, PyTorch eager,
float32) on the same weights, the same voice and the same model inputs as kokoro-onnx. This is
what Kokoro-FastAPI runs; it is the yardstick for `banter bench synth --device cuda`.

    python3 tools/bench/kokoro_torch_peer.py --kokoro-src SITE --kokoro-map kokoro_map.py \
        --model-dir MODELS --tokens tokens.json [--device cuda] [--runs 3] [--streams 1]

SITE: a folder holding the reference package `kokoro/` (the wheel unpacked, e.g.
`pip install --no-deps --target SITE kokoro==0.9.4`). Only its model modules are imported
(model, modules, istftnet, custom_stft): the package's `__init__` pulls in misaki's G2P, which
is not needed because the inputs are token ids.
--kokoro-map: the project's shared `tools/kokoro-ref/kokoro_map.py`; it dequantizes the int8
ONNX in MODELS into the reference's parameter names (weight-norm pairs as weight_g/weight_v).
--tokens: `peer_tokens.py` output: per passage, the token windows kokoro-onnx sends to its model
and the voice-table row it uses as style for each.

Prints one JSON object per passage: audio seconds, best wall seconds of --runs timed runs (after
one warm-up), xRT, the first window's time (what a listener waits for), peak GPU memory. With
--streams N, N copies of each passage run on N Python threads at once (one CUDA stream each),
the way a server without cross-request batching serves N listeners.
"""
import argparse
import importlib.machinery
import importlib.util
import json
import os
import sys
import threading
import time

import numpy as np


def load_reference(site):
    # A bare package object for `kokoro`, so `kokoro.model` imports without `kokoro/__init__`.
    spec = importlib.machinery.ModuleSpec("kokoro", None, is_package=True)
    pkg = importlib.util.module_from_spec(spec)
    pkg.__path__ = [os.path.join(site, "kokoro")]
    sys.modules["kokoro"] = pkg
    from kokoro.model import KModel
    return KModel


def load_map(path):
    spec = importlib.util.spec_from_file_location("kokoro_map", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kokoro-src", required=True)
    ap.add_argument("--kokoro-map", required=True)
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--tokens", required=True)
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--streams", type=int, default=1)
    ap.add_argument("--npz", default=None, help="dequantized weights (written here if missing)")
    a = ap.parse_args()

    import torch
    KModel = load_reference(a.kokoro_src)
    kmap = load_map(a.kokoro_map)
    onnx_path = os.path.join(a.model_dir, "kokoro-v1.0.int8.onnx")
    npz = a.npz or os.path.join(os.path.dirname(os.path.abspath(a.tokens)), "kokoro_ref_f32.npz")
    if not os.path.exists(npz):
        t0 = time.perf_counter()
        saved = sys.argv
        sys.argv = ["kokoro_map.py", "--onnx", onnx_path, "--tsv", npz + ".tsv", "--npz", npz]
        try:
            kmap.main()
        finally:
            sys.argv = saved
        print(f"# dequantized the ONNX into {npz} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    config = dict(kmap.CONFIG)
    config.update({"vocab": {}, "dropout": 0.2})
    config["plbert"] = dict(config["plbert"], dropout=0.1)
    empty = npz + ".empty.pth"
    torch.save({}, empty)
    model = KModel(repo_id="hexgrad/Kokoro-82M", config=config, model=empty)
    want = model.state_dict()
    weights = np.load(npz)
    loaded = {k: torch.from_numpy(weights[k]) for k in weights.files if k in want}
    # Two kinds of parameter are absent from the ONNX export, as kokoro_map.py reports: the
    # InstanceNorm1d affine pairs inside every AdaIN (the export folded them away: they are the
    # identity, ones and zeros) and ALBERT's pooler (unused: KModel reads last_hidden_state).
    modules = dict(model.named_modules())
    missing = []
    for k in want:
        if k in loaded:
            continue
        owner, _, leaf = k.rpartition(".")
        mod = modules.get(owner)
        if isinstance(mod, torch.nn.InstanceNorm1d) and leaf in ("weight", "bias"):
            loaded[k] = torch.ones_like(want[k]) if leaf == "weight" else torch.zeros_like(want[k])
        elif owner == "bert.pooler" or owner.startswith("bert.pooler."):
            loaded[k] = want[k]
        else:
            missing.append(k)
    if missing:
        raise SystemExit(f"reference parameters missing from {npz}: {missing[:8]} ({len(missing)} in all)")
    model.load_state_dict(loaded, strict=True)
    model = model.to(a.device).eval()

    table = np.fromfile(os.path.join(a.model_dir, "voices", a.voice + ".bin"), dtype=np.float32).reshape(-1, 256)
    passages = json.load(open(a.tokens))
    device = torch.device(a.device)

    def render(windows, stream=None):
        """Runs every window in order; returns (samples, seconds to the first window's audio)."""
        samples, first = 0, None
        t0 = time.perf_counter()
        ctx = torch.cuda.stream(stream) if stream is not None else torch.no_grad()
        with ctx, torch.no_grad():
            for w in windows:
                ids = torch.tensor([[0, *w["tokens"], 0]], dtype=torch.long, device=device)
                ref = torch.from_numpy(table[w["style_row"]][None, :]).to(device)
                audio, _ = model.forward_with_tokens(ids, ref, 1.0)
                audio = audio.cpu()  # a listener needs the samples on the host
                samples += audio.numel()
                if first is None:
                    first = time.perf_counter() - t0
        return samples, first

    for name, windows in passages.items():
        render(windows)  # warm-up
        best = None
        for _ in range(a.runs):
            if device.type == "cuda":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            t0 = time.perf_counter()
            if a.streams == 1:
                samples, first = render(windows)
            else:
                results = [None] * a.streams
                streams = [torch.cuda.Stream() if device.type == "cuda" else None for _ in range(a.streams)]

                def one(i):
                    results[i] = render(windows, streams[i])

                threads = [threading.Thread(target=one, args=(i,)) for i in range(a.streams)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                samples = sum(r[0] for r in results)
                first = max(r[1] for r in results)
            if device.type == "cuda":
                torch.cuda.synchronize()
            wall = time.perf_counter() - t0
            if best is None or wall < best[0]:
                best = (wall, samples, first)
        wall, samples, first = best
        audio_s = samples / 24000
        print(json.dumps({
            "peer": "kokoro 0.9.4 KModel, PyTorch eager f32",
            "device": str(device), "streams": a.streams, "passage": name,
            "windows": len(windows), "audio_s": round(audio_s, 3), "wall_s": round(wall, 4),
            "xrt": round(audio_s / wall, 1), "first_window_s": round(first, 4),
            "peak_gpu_mb": round(torch.cuda.max_memory_allocated() / 2**20) if device.type == "cuda" else None,
        }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
