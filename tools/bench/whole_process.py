#!/usr/bin/env python3
"""Whole-process speed as a new user meets it: `banter say PASSAGE -o out.wav` against the
peer's equivalent one-shot script (kokoro-onnx 0.6.1 on onnxruntime, int8, same voice, same
text, 2 threads), each a fresh process timed from spawn to exit (interpreter or binary start,
model load, phonemes, inference, WAV written), on a quiet machine and beside a competing
2-process CPU load that this script starts itself, identical for both engines.

    python3 tools/bench/whole_process.py --banter target/release/banter [--runs 3] [--out FILE.json]

Prints, per condition and passage: wall seconds for each, the ratio peer / Banter (> 1: Banter
faster), xRT (audio seconds / wall seconds), peak RSS of each process (its own
`ru_maxrss`, from wait4) and the cores it kept busy (CPU seconds / wall seconds: beside the
load a fair share is 1.0 of the 2 cores, and less means its threads waited on each other); then each engine's xRT under load as a share of its quiet xRT, and
a near-empty render ("Hi.") for the fixed cost of starting (model load). Issue 21's targets:
ratio ≥ 1.5 quiet and ≥ 1.2 loaded, Banter's loaded share ≥ the peer's, start ≤ 1 s, RSS ≤ 600 MB.
Needs `pip install kokoro-onnx==0.6.1` for `--python`. Passes alternate Banter and the peer so
drift in the machine's load hits both alike; the median of `--runs` is reported.
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path

PEER = r'''
import sys, os, numpy as np, onnxruntime as rt, wave
from kokoro_onnx import Kokoro
model_dir, voice, text_path, out = sys.argv[1:5]
opts = rt.SessionOptions(); opts.intra_op_num_threads = 2; opts.inter_op_num_threads = 1
sess = rt.InferenceSession(os.path.join(model_dir, "kokoro-v1.0.int8.onnx"), opts,
                           providers=["CPUExecutionProvider"])
table = np.fromfile(os.path.join(model_dir, "voices", voice + ".bin"), dtype=np.float32).reshape(-1, 1, 256)
import tempfile
with tempfile.TemporaryDirectory() as tmp:
    vp = os.path.join(tmp, "v.npz"); np.savez(vp, **{voice: table})
    k = Kokoro.from_session(sess, vp)
    audio, sr = k.create(open(text_path, encoding="utf-8").read(), voice=voice, speed=1.0,
                         lang="en-gb" if voice.startswith("b") else "en-us")
pcm = (np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes()
with wave.open(out, "wb") as w:
    w.setnchannels(1); w.setsampwidth(2); w.setframerate(sr); w.writeframes(pcm)
'''


def run(cmd, env=None):
    """Runs a process to its end; (wall seconds, peak RSS MB, cores used: CPU seconds over wall
    seconds) of that process alone."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{cmd[0]} failed:\n{err}")
    return wall, usage.ru_maxrss / 1024, (usage.ru_utime + usage.ru_stime) / wall


def audio_seconds(path):
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def busy_load(n):
    """n processes spinning on one core each (the competing load)."""
    code = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default_bin = Path(os.environ.get("CARGO_TARGET_DIR", "target")) / "release" / "banter"
    ap.add_argument("--banter", default=str(default_bin))
    ap.add_argument("--python", default=sys.executable, help="a Python with kokoro-onnx 0.6.1")
    ap.add_argument("--models", default=os.path.expanduser("~/.local/share/banter/models"))
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--passages", nargs="*", default=None)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--load", type=int, default=2, help="competing busy processes (0: quiet only)")
    ap.add_argument("--out")
    a = ap.parse_args()
    passages = a.passages or sorted(glob.glob("assets/passages/*.txt"))
    tmp = Path(tempfile.mkdtemp(prefix="whole-process-"))
    hi = tmp / "hi.txt"
    hi.write_text("Hi.")
    peer_py = tmp / "peer.py"
    peer_py.write_text(PEER)
    env = dict(os.environ, BANTER_LIBRARY=str(tmp / "library.sqlite"))

    def banter(text_path):
        out = tmp / "banter.wav"
        # The text on standard input, as a user pipes it; `exec` so wait4 sees banter itself.
        wall, rss, cores = run(["sh", "-c", 'exec "$0" say - --voice "$1" -o "$2" --models "$3" < "$4"',
                                a.banter, a.voice, str(out), a.models, str(text_path)], env)
        return wall, rss, audio_seconds(out), cores

    def peer(text_path):
        out = tmp / "peer.wav"
        wall, rss, cores = run([a.python, str(peer_py), a.models, a.voice, str(text_path), str(out)])
        return wall, rss, audio_seconds(out), cores

    results = {}
    conditions = [("quiet", 0)] + ([(f"{a.load} busy processes", a.load)] if a.load else [])
    for name, load in conditions:
        procs = busy_load(load)
        try:
            time.sleep(0.5 if load else 0)
            rows = []
            for path in [hi] + [Path(p) for p in passages]:
                b, p = [], []
                for _ in range(a.runs):
                    b.append(banter(path))
                    p.append(peer(path))
                med = lambda xs, i: statistics.median(x[i] for x in xs)
                rows.append({
                    "passage": path.name, "audio_s": med(b, 2),
                    "banter_s": med(b, 0), "peer_s": med(p, 0),
                    "banter_rss_mb": max(x[1] for x in b), "peer_rss_mb": max(x[1] for x in p),
                    "peer_audio_s": med(p, 2),
                    "banter_cores": med(b, 3), "peer_cores": med(p, 3),
                })
            results[name] = rows
        finally:
            for q in procs:
                q.kill()
    print(f"whole processes, {a.runs} runs each (median), voice {a.voice}, banter {a.banter}")
    for name, rows in results.items():
        print(f"\n{name}:")
        print(f"{'passage':<22}{'audio s':>8}{'banter s':>10}{'peer s':>9}{'peer/banter':>12}"
              f"{'xRT b':>8}{'xRT p':>8}{'RSS b MB':>10}{'RSS p MB':>10}{'cores b':>9}{'cores p':>9}")
        for r in rows:
            print(f"{r['passage']:<22}{r['audio_s']:>8.2f}{r['banter_s']:>10.2f}{r['peer_s']:>9.2f}"
                  f"{r['peer_s'] / r['banter_s']:>12.2f}{r['audio_s'] / r['banter_s']:>8.2f}"
                  f"{r['peer_audio_s'] / r['peer_s']:>8.2f}{r['banter_rss_mb']:>10.0f}{r['peer_rss_mb']:>10.0f}"
                  f"{r['banter_cores']:>9.2f}{r['peer_cores']:>9.2f}")
        body = [r for r in rows if r["passage"] != "hi.txt"]
        tb, tp = sum(r["banter_s"] for r in body), sum(r["peer_s"] for r in body)
        print(f"{'all passages':<22}{sum(r['audio_s'] for r in body):>8.2f}{tb:>10.2f}{tp:>9.2f}{tp / tb:>12.2f}")
    if len(results) == 2:
        (q, quiet), (l, loaded) = results.items()
        def share(key, audio_key):
            xq = sum(r[audio_key] for r in quiet[1:]) / sum(r[key] for r in quiet[1:])
            xl = sum(r[audio_key] for r in loaded[1:]) / sum(r[key] for r in loaded[1:])
            return xq, xl, xl / xq
        bq, bl, bs = share("banter_s", "audio_s")
        pq, pl, ps = share("peer_s", "peer_audio_s")
        print(f"\nxRT quiet → loaded: banter {bq:.2f} → {bl:.2f} ({bs:.0%} kept), "
              f"peer {pq:.2f} → {pl:.2f} ({ps:.0%} kept)")
    if a.out:
        Path(a.out).write_text(json.dumps(results, indent=1))
        print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
