#!/usr/bin/env python3
"""A Piper voice in Banter against piper-tts itself, as whole processes: `banter say --voice
NAME PASSAGE -o out.wav` beside `piper -m VOICE.onnx -i PASSAGE -f out.wav` (piper-tts 1.8.0 on
onnxruntime, CPU), each a fresh process timed from spawn to exit (start, model load, phonemes,
inference, WAV written), same voice file, same text, passes alternated so the machine's drift
hits both alike; the median of `--runs`.

    python3 tools/bench/piper_whole_process.py --banter target/release/banter \
        --voice joe --onnx PATH/en_US-joe-medium.onnx [--runs 3] [--judge PATH] [--out F.json]

Banter's voice NAME must be in the library the run uses (`banter voices add NAME ONNX`; set
BANTER_LIBRARY to keep it out of your own). Needs `pip install piper-tts==1.8.0`; `--piper`
names its `piper` executable (default: the one on PATH). With `--judge` (the shared judge tool)
both renders are transcribed by Whisper and each engine's WER is printed beside the other's.
Issue 42's targets: speed >= 1.5x piper-tts's, WER no worse.
"""

import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from pathlib import Path


def audio_seconds(path):
    with wave.open(str(path)) as w:
        return w.getnframes() / w.getframerate()


def timed(cmd, env=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed:\n{proc.stderr.decode(errors='replace')}")
    return wall


def wer(judge, wav, text_path):
    out = subprocess.run([judge, "wer", str(wav), "--text-file", str(text_path)],
                         capture_output=True, text=True)
    last = [l for l in out.stdout.splitlines() + out.stderr.splitlines() if "WER" in l]
    if not last:
        return None
    # "= path: WER 1/12 = 0.083"
    frac = last[-1].split("WER", 1)[1].split("=")[0].strip()
    errors, words = frac.split("/")
    return int(errors), int(words)


def main():
    here = Path(__file__).resolve().parent
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--banter", required=True)
    ap.add_argument("--voice", default="joe", help="the Piper voice's name in Banter's library")
    ap.add_argument("--onnx", required=True, help="the same voice's .onnx for piper-tts")
    ap.add_argument("--piper", default=shutil.which("piper") or "piper")
    ap.add_argument("--passages", default=str(here.parent.parent / "assets" / "passages"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--judge")
    ap.add_argument("--out")
    args = ap.parse_args()
    passages = sorted(glob.glob(os.path.join(args.passages, "*.txt")))
    if not passages:
        sys.exit(f"no passages in {args.passages}")
    rows = []
    totals = {"banter": [0.0, 0.0], "piper": [0.0, 0.0]}
    errors = {"banter": [0, 0], "piper": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        for passage in passages:
            name = Path(passage).stem
            text = Path(passage).read_text()
            outs = {"banter": Path(tmp) / f"{name}.banter.wav", "piper": Path(tmp) / f"{name}.piper.wav"}
            walls = {"banter": [], "piper": []}
            for _ in range(args.runs):
                walls["banter"].append(timed([args.banter, "say", "--voice", args.voice, text,
                                              "-o", str(outs["banter"])]))
                walls["piper"].append(timed([args.piper, "-m", args.onnx, "-i", passage,
                                             "-f", str(outs["piper"])]))
            row = {"passage": name}
            for engine in ("banter", "piper"):
                wall = statistics.median(walls[engine])
                secs = audio_seconds(outs[engine])
                totals[engine][0] += wall
                totals[engine][1] += secs
                row[engine] = {"wall_s": round(wall, 3), "audio_s": round(secs, 2),
                               "xrt": round(secs / wall, 2)}
                if args.judge:
                    w = wer(args.judge, outs[engine], passage)
                    if w:
                        row[engine]["wer"] = f"{w[0]}/{w[1]}"
                        errors[engine][0] += w[0]
                        errors[engine][1] += w[1]
            row["speedup"] = round(row["piper"]["wall_s"] / row["banter"]["wall_s"], 2)
            rows.append(row)
            print(f"{name:>12}: banter {row['banter']['wall_s']:.2f} s (xRT {row['banter']['xrt']:.1f}"
                  f"{', WER ' + row['banter']['wer'] if 'wer' in row['banter'] else ''}) | "
                  f"piper-tts {row['piper']['wall_s']:.2f} s (xRT {row['piper']['xrt']:.1f}"
                  f"{', WER ' + row['piper']['wer'] if 'wer' in row['piper'] else ''}) | "
                  f"piper/banter {row['speedup']:.2f}")
    speed = totals["piper"][0] / totals["banter"][0]
    print(f"all passages: banter {totals['banter'][0]:.2f} s for {totals['banter'][1]:.1f} s of audio, "
          f"piper-tts {totals['piper'][0]:.2f} s for {totals['piper'][1]:.1f} s; piper/banter {speed:.2f}")
    if args.judge:
        print(f"WER: banter {errors['banter'][0]}/{errors['banter'][1]}, "
              f"piper-tts {errors['piper'][0]}/{errors['piper'][1]}")
    if args.out:
        Path(args.out).write_text(json.dumps({"rows": rows, "speedup": speed, "errors": errors}, indent=2))


if __name__ == "__main__":
    main()
