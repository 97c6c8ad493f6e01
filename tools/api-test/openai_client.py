#!/usr/bin/env python3
"""Checks `banter serve` with the official OpenAI Python client, as a user's script would call it.

Usage: openai_client.py URL TOKEN OUTDIR   (URL as `banter serve` prints it, without /v1)

Runs `client.audio.speech.create` (whole response) and
`client.audio.speech.with_streaming_response.create` (read as it arrives) for wav and pcm, and
stream_format="sse" when the installed client knows it; checks every answer decodes as 24 kHz
mono 16-bit audio of a plausible length and is not silent; writes the audio to OUTDIR. Prints one
line per check and exits non-zero on the first failure. setup.sh makes the venv it runs in.
"""

import base64
import inspect
import json
import math
import struct
import sys
import time
from pathlib import Path

import openai

RATE = 24_000
TEXT = "Hello from the OpenAI client. Banter should speak this sentence clearly."
# Plausible speech for TEXT at speed 1: roughly 12 characters a second, give or take a lot.
DURATION_RANGE = (2.0, 12.0)


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def pcm_stats(pcm):
    """Duration in seconds and RMS (0..1) of s16le mono samples."""
    if len(pcm) % 2:
        fail(f"PCM has an odd number of bytes ({len(pcm)})")
    n = len(pcm) // 2
    samples = struct.unpack(f"<{n}h", pcm) if n else ()
    rms = math.sqrt(sum(s * s for s in samples) / n) / 32768 if n else 0.0
    return n / RATE, rms


def check_audio(name, pcm):
    duration, rms = pcm_stats(pcm)
    lo, hi = DURATION_RANGE
    if not lo <= duration <= hi:
        fail(f"{name}: {duration:.2f} s of audio, expected {lo}-{hi} s")
    if rms < 0.01:
        fail(f"{name}: audio is silent (RMS {rms:.4f})")
    print(f"ok {name}: {duration:.2f} s, RMS {rms:.3f}", flush=True)


def wav_payload(name, data):
    """Checks a streamed WAV header (sizes may be 0xFFFFFFFF) and returns the PCM after it."""
    if len(data) < 44 or data[0:4] != b"RIFF" or data[8:12] != b"WAVE":
        fail(f"{name}: not a RIFF/WAVE file (starts {data[:12]!r})")
    pos = 12
    fmt = None
    while pos + 8 <= len(data):
        chunk_id, size = data[pos : pos + 4], struct.unpack("<I", data[pos + 4 : pos + 8])[0]
        body = pos + 8
        if chunk_id == b"fmt ":
            fmt = struct.unpack("<HHIIHH", data[body : body + 16])
        elif chunk_id == b"data":
            if fmt is None:
                fail(f"{name}: data chunk before fmt chunk")
            tag, channels, rate, _, _, bits = fmt
            if (tag, channels, rate, bits) != (1, 1, RATE, 16):
                fail(f"{name}: format {fmt}, expected PCM mono 24 kHz 16-bit")
            end = len(data) if size == 0xFFFFFFFF else body + size
            return data[body:end]
        pos = body + size + (size & 1)
    fail(f"{name}: no data chunk")


def sse_audio(name, lines):
    """Decodes speech.audio.delta events; checks the closing speech.audio.done has usage."""
    audio, done = bytearray(), None
    for line in lines:
        if not line.startswith("data:"):
            continue
        event = json.loads(line[5:].strip())
        if done is not None:
            fail(f"{name}: event after speech.audio.done: {event.get('type')}")
        if event.get("type") == "speech.audio.delta":
            audio += base64.b64decode(event["audio"])
        elif event.get("type") == "speech.audio.done":
            done = event
        else:
            fail(f"{name}: unexpected event {event}")
    if done is None:
        fail(f"{name}: no speech.audio.done event")
    usage = done.get("usage", {})
    if not all(isinstance(usage.get(k), int) for k in ("input_tokens", "output_tokens", "total_tokens")):
        fail(f"{name}: done event has no usage counts: {done}")
    return bytes(audio)


def main():
    if len(sys.argv) != 4:
        fail("usage: openai_client.py URL TOKEN OUTDIR")
    url, token, outdir = sys.argv[1].rstrip("/"), sys.argv[2], Path(sys.argv[3])
    outdir.mkdir(parents=True, exist_ok=True)
    client = openai.OpenAI(base_url=f"{url}/v1", api_key=token, max_retries=0, timeout=300)
    print(f"openai {openai.__version__} against {url}", flush=True)

    models = [m.id for m in client.models.list()]
    if "tts-1" not in models or "kokoro" not in models:
        fail(f"models list lacks tts-1/kokoro: {models}")
    print(f"ok models: {models}", flush=True)
    if client.models.retrieve("tts-1").id != "tts-1":
        fail("models.retrieve(tts-1)")
    try:
        client.models.retrieve("whisper-1")
        fail("models.retrieve found whisper-1")
    except openai.NotFoundError as e:
        print(f"ok models.retrieve: tts-1 found, whisper-1 {e.status_code}", flush=True)

    try:
        openai.OpenAI(base_url=f"{url}/v1", api_key="wrong", max_retries=0).models.list()
        fail("a wrong token was accepted")
    except openai.AuthenticationError as e:
        print(f"ok wrong token refused: {e.status_code}", flush=True)

    try:
        client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, response_format="aac")
        fail("aac was accepted")
    except openai.BadRequestError as e:
        if "aac" not in str(e):
            fail(f"aac error does not name the format: {e}")
        print("ok aac refused with a clear 400", flush=True)

    # OpenAI's voices speak what they are sent: Spanish to alloy is spoken by a Spanish stock
    # voice, and the answer names it; a voice chosen by name is kept, and told.
    spanish = "Hola a todos, bienvenidos al programa. Hoy hablamos de ciencia."
    answer = client.audio.speech.with_raw_response.create(
        model="tts-1", voice="alloy", input=spanish, response_format="pcm"
    )
    check_audio("Spanish to alloy", answer.content)
    said = answer.headers.get("x-banter-voice", "")
    if not said.startswith("ef_") or "Spanish" not in said:
        fail(f"x-banter-voice for Spanish to alloy: {said!r}")
    answer = client.audio.speech.with_raw_response.create(
        model="tts-1", voice="af_heart", input=spanish, response_format="pcm"
    )
    told = answer.headers.get("x-banter-language", "")
    if "x-banter-voice" in answer.headers or not told.startswith("Spanish read by af_heart"):
        fail(f"Spanish to af_heart: voice {answer.headers.get('x-banter-voice')!r}, told {told!r}")
    print(f"ok Spanish input: alloy spoken by {said}; af_heart kept and told", flush=True)

    opus = client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, response_format="opus")
    data = opus.content
    # Ogg Opus (RFC 7845): the first page holds OpusHead, mono; audio pages follow the tags.
    if data[:4] != b"OggS" or data[28:36] != b"OpusHead" or data[37] != 1:
        fail(f"opus: not a mono Ogg Opus stream: {data[:40]!r}")
    if data.count(b"OggS") < 3:
        fail(f"opus: {data.count(b'OggS')} Ogg pages, expected headers and audio")
    (outdir / "speech.opus").write_bytes(data)
    print(f"ok opus: {len(data)} bytes, {data.count(b'OggS')} Ogg pages", flush=True)

    for fmt in ("wav", "pcm"):
        whole = client.audio.speech.create(model="tts-1", voice="alloy", input=TEXT, response_format=fmt)
        data = whole.content
        (outdir / f"whole.{fmt}").write_bytes(data)
        check_audio(f"create {fmt}", wav_payload(f"create {fmt}", data) if fmt == "wav" else data)

        started = time.monotonic()
        first, pieces = None, []
        with client.audio.speech.with_streaming_response.create(
            model="gpt-4o-mini-tts", voice="nova", input=TEXT, response_format=fmt
        ) as response:
            for piece in response.iter_bytes():
                if first is None and piece:
                    first = time.monotonic() - started
                pieces.append(piece)
        data = b"".join(pieces)
        (outdir / f"streamed.{fmt}").write_bytes(data)
        check_audio(
            f"streaming {fmt} (first bytes after {first:.2f} s)",
            wav_payload(f"streaming {fmt}", data) if fmt == "wav" else data,
        )

    params = inspect.signature(client.audio.speech.create).parameters
    if "stream_format" in params:
        with client.audio.speech.with_streaming_response.create(
            model="tts-1", voice="alloy", input=TEXT, response_format="pcm", stream_format="sse"
        ) as response:
            content_type = response.headers.get("content-type", "")
            if not content_type.startswith("text/event-stream"):
                fail(f"sse answered with content-type {content_type!r}")
            pcm = sse_audio("sse pcm", response.iter_lines())
        (outdir / "sse.pcm").write_bytes(pcm)
        check_audio("sse pcm", pcm)
        plain = (outdir / "whole.pcm").read_bytes()
        if pcm != plain:
            fail(f"sse audio ({len(pcm)} bytes) differs from the plain pcm ({len(plain)} bytes)")
        print("ok sse audio equals the plain pcm", flush=True)
    else:
        print(f"skipped sse: openai {openai.__version__} has no stream_format", flush=True)
    print("all OpenAI client checks passed", flush=True)


if __name__ == "__main__":
    main()
