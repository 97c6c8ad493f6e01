#!/usr/bin/env python3
"""Checks `banter serve` with the official ElevenLabs Python SDK's HTTP calls, as a user's
script would make them with only the base URL and key changed.

Usage: elevenlabs_client.py URL TOKEN OUTDIR   (URL as `banter serve` prints it, without /v1)

Runs `text_to_speech.convert` (default mp3_44100_128), `text_to_speech.stream` (pcm_16000 and
ulaw_8000), `text_to_speech.convert_with_timestamps`, `text_to_speech.stream_with_timestamps`,
`text_to_dialogue` (convert, stream, convert_with_timestamps, stream_with_timestamps),
`voices.get_all`, and what integrations call at set-up (`user.get`, `user.subscription.get`,
`models.list`, `voices.get`, `voices.settings`, `voices.search`); checks the audio is of a plausible length and not silent, the alignment
covers the text character by character in order (streamed: no character ahead of the audio
received with it), an ElevenLabs premade voice id is spoken by a stock voice named in
`x-banter-voice`, a wrong key and an unknown voice id are refused; writes the audio to
OUTDIR. Prints
one line per check and exits non-zero on the first failure. setup.sh makes the venv it runs in.
"""

import base64
import json
import math
import struct
import sys
import urllib.request
from pathlib import Path

from elevenlabs import DialogueInput
from elevenlabs.client import ElevenLabs
from elevenlabs.core.api_error import ApiError

TEXT = "Hello from the ElevenLabs client. It costs $4.50, and Banter says so."
DURATION_RANGE = (2.0, 12.0)


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def check_pcm(name, pcm, rate):
    """Duration and loudness of s16le mono samples at `rate`."""
    n = len(pcm) // 2
    samples = struct.unpack(f"<{n}h", pcm[: n * 2])
    seconds = n / rate
    rms = math.sqrt(sum(s * s for s in samples) / max(n, 1)) / 32768
    if not DURATION_RANGE[0] <= seconds <= DURATION_RANGE[1]:
        fail(f"{name}: {seconds:.2f} s of audio")
    if rms < 0.01:
        fail(f"{name}: silent (RMS {rms:.4f})")
    print(f"ok {name}: {seconds:.2f} s at {rate} Hz, RMS {rms:.3f}", flush=True)


def main():
    url, token, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    client = ElevenLabs(api_key=token, base_url=url)

    mp3 = b"".join(
        client.text_to_speech.convert(
            voice_id="af_heart", text=TEXT, model_id="eleven_multilingual_v2"
        )
    )
    if len(mp3) < 10_000 or not (mp3[:3] == b"ID3" or (mp3[0] == 0xFF and mp3[1] & 0xE0 == 0xE0)):
        fail(f"convert: {len(mp3)} bytes starting {mp3[:4]!r}, not an MP3")
    (out / "convert.mp3").write_bytes(mp3)
    print(f"ok convert: {len(mp3)} bytes of MP3", flush=True)

    pcm = b"".join(
        client.text_to_speech.stream(
            voice_id="am_michael",
            text=TEXT,
            output_format="pcm_16000",
            voice_settings={"stability": 0.5, "similarity_boost": 0.75, "speed": 1.0},
        )
    )
    check_pcm("stream pcm_16000", pcm, 16_000)
    (out / "stream.pcm").write_bytes(pcm)
    ulaw = b"".join(
        client.text_to_speech.stream(voice_id="nova", text=TEXT, output_format="ulaw_8000")
    )
    if not DURATION_RANGE[0] <= len(ulaw) / 8000 <= DURATION_RANGE[1]:
        fail(f"stream ulaw_8000: {len(ulaw) / 8000:.2f} s")
    print(f"ok stream ulaw_8000: {len(ulaw) / 8000:.2f} s", flush=True)

    text = "Hi there, you.\nBye now."
    timed = client.text_to_speech.convert_with_timestamps(
        voice_id="af_bella", text=text, output_format="pcm_24000"
    )
    audio = base64.b64decode(timed.audio_base_64)
    a = timed.alignment
    if "".join(a.characters) != text:
        fail(f"alignment characters {a.characters!r} are not the text")
    starts, ends = a.character_start_times_seconds, a.character_end_times_seconds
    if any(s > e for s, e in zip(starts, ends)) or any(
        ends[k] > starts[k + 1] + 1e-6 for k in range(len(starts) - 1)
    ):
        fail(f"alignment times out of order: {list(zip(starts, ends))}")
    seconds = len(audio) / 2 / 24_000
    if abs(ends[-1] - seconds) > 0.01:
        fail(f"the last character ends at {ends[-1]} s, the audio at {seconds:.3f} s")
    bye = text.index("Bye")
    if not 0.3 < starts[bye] < seconds:
        fail(f"`Bye` starts at {starts[bye]} s of {seconds:.2f}")
    print(f"ok convert_with_timestamps: {len(starts)} characters over {seconds:.2f} s", flush=True)

    pieces = list(
        client.text_to_speech.stream_with_timestamps(
            voice_id="af_bella", text=text, output_format="pcm_24000"
        )
    )
    received, chars, starts, ends = 0, [], [], []
    for piece in pieces:
        received += len(base64.b64decode(piece.audio_base_64)) // 2
        if piece.alignment is None:
            continue
        a = piece.alignment
        if a.character_start_times_seconds[-1] > received / 24_000 + 1e-3:
            fail(f"stream_with_timestamps: {a.characters!r} start after the {received} samples sent")
        chars += a.characters
        starts += a.character_start_times_seconds
        ends += a.character_end_times_seconds
    if len(pieces) < 3:
        fail(f"stream_with_timestamps: {len(pieces)} pieces; the audio did not stream")
    if "".join(chars) != text:
        fail(f"stream_with_timestamps: characters {chars!r} are not the text")
    if any(s > e for s, e in zip(starts, ends)) or any(
        ends[k] > starts[k + 1] + 1e-6 for k in range(len(starts) - 1)
    ):
        fail(f"stream_with_timestamps: times out of order: {list(zip(starts, ends))}")
    streamed = received / 24_000
    if abs(ends[-1] - streamed) > 0.01 or abs(streamed - seconds) > 0.5:
        fail(f"stream_with_timestamps: ends at {ends[-1]} s, audio {streamed:.3f} s "
             f"(convert_with_timestamps: {seconds:.3f} s)")
    if not 0.3 < starts[bye] < streamed:
        fail(f"stream_with_timestamps: `Bye` starts at {starts[bye]} s of {streamed:.2f}")
    print(f"ok stream_with_timestamps: {len(pieces)} pieces, {len(chars)} characters over "
          f"{streamed:.2f} s", flush=True)

    voices = client.voices.get_all().voices
    if len(voices) < 50 or not any(v.voice_id == "af_heart" for v in voices):
        fail(f"voices: {len(voices)}, {[v.voice_id for v in voices][:5]}")
    print(f"ok voices.get_all: {len(voices)} voices", flush=True)

    # What integrations call at set-up, before they speak: the key's account, the models, the
    # configured voice and its settings, a voice search.
    user = client.user.get()
    subscription = client.user.subscription.get()
    if user.subscription.character_limit <= 0 or subscription.status != "active":
        fail(f"user.get / subscription: {user!r} {subscription!r}")
    print(f"ok user.get and user.subscription.get: tier {subscription.tier}", flush=True)
    models = client.models.list()
    ids = [m.model_id for m in models]
    if "eleven_multilingual_v2" not in ids or not all(m.can_do_text_to_speech for m in models):
        fail(f"models.list: {ids}")
    print(f"ok models.list: {ids}", flush=True)
    rachel_voice = client.voices.get("21m00Tcm4TlvDq8ikWAM")
    if rachel_voice.name != "Rachel" or rachel_voice.labels.get("banter_voice") != "af_heart":
        fail(f"voices.get for Rachel's id: {rachel_voice!r}")
    settings = client.voices.settings.get("af_heart")
    default = client.voices.settings.get_default()
    if settings.speed != 1.0 or default.stability is None:
        fail(f"voices.settings: {settings!r} {default!r}")
    print(f"ok voices.get and voices.settings: {rachel_voice.name} is {rachel_voice.labels}",
          flush=True)
    page = client.voices.search(search="british", gender="male", page_size=2)
    rest = client.voices.search(search="british", gender="male", page_size=2,
                                next_page_token=page.next_page_token)
    found = [v.voice_id for v in page.voices + rest.voices]
    if not page.has_more or len(set(found)) != 4 or not all(v.startswith("bm_") for v in found):
        fail(f"voices.search: {found} (has_more {page.has_more})")
    print(f"ok voices.search: {found} of {page.total_count}", flush=True)

    # A premade ElevenLabs voice id (Rachel, the SDK examples' default) is spoken by a stock
    # voice like it, and the answer names it.
    rachel = b"".join(
        client.text_to_speech.convert(
            voice_id="21m00Tcm4TlvDq8ikWAM", text=TEXT, output_format="pcm_24000"
        )
    )
    check_pcm("convert with Rachel's id", rachel, 24_000)
    request = urllib.request.Request(
        f"{url}/v1/text-to-speech/21m00Tcm4TlvDq8ikWAM?output_format=pcm_16000",
        data=json.dumps({"text": "Hi."}).encode(),
        headers={"xi-api-key": token, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        answer.read()
        said = answer.headers.get("x-banter-voice", "")
    if not said.startswith("af_heart") or "Rachel" not in said:
        fail(f"x-banter-voice for Rachel's id: {said!r}")
    print(f"ok an ElevenLabs premade id is spoken by a stock voice: {said}", flush=True)

    # Text to dialogue: one turn per input, each in its voice, one timeline; v3's audio tags
    # are directions, not speech.
    inputs = [
        DialogueInput(text="Welcome back to the show. Today: tide pools.", voice_id="21m00Tcm4TlvDq8ikWAM"),
        DialogueInput(text="[laughs] Thanks for having me.", voice_id="am_michael"),
    ]
    dialogue = b"".join(
        client.text_to_dialogue.convert(inputs=inputs, output_format="pcm_24000", model_id="eleven_v3")
    )
    check_pcm("text_to_dialogue.convert", dialogue, 24_000)
    streamed = b"".join(client.text_to_dialogue.stream(inputs=inputs, output_format="pcm_24000"))
    if streamed != dialogue:
        fail(f"text_to_dialogue.stream ({len(streamed)} bytes) differs from convert ({len(dialogue)})")
    (out / "dialogue.pcm").write_bytes(dialogue)
    # With timestamps: every character of the inputs, in order, timed; a segment per spoken
    # input (the tag-only one has none).
    tagged = inputs + [DialogueInput(text="[sighs]", voice_id="am_michael")]
    timed = client.text_to_dialogue.convert_with_timestamps(inputs=tagged, output_format="pcm_24000")
    chars = timed.alignment.characters
    starts = timed.alignment.character_start_times_seconds
    if "".join(chars) != "".join(i.text for i in tagged):
        fail(f"text_to_dialogue alignment characters: {''.join(chars)!r}")
    if any(b < a for a, b in zip(starts, starts[1:])):
        fail("text_to_dialogue alignment times go backwards")
    segments = [(v.dialogue_input_index, v.voice_id) for v in timed.voice_segments]
    if segments != [(0, "21m00Tcm4TlvDq8ikWAM"), (1, "am_michael")]:
        fail(f"text_to_dialogue voice segments: {segments}")
    print(f"ok text to dialogue with timestamps: {len(chars)} characters, segments {segments}", flush=True)
    # Streamed with timestamps: the same audio and characters, in pieces as it is made, no
    # character ahead of the audio received with it, each segment once.
    pieces, received, s_chars, s_starts, s_segments = 0, 0, [], [], []
    for piece in client.text_to_dialogue.stream_with_timestamps(inputs=tagged, output_format="pcm_24000"):
        pieces += 1
        received += len(base64.b64decode(piece.audio_base_64)) // 2
        s_segments += [(v.dialogue_input_index, v.voice_id) for v in piece.voice_segments]
        if piece.alignment is None:
            continue
        if any(t * 24_000 > received + 24 for t in piece.alignment.character_start_times_seconds):
            fail(f"text_to_dialogue.stream_with_timestamps: {piece.alignment.characters!r} ahead of "
                 f"the {received} samples sent")
        s_chars += piece.alignment.characters
        s_starts += piece.alignment.character_start_times_seconds
    if s_chars != chars:
        fail(f"text_to_dialogue.stream_with_timestamps characters: {''.join(s_chars)!r}")
    if max(abs(a - b) for a, b in zip(s_starts, starts)) > 0.05:
        fail("text_to_dialogue.stream_with_timestamps times differ from convert_with_timestamps")
    if s_segments != segments or pieces < 3:
        fail(f"text_to_dialogue.stream_with_timestamps: {pieces} pieces, segments {s_segments}")
    print(f"ok text to dialogue streamed with timestamps: {pieces} pieces, {received / 24_000:.2f} s",
          flush=True)
    print(f"ok text to dialogue: {len(dialogue) / 48_000:.2f} s, stream equals convert", flush=True)

    for name, call in [
        ("a wrong key", lambda: ElevenLabs(api_key="wrong", base_url=url).voices.get_all()),
        ("a wrong key's account", lambda: ElevenLabs(api_key="wrong", base_url=url).user.get()),
        ("an unknown voice's lookup", lambda: client.voices.get("aBcDeFgHiJkLmNoPqRsT")),
        (
            "an unknown ElevenLabs voice id",
            lambda: b"".join(
                client.text_to_speech.convert(voice_id="aBcDeFgHiJkLmNoPqRsT", text="Hi")
            ),
        ),
    ]:
        try:
            call()
        except ApiError as e:
            print(f"ok {name} is refused: {e.status_code}", flush=True)
            continue
        fail(f"{name} was accepted")
    print("all ElevenLabs client checks passed", flush=True)


if __name__ == "__main__":
    main()
