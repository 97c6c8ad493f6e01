#!/usr/bin/env python3
"""Write tests/fixtures/goldens/ge2e/ge2e.json: resemblyzer 0.1.4's speaker embeddings of the
committed clips, the golden for Banter's GE2E port (engine/src/speaker).

The clips (tests/fixtures/goldens/ge2e/*.flac, 16 kHz mono 16-bit, 2.7-3.3 s) were rendered
by Banter itself (`banter say ... --voice V`), resampled to 16 kHz with `sox ... rate -v` and
cut short to keep the fixtures small; michael.flac has 0.8 s of silence inserted at 1.5 s so
that the VAD trimming has something to do. The clips are at 16 kHz so that no resampler is
involved in the comparison.

For every clip this records, with resemblyzer's own functions:

- ``embedding``: ``VoiceEncoder.embed_utterance(preprocess_wav(wav))``: the full reference
  pipeline (volume normalisation to -30 dBFS, WebRTC VAD trimming, partials, network);
- ``embedding_no_vad``: ``embed_utterance(normalize_volume(wav, -30, increase_only=True))``:
  the same without silence trimming, to compare the features and the network on their own;
- ``vad_flags``: WebRTC VAD (mode 3) per 30 ms window, and ``vad_mask``: the windows kept after
  the reference's smoothing and dilation (checked here to reproduce ``trim_long_silences``).
  Banter's VAD is an energy detector, so the Rust test can apply this mask to isolate
  everything *after* trimming from the VAD difference;
- ``trimmed_len``: samples left after trimming;
- ``partials``: the partial embeddings of the full pipeline.

For the first clip it also records ``mel_head``: the first 20 frames of
``wav_to_mel_spectrogram`` of the (padded) preprocessed audio, to localise differences.

Setup (torch CPU and resemblyzer into a throw-away venv; if `webrtcvad` does not build,
install ``webrtcvad-wheels`` and resemblyzer with ``--no-deps`` plus librosa and scipy):

    python3 -m venv /tmp/ge2e-venv
    /tmp/ge2e-venv/bin/pip install torch resemblyzer==0.1.4 webrtcvad-wheels
    /tmp/ge2e-venv/bin/python tools/goldens/ge2e.py          # writes the JSON
    /tmp/ge2e-venv/bin/python tools/goldens/ge2e.py --check  # exits 1 if the JSON is stale
"""

import argparse
import json
import struct
import sys
from importlib.metadata import version
from pathlib import Path

import librosa
import numpy as np
import webrtcvad
from scipy.ndimage import binary_dilation

from resemblyzer import VoiceEncoder, audio, hparams

DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "goldens" / "ge2e"
OUT = DIR / "ge2e.json"
CLIPS = [
    # (file, voice, text)
    ("heart_a.flac", "af_heart", "The harbour lights came on one by one as the boats drifted home."),
    ("heart_b.flac", "af_heart", "Nobody expected the quiet librarian to win the chess final."),
    ("michael.flac", "am_michael", "We measured the river twice, and both times it was colder than expected."),
    ("emma.flac", "bf_emma", "Please bring a warm coat; the mountain pass is windy in April."),
]


def vad_flags_and_mask(wav):
    """The steps of audio.trim_long_silences, kept apart so the flags can be recorded."""
    window = (hparams.vad_window_length * hparams.sampling_rate) // 1000
    wav = wav[: len(wav) - (len(wav) % window)]
    pcm = struct.pack("%dh" % len(wav), *(np.round(wav * audio.int16_max)).astype(np.int16))
    vad = webrtcvad.Vad(mode=3)
    flags = np.array(
        [
            vad.is_speech(pcm[s * 2 : (s + window) * 2], sample_rate=hparams.sampling_rate)
            for s in range(0, len(wav), window)
        ]
    )
    width = hparams.vad_moving_average_width
    padded = np.concatenate((np.zeros((width - 1) // 2), flags, np.zeros(width // 2)))
    ret = np.cumsum(padded, dtype=float)
    ret[width:] = ret[width:] - ret[:-width]
    mask = np.round(ret[width - 1 :] / width).astype(bool)
    mask = binary_dilation(mask, np.ones(hparams.vad_max_silence_length + 1))
    trimmed = wav[np.repeat(mask, window)]
    return flags, mask, trimmed


def floats(a):
    """f32 values, rounded to 9 significant digits (enough to round-trip an f32)."""
    return [float(f"{x:.9g}") for x in np.asarray(a, dtype=np.float32).ravel()]


def build():
    encoder = VoiceEncoder("cpu", verbose=False)
    clips = []
    for i, (name, voice, text) in enumerate(CLIPS):
        wav, sr = librosa.load(str(DIR / name), sr=None)
        assert sr == hparams.sampling_rate, (name, sr)
        normalised = audio.normalize_volume(wav, hparams.audio_norm_target_dBFS, increase_only=True)
        flags, mask, trimmed = vad_flags_and_mask(normalised)
        preprocessed = audio.preprocess_wav(wav)
        assert np.array_equal(trimmed, preprocessed), f"{name}: VAD steps differ from resemblyzer"
        embed, partials, wav_slices = encoder.embed_utterance(preprocessed, return_partials=True)
        entry = {
            "file": name,
            "voice": voice,
            "text": text,
            "samples": len(wav),
            "trimmed_len": len(preprocessed),
            "vad_flags": [bool(f) for f in flags],
            "vad_mask": [bool(m) for m in mask],
            "embedding": floats(embed),
            "embedding_no_vad": floats(encoder.embed_utterance(normalised)),
            "partials": [floats(p) for p in partials],
        }
        if i == 0:
            padded = np.pad(preprocessed, (0, max(0, wav_slices[-1].stop - len(preprocessed))))
            mel = audio.wav_to_mel_spectrogram(padded)
            entry["mel_frames"] = int(mel.shape[0])
            entry["mel_head"] = [floats(row) for row in mel[:20]]
        clips.append(entry)
    return {
        "reference": {
            "resemblyzer": version("resemblyzer"),
            "librosa": version("librosa"),
            "torch": version("torch"),
            "webrtcvad": version("webrtcvad-wheels") if _has("webrtcvad-wheels") else version("webrtcvad"),
        },
        "clips": clips,
    }


def _has(dist):
    try:
        version(dist)
        return True
    except Exception:
        return False


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed JSON differs")
    args = parser.parse_args()
    golden = build()
    if args.check:
        old = json.loads(OUT.read_text())
        worst = 0.0
        for a, b in zip(old["clips"], golden["clips"]):
            worst = max(worst, float(np.max(np.abs(np.array(a["embedding"]) - np.array(b["embedding"])))))
        print(f"max |embedding difference| vs committed: {worst:.2e}")
        sys.exit(0 if worst < 1e-5 else 1)
    OUT.write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
