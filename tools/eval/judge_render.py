#!/usr/bin/env python3
"""Judge a rendered episode line by line: Whisper WER of every line against its script text, and
GE2E similarity of every line to reference clips of each cast voice (is each line in the right
voice?).

    python3 tools/eval/judge_render.py EPISODE.wav SCRIPT [--banter target/release/banter]
        [--judge ../shared/tools/judge/judge] [--work /tmp/judge-render]

EPISODE.wav must have been rendered from SCRIPT by `banter render` (its EPISODE.chapters.json
gives each line's span). The script's text per line comes from `banter script check --json`.
Reference clips: `banter say` of a fixed passage in each cast voice. Prints the judge's output,
then a summary: overall WER and the share of lines whose nearest reference is their own voice.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import wave

PASSAGE = (
    "The library opens at nine on weekdays. Bring your own bag, and please return the books "
    "you borrowed last month before you take out new ones."
)


def read_wav(path):
    with wave.open(path, "rb") as w:
        return w.getframerate(), w.getsampwidth(), w.readframes(w.getnframes())


def write_wav(path, rate, width, frames):
    with wave.open(path, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(width)
        w.setframerate(rate)
        w.writeframes(frames)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("episode")
    ap.add_argument("script")
    ap.add_argument("--banter", default="target/release/banter")
    ap.add_argument("--judge", default=os.path.join(os.path.dirname(__file__), "../../../shared/tools/judge/judge"))
    ap.add_argument("--work", default="/tmp/judge-render")
    a = ap.parse_args()

    stem = re.sub(r"\.[^.]+$", "", a.episode)
    markers = json.load(open(stem + ".chapters.json"))
    check = json.loads(subprocess.check_output([a.banter, "script", "check", "--json", a.script]))
    spoken = [l for l in check["lines"] if re.search(r"\w", l["text"])]
    assert len(spoken) == len(markers["lines"]), "markers and script disagree on the lines"

    lines_dir = os.path.join(a.work, "lines")
    texts_dir = os.path.join(a.work, "texts")
    refs_dir = os.path.join(a.work, "refs")
    for d in (lines_dir, texts_dir, refs_dir):
        os.makedirs(d, exist_ok=True)
    rate, width, frames = read_wav(a.episode)
    voice_of = {}
    for i, (mark, line) in enumerate(zip(markers["lines"], spoken)):
        name = f"line_{i:03d}"
        s, e = int(mark["start"] * rate), int(mark["end"] * rate)
        write_wav(os.path.join(lines_dir, name + ".wav"), rate, width, frames[s * width : e * width])
        open(os.path.join(texts_dir, name + ".txt"), "w").write(line["text"])
        voice_of[name] = mark["voice"]
    for voice in sorted(set(voice_of.values())):
        d = os.path.join(refs_dir, voice.replace(":", "_").replace("+", "-"))
        os.makedirs(d, exist_ok=True)
        subprocess.check_call([a.banter, "say", PASSAGE, "--voice", voice, "-o", os.path.join(d, "ref.wav")],
                              stderr=subprocess.DEVNULL)

    wer = subprocess.run([a.judge, "wer", lines_dir, "--texts-dir", texts_dir], capture_output=True, text=True)
    print(wer.stdout, wer.stderr, file=sys.stderr)
    refs = sorted(os.path.join(refs_dir, d) for d in os.listdir(refs_dir))
    sim = subprocess.run([a.judge, "sim", *sorted(os.path.join(lines_dir, f) for f in os.listdir(lines_dir)),
                          "--refs", *refs], capture_output=True, text=True)
    print(sim.stdout, sim.stderr, file=sys.stderr)
    right = 0
    for line in sim.stdout.splitlines():
        m = re.search(r"(line_\d+)\.wav.*?nearest[^A-Za-z0-9_]*([\w:+.\-]+)", line)
        if m:
            want = voice_of[m.group(1)].replace(":", "_").replace("+", "-")
            right += m.group(2).rstrip("/").endswith(want)
    print(json.dumps({"lines": len(voice_of), "nearest_is_own_voice": right}, indent=1))


if __name__ == "__main__":
    main()
