#!/usr/bin/env python3
"""Intelligibility and voice check of the port: render the golden sentences (and the bundled
passages) with Banter and with kokoro-onnx (same int8 model, same voices), then run the shared
judge on both: Whisper word error rate, and GE2E similarity of Banter's audio to kokoro-onnx's.

    python3 tools/eval/judge_goldens.py --banter target/release/banter [--out /tmp/judge-run]

Needs kokoro-onnx 0.6.1 (`pip install kokoro-onnx==0.6.1`) and ../shared/tools/judge/judge.
Prints the judge's figures for both engines side by side.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
JUDGE = os.path.normpath(os.path.join(ROOT, "..", "shared", "tools", "judge", "judge"))


def model_dir():
    if os.environ.get("BANTER_MODEL_DIR"):
        return os.environ["BANTER_MODEL_DIR"]
    base = os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share"))
    return os.path.join(base, "banter", "models")


def write_wav(path, audio, sr):
    import wave
    pcm = (np.clip(audio, -1, 1) * 32767).round().astype("<i2")
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes(pcm.tobytes())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--banter", required=True)
    ap.add_argument("--out", default="/tmp/banter-judge-run")
    a = ap.parse_args()
    md = model_dir()
    cases = json.load(open(os.path.join(ROOT, "tests", "fixtures", "goldens", "stages", "index.json")))
    for name in sorted(os.listdir(os.path.join(ROOT, "assets", "passages"))):
        text = open(os.path.join(ROOT, "assets", "passages", name)).read().strip()
        for voice in ("af_heart", "am_michael", "bf_emma"):
            cases.append({"file": f"{voice}_{name[:-4]}", "voice": voice, "text": text})
    dirs = {e: os.path.join(a.out, e) for e in ("banter", "kokoro_onnx")}
    for d in dirs.values():
        os.makedirs(d, exist_ok=True)

    import onnxruntime as rt
    from kokoro_onnx import Kokoro
    opts = rt.SessionOptions()
    opts.intra_op_num_threads = os.cpu_count()
    sess = rt.InferenceSession(os.path.join(md, "kokoro-v1.0.int8.onnx"), opts, providers=["CPUExecutionProvider"])
    voices = {}
    for c in cases:
        voices[c["voice"]] = np.fromfile(os.path.join(md, "voices", c["voice"] + ".bin"), dtype=np.float32).reshape(-1, 1, 256)
    npz = os.path.join(a.out, "voices.npz")
    np.savez(npz, **voices)
    kokoro = Kokoro.from_session(sess, npz)

    for c in cases:
        stem = c["file"].replace(".safetensors", "")
        for d in dirs.values():
            open(os.path.join(d, stem + ".txt"), "w").write(c["text"])
        subprocess.run([a.banter, "say", c["text"], "--voice", c["voice"], "-o", os.path.join(dirs["banter"], stem + ".wav")],
                       check=True, stderr=subprocess.DEVNULL)
        lang = "en-gb" if c["voice"].startswith("b") else "en-us"
        audio, sr = kokoro.create(c["text"], voice=c["voice"], speed=1.0, lang=lang)
        write_wav(os.path.join(dirs["kokoro_onnx"], stem + ".wav"), audio, sr)

    for engine, d in dirs.items():
        print(f"== {engine}: word error rate", flush=True)
        subprocess.run([JUDGE, "wer", d, "--texts-dir", d], check=True)
    print("== speaker similarity: each Banter render against kokoro-onnx's renders pooled per voice", flush=True)
    refs = []
    for voice in sorted(voices):
        ref = os.path.join(a.out, "ref_" + voice)
        os.makedirs(ref, exist_ok=True)
        for f in os.listdir(dirs["kokoro_onnx"]):
            if f.startswith(voice) and f.endswith(".wav"):
                src = os.path.join(dirs["kokoro_onnx"], f)
                dst = os.path.join(ref, f)
                if not os.path.exists(dst):
                    os.symlink(src, dst)
        refs.append(ref)
    ours = sorted(os.path.join(dirs["banter"], f) for f in os.listdir(dirs["banter"]) if f.endswith(".wav"))
    subprocess.run([JUDGE, "sim", *ours, "--refs", *refs], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
