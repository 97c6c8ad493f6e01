#!/usr/bin/env python3
"""Write tests/fixtures/goldens/phonemes.json: kokoro-onnx's phonemes and token ids.

The peer implementation (PyPI kokoro-onnx 0.6.1 with phonemizer 3.4 and espeak-ng 1.52 from
espeakng-loader) is the reference for Banter's text -> phoneme -> id pipeline. For every case
this records:

- ``kokoro``: what kokoro-onnx tokenizes, i.e. ``Tokenizer.phonemize(text, lang)`` followed by
  the whitespace collapse that ``Kokoro._prepare`` applies (``" ".join(p.split())``);
- ``ids``: ``Tokenizer.tokenize`` of that string (no length limit);
- ``remove_flags`` / ``remove_flags_ids``: the same pipeline with phonemizer's
  ``language_switch="remove-flags"``. Banter strips espeak's language-switch flags such as
  ``(en)`` (kokoro-port.md section 6), so this is the string Banter must reproduce exactly;
  it differs from ``kokoro`` only where espeak switched language.

It also records kokoro-onnx's ``split_phonemes`` batches for a few long strings, the espeak
voice identifier phonemizer picks for each language code, and ``fuzz``: 400 seeded random
strings of punctuation, numbers, hyphens, whitespace, emoji and control characters (plus
space-separated native words for hi, ja, es) with their remove-flags phonemes (Mandarin left
out: see the e2e test's note on cmn).

Run from the repository root (needs kokoro-onnx, phonemizer and espeakng-loader installed):

    python3 tools/goldens/phonemes.py            # writes tests/fixtures/goldens/phonemes.json
    python3 tools/goldens/phonemes.py --check    # exits 1 if the committed file is stale
"""

import argparse
import json
import random
import sys
from importlib.metadata import version
from pathlib import Path

import phonemizer
from kokoro_onnx.chunker import split_phonemes
from kokoro_onnx.tokenizer import Tokenizer, _espeak_lock
from phonemizer.backend.espeak.wrapper import EspeakWrapper

OUT = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "goldens" / "phonemes.json"

ENGLISH = [
    "Welcome back to the show.",
    "The quick brown fox jumps over the lazy dog.",
    "In 1984, the population was 3,456,789 people.",
    "It costs $12.50, or about £9.99 today.",
    "She was born on July 4th, 1776, in Philadelphia.",
    "Meet Dr. Smith and Mrs. O'Brien at 10:30 a.m.",
    "Is this the real life? Is this just fantasy?",
    "Wow! That's incredible!",
    'He said, "I\'ll be back," and left.',
    "The results (see Table 2) were surprising.",
    "I wanted to go\u2014but it was raining.",
    "Well... I suppose so\u2026 maybe.",
    "Don't, won't, can't, shouldn't've.",
    "A state-of-the-art, well-known, twenty-one-year-old approach.",
    "NASA and the FBI met at IBM's headquarters in NYC.",
    "iPhone, eBay and McDonald's are MiXeD CaSe names.",
    "The value of pi is approximately 3.14159.",
    "Version 2.0 was released on 2023-05-17.",
    "Call me at 555-123-4567, or e-mail john@example.com.",
    "We grew 25% in Q3; profits rose to \u20ac1.2 million.",
    "Henry VIII had six wives; Louis XIV ruled France.",
    "\u201cCurly quotes\u201d and \u00absome guillemets\u00bb appear here.",
    "Lists: apples, oranges; bananas [ripe] and {fresh} kiwis!",
    "Wait... what?! Really?!",
    "\u00bfDo Spanish marks \u00a1change anything?",
    "First line.\nSecond line, after a newline.",
    "Tabs\tand   multiple   spaces   collapse.",
    "The 21st century began in 2001, not 2000.",
    "Temperatures hit -5\u00b0C at 6 a.m. on Jan. 3rd.",
    "Read chapters 1-3, e.g. the intro, i.e. the basics, etc.",
    "Oh\u2026 (quietly) \u2014 fine.",
    "...",
    "Hello",
    "He paid 3.5 dollars for 2.25 pounds.",
    "Mr. and Ms. Jones live on Elm St. near the U.K. embassy.",
    "I love rock 'n' roll.",
    "Visit www.example.org/path for more info.",
    "The meeting is at 3pm, not 3am!",
    "Smile \U0001F600 and wave \U0001F44B.",
    "WHY ARE YOU SHOUTING?",
    "  Leading and trailing spaces.  ",
    "\u201cWho\u2019s there?\u201d she asked \u2014 nervously.",
    "Numbers like 1,000 and 1.000 and 0.5 behave differently.",
    "Semicolon; colon: comma, period. Question? Exclamation!",
]

OTHERS = {
    "es": [
        "\u00bfD\u00f3nde est\u00e1 la biblioteca? \u00a1Hola, amigo!",
        "Tengo 25 a\u00f1os y vivo en Madrid desde 2010.",
        "El ni\u00f1o comi\u00f3 una manzana roja.",
        "Me gusta el f\u00fatbol y el rock.",
    ],
    "fr-fr": [
        "Bonjour, comment allez-vous ?",
        "J'aime le football et le week-end.",
        "\u00ab Il fait beau aujourd'hui \u00bb, dit-elle.",
        "Il y a 42 chats dans la maison.",
    ],
    "hi": [
        "\u0928\u092e\u0938\u094d\u0924\u0947, \u0906\u092a \u0915\u0948\u0938\u0947 \u0939\u0948\u0902?",
        "\u092e\u0948\u0902 \u0939\u093f\u0902\u0926\u0940 \u092c\u094b\u0932\u0924\u093e \u0939\u0942\u0901\u0964",
        "\u092f\u0939 \u0915\u093f\u0924\u093e\u092c 25 \u0930\u0941\u092a\u092f\u0947 \u0915\u0940 \u0939\u0948\u0964",
    ],
    "it": [
        "Buongiorno, come stai?",
        "Il gatto dorme sul divano da tre ore.",
        "Ho comprato 12 uova al mercato.",
    ],
    "pt-br": [
        "Ol\u00e1, tudo bem? Eu moro no Brasil.",
        "A cora\u00e7\u00e3o n\u00e3o se manda.",
        "Comprei 3 p\u00e3es na padaria.",
    ],
    "ja": [
        "\u3053\u3093\u306b\u3061\u306f\u3001\u5143\u6c17\u3067\u3059\u304b\uff1f",
        "\u79c1\u306f\u65e5\u672c\u8a9e\u3092\u52c9\u5f37\u3057\u3066\u3044\u307e\u3059\u3002",
        "\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3002",
    ],
    "cmn": [
        "\u4f60\u597d\uff0c\u4e16\u754c\u3002",
        "\u6211\u559c\u6b22\u5b66\u4e60\u4e2d\u6587\u3002",
        "\u4eca\u5929\u5929\u6c14\u5f88\u597d\uff01",
    ],
}

# en-gb gets its own copy of a few English sentences so the accents can be told apart.
EN_GB = [
    "Welcome back to the show.",
    "The quick brown fox jumps over the lazy dog.",
    "I can't go to the theatre tomorrow; it's a bit of a bother.",
    "In 1984, the population was 3,456,789 people.",
    "Schedule a tomato, aluminium and yoghurt tasting!",
    '"Better late than never," said the colour-blind neighbour.',
    "The car park is half full... isn't it?",
    "Hello",
]


def remove_flags_phonemize(tok: Tokenizer, text: str, lang: str) -> str:
    """Tokenizer.phonemize with phonemizer's remove-flags policy instead of keep-flags."""
    text = Tokenizer.normalize_text(text)
    with _espeak_lock:
        phonemes = phonemizer.phonemize(
            text, lang, preserve_punctuation=True, with_stress=True, language_switch="remove-flags"
        )
    return "".join(p for p in phonemes if p in tok.vocab).strip()


def collapse(phonemes: str) -> str:
    """What Kokoro._prepare does before splitting and tokenizing."""
    return " ".join(phonemes.split())


def case(tok: Tokenizer, lang: str, text: str) -> dict:
    kokoro = collapse(tok.phonemize(text, lang))
    removed = collapse(remove_flags_phonemize(tok, text, lang))
    return {
        "lang": lang,
        "text": text,
        "kokoro": kokoro,
        "ids": tok.tokenize(kokoro, limit=None),
        "remove_flags": removed,
        "remove_flags_ids": tok.tokenize(removed, limit=None),
    }


def split_cases(tok: Tokenizer) -> list:
    """kokoro-onnx's batching of long phoneme strings, for Banter's split_phonemes."""
    paragraph = " ".join(ENGLISH[:24])
    long_phonemes = collapse(tok.phonemize(paragraph, "en-us"))
    no_sentence = collapse(tok.phonemize(paragraph.replace(".", ",").replace("?", ",").replace("!", ","), "en-us"))
    no_punct = " ".join(w.strip(";:,.!?\u2014\u2026\"()") for w in long_phonemes.split())
    unbroken = "a" * 1200
    out = []
    for phonemes, limit in [
        (long_phonemes, 510),
        (long_phonemes, 120),
        (no_sentence, 510),
        (no_sentence, 90),
        (no_punct, 200),
        (unbroken, 510),
        ("short one.", 510),
        ("", 510),
        ("   ", 510),
    ]:
        out.append({"phonemes": phonemes, "max_len": limit, "batches": split_phonemes(phonemes, limit)})
    return out


# Pieces for the seeded random cases: punctuation runs, decimals, hyphens, whitespace of every
# kind, control characters, emoji, parentheses (espeak's flag syntax), Latin letters only. Mixing
# other scripts into Latin-script words is left out on purpose: Banter rewrites such words to
# dodge an espeak-ng 1.52 crash (see engine/src/phonemes/espeak.rs), so they cannot match.
FUZZ_PIECES = [
    "hello", "world", "Dr.", "St.", "3.5", "1,000", "12:30", "$", "\u00a3", "%", "-", "--", "\u2014", "\u2026",
    "...", "?!", "\u00bf", "\u00a1", "\u00ab", "\u00bb", "\u201c", "\u201d", '"', "'", "(", ")", "[", "]",
    "{", "}", ";", ":", ",", ".", " ", "  ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u001f", "\u0007",
    "\U0001F600", "e\u0301", "\u00df", "A", "IBM", "iPhone", "1984", "2023-05-17", "www.x.org", "a@b.c",
    "_", "0", "the", "cat", "sat", "on", "mat", "quickly", "isn't", "O'Neil", "co-op", "(en)",
]

# Native-script pieces for the other voices, words kept apart by spaces (hyphens only inside
# native compounds), so the crash rewrite never applies.
NATIVE_PIECES = {
    "hi": ["\u0928\u092e\u0938\u094d\u0924\u0947", "\u092d\u093e\u0930\u0924", "\u0930\u093e\u092e-\u0936\u094d\u092f\u093e\u092e", "\u0964", "iPhone", "25", "3.5", "e-mail", ",", "?", "!", "\u2014", "(", ")", '"', "\U0001F600"],
    "ja": ["\u6771\u4eac", "\u3053\u3093\u306b\u3061\u306f", "\u30ab\u30bf\u30ab\u30ca", "\u3001", "\u3002", "\uff1f", "OK", "25", "3.5", ",", "!", "\u2026", "(", ")", "\u300c\u672c\u300d"],
    "es": ["\u00bfqu\u00e9", "ni\u00f1o", "a\u00f1o", "est\u00e1", "25", "3,5", "\u00a1s\u00ed!", ",", "-", "(", ")"],
}


def fuzz_cases(tok: Tokenizer, count: int) -> list:
    """Seeded random strings, phonemized with remove-flags (strings only; ids follow the vocab)."""
    rng = random.Random(20261122)
    latin = ["en-us", "en-gb", "es", "fr-fr", "it", "pt-br"]
    out = []
    for i in range(count):
        if i % 4 == 3:
            lang = rng.choice(list(NATIVE_PIECES))
            words = [rng.choice(NATIVE_PIECES[lang]) for _ in range(rng.randrange(1, 12))]
            text = " ".join(words)
        else:
            lang = "en-us" if i % 2 == 0 else rng.choice(latin)
            text = "".join(rng.choice(FUZZ_PIECES) for _ in range(rng.randrange(1, 16)))
        out.append({"lang": lang, "text": text, "remove_flags": collapse(remove_flags_phonemize(tok, text, lang))})
    return out


def build() -> dict:
    tok = Tokenizer()
    cases = [case(tok, "en-us", t) for t in ENGLISH]
    cases += [case(tok, "en-gb", t) for t in EN_GB]
    for lang, texts in OTHERS.items():
        cases += [case(tok, lang, t) for t in texts]
    voices = {}
    wrapper = EspeakWrapper()
    available = wrapper.available_voices()
    for lang in ["en-us", "en-gb", "es", "fr-fr", "hi", "it", "pt-br", "ja", "cmn"]:
        ids = [v.identifier for v in available if v.language == lang and not v.identifier.startswith("mb/")]
        voices[lang] = ids[0]
    return {
        "about": "Generated by tools/goldens/phonemes.py; see its docstring. Do not edit by hand.",
        "versions": {
            "kokoro-onnx": version("kokoro-onnx"),
            "phonemizer": version("phonemizer"),
            "espeakng-loader": version("espeakng-loader"),
            "espeak-ng": ".".join(str(v) for v in wrapper.version),
        },
        "voices": voices,
        "cases": cases,
        "splits": split_cases(tok),
        "fuzz": fuzz_cases(tok, 400),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed file")
    args = parser.parse_args()
    text = json.dumps(build(), ensure_ascii=False, indent=1) + "\n"
    if args.check:
        if OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is stale; rerun tools/goldens/phonemes.py", file=sys.stderr)
            return 1
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
