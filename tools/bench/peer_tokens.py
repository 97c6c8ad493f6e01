#!/usr/bin/env python3
"""Token windows kokoro-onnx 0.6.1 sends to the model for each passage, as JSON, so that a peer
without espeak-ng (the PyTorch reference on a GPU machine, `kokoro_torch_peer.py`) runs the very
same model inputs.

    /work/peer-venv/bin/python tools/bench/peer_tokens.py --voice af_heart assets/passages/*.txt > tokens.json

Runs kokoro-onnx's own text splitting and phonemization (espeak-ng through espeakng-loader) and
records, per passage, every call of its inner `_infer`: the token ids (without the two 0 pads)
and the voice-table row it picked as style. The model itself is not run (no model file needed).
"""
import argparse
import json
import os
import sys

import numpy as np
from kokoro_onnx import Kokoro


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("passages", nargs="+")
    a = ap.parse_args()
    lang = "en-gb" if a.voice.startswith("b") else "en-us"
    windows = []

    def record(self, tokens, style, speed):
        # `_style_for` picks row min(n, len)-1 of the voice table; the fake table below holds
        # each row's index in its first element, so the row is read back from the style.
        windows.append({"tokens": [int(t) for t in tokens], "style_row": int(np.asarray(style).ravel()[0])})
        # One sample per frame is enough for kokoro-onnx's own joining and trimming.
        return np.zeros(2400, dtype=np.float32), None

    Kokoro._infer = record
    kokoro = Kokoro.__new__(Kokoro)
    from kokoro_onnx.tokenizer import Tokenizer
    kokoro.tokenizer = Tokenizer()
    kokoro.has_timings = False
    table = np.arange(510, dtype=np.float32)[:, None, None] * np.ones((1, 1, 256), dtype=np.float32)
    out = {}
    for path in a.passages:
        windows.clear()
        text = open(path, encoding="utf-8").read()
        kokoro.create(text, voice=table, speed=1.0, lang=lang)
        out[os.path.basename(path)] = list(windows)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
