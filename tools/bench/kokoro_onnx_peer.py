#!/usr/bin/env python3
"""The peer for `banter bench synth`: kokoro-onnx 0.6.1 on onnxruntime (CPU), same int8 model file,
same voice table, same passages, same thread count. Prints one JSON object per passage on stdout.

    python3 tools/bench/kokoro_onnx_peer.py --model-dir DIR --voice af_heart --threads 2 PASSAGE.txt ...

Needs `pip install kokoro-onnx==0.6.1` (which brings onnxruntime and espeak-ng 1.52 via espeakng-loader).
Each passage is rendered once to warm up, then timed. Wall time covers phonemization and inference,
as Banter's figure does.
"""
import argparse
import json
import os
import resource
import sys
import tempfile
import time

import numpy as np
import onnxruntime as rt
from kokoro_onnx import Kokoro


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True)
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("passages", nargs="+")
    a = ap.parse_args()
    opts = rt.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    sess = rt.InferenceSession(os.path.join(a.model_dir, "kokoro-v1.0.int8.onnx"), opts,
                               providers=["CPUExecutionProvider"])
    table = np.fromfile(os.path.join(a.model_dir, "voices", a.voice + ".bin"), dtype=np.float32).reshape(-1, 1, 256)
    with tempfile.TemporaryDirectory() as tmp:
        voices = os.path.join(tmp, "voices.npz")
        np.savez(voices, **{a.voice: table})
        kokoro = Kokoro.from_session(sess, voices)
    lang = "en-gb" if a.voice.startswith("b") else "en-us"
    for path in a.passages:
        text = open(path, encoding="utf-8").read()
        kokoro.create(text, voice=a.voice, speed=1.0, lang=lang)  # warm-up
        best = None
        for _ in range(a.runs):
            t0 = time.perf_counter()
            audio, sr = kokoro.create(text, voice=a.voice, speed=1.0, lang=lang)
            wall = time.perf_counter() - t0
            best = wall if best is None else min(best, wall)
        print(json.dumps({"passage": os.path.basename(path), "audio_s": len(audio) / sr, "wall_s": best,
                          "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
