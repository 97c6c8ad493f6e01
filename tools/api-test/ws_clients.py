#!/usr/bin/env python3
"""Checks `banter serve`'s ElevenLabs-compatible WebSocket endpoints with real clients.

Usage: ws_clients.py URL TOKEN OUTDIR   (URL as `banter serve` prints it, without /v1)

The client is pipecat's `ElevenLabsTTSService` (pipecat-ai, unmodified), which speaks
`/v1/text-to-speech/{voice}/multi-stream-input` as voice bots use it: a pipeline of that service
and a frame collector, fed an LLM reply token by token (`LLMFullResponseStartFrame`,
`LLMTextFrame`s at 30 tokens/s, `LLMFullResponseEndFrame`), in pipecat's token-streaming mode and
in its default sentence mode, then an interruption (`InterruptionFrame`) mid-reply. Between
pipecat and the server runs a wire tap (a TCP relay that decodes the WebSocket frames; it drops
the client's offer of permessage-deflate and changes nothing else), so the checks can say what
went over the wire and when: that the server stops a context's audio after pipecat's
`close_context`, and that the word times pipecat derives from the alignment match the audio.

Then plain `websockets` (raw client) checks: the single-context `/stream-input` endpoint ended
with `{"text": ""}`, the three ways to give the token, and bad input (invalid JSON, binary
frames, a 1 MB message, a wrong token, a context id reused while it finishes, keep-alives for a
closed context, text after the end of input, the inactivity timeout, 3000 tiny messages beside a
speaking context, a client that drops mid-audio). Prints one line per check and exits non-zero on the first failure; writes the
audio (raw s16le, 24 kHz mono) and the wire log (wire.jsonl) to OUTDIR. setup.sh makes the venv.
"""

import asyncio
import base64
import json
import math
import re
import struct
import sys
import time
import urllib.parse
from pathlib import Path

import websockets
from websockets.asyncio.client import connect

RATE = 24_000
TOKENS_PER_SEC = 30.0
# How soon after pipecat's close_context (an interruption) the context's audio must stop.
CANCEL_LIMIT_S = 0.5
# Word times: pipecat's (from the alignment, on its own clock) against the audio's (from the
# wire: earlier messages' audio plus the word's first character's start), and against the audio.
WORD_TIME_TOLERANCE_S = 0.05
TIMEOUT_S = 120.0  # any one utterance, start to final message (a busy 2-core CI machine)

REPLY = ("Sure, I can help with that. The museum opens at nine, and the garden stays open "
         "until sunset. Would you like me to book two tickets for Saturday morning?")
SECOND = "Of course. Here is something different, spoken after the interruption."
LONG = ("Let me tell you a long story about a lighthouse keeper, who lived alone on a rocky "
        "island far from the coast. Every evening she climbed the winding stairs, lit the great "
        "lamp, and watched the ships pass safely through the narrow channel. In the winter the "
        "storms were fierce, and the waves reached the windows of her little kitchen.")
BLEND = "af_bella:0.7+af_sky:0.3"
LAST_WORD_NOTED = set()


def fail(message):
    print(f"FAIL: {message}", flush=True)
    sys.exit(1)


def ok(message):
    print(f"ok {message}", flush=True)


def note(message):
    print(f"note: {message}", flush=True)


def llm_tokens(text):
    """Word-ish tokens as an LLM streams them: a leading space, punctuation attached, and
    words longer than eight letters cut in two (no space before the second piece)."""
    tokens = []
    for piece in re.findall(r"\s*\S+", text):
        word = piece.lstrip()
        lead = piece[: len(piece) - len(word)]
        if sum(c.isalpha() for c in word) > 8:
            half = len(word) // 2
            tokens += [lead + word[:half], word[half:]]
        else:
            tokens.append(piece)
    assert "".join(tokens) == text
    return tokens


def pcm_stats(pcm, rate=RATE):
    """Duration in seconds and RMS (0..1) of s16le mono samples."""
    n = len(pcm) // 2
    if n == 0:
        return 0.0, 0.0
    samples = struct.unpack(f"<{n}h", pcm[: 2 * n])
    return n / rate, math.sqrt(sum(s * s for s in samples) / n) / 32768


def check_speech(name, pcm, text):
    """Plausible speech for `text` at speed 1 (roughly 8-25 characters a second), not silent."""
    if len(pcm) % 2:
        fail(f"{name}: PCM has an odd number of bytes ({len(pcm)})")
    duration, rms = pcm_stats(pcm)
    lo, hi = len(text) / 25, len(text) / 8 + 1.0
    if not lo <= duration <= hi:
        fail(f"{name}: {duration:.2f} s of audio for {len(text)} characters, expected {lo:.1f}-{hi:.1f} s")
    if rms < 0.01:
        fail(f"{name}: audio is silent (RMS {rms:.4f})")
    return duration, rms


def http_to_ws(url):
    return "ws" + url[len("http"):] if url.startswith("http") else url


# --------------------------------------------------------------------------------------------
# Wire tap: a TCP relay that decodes the WebSocket frames going through it.
# --------------------------------------------------------------------------------------------


class WireTap:
    """Relays 127.0.0.1:port to the server and records every WebSocket message, with the time
    (time.monotonic) its last byte went through. The only change to the traffic: the client's
    Sec-WebSocket-Extensions header is dropped, so the frames stay uncompressed and readable."""

    def __init__(self, host, port):
        self.host, self.port_to = host, port
        self.events = []  # dicts: t, conn, dir ("c2s"/"s2c"), kind ("text"/"binary"/"close"/"http"), ...
        self.conns = 0

    async def start(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def close(self):
        self.server.close()

    def record(self, conn, direction, kind, **kw):
        self.events.append({"t": time.monotonic(), "conn": conn, "dir": direction, "kind": kind, **kw})

    async def _handle(self, cr, cw):
        self.conns += 1
        conn = self.conns
        try:
            sr, sw = await asyncio.open_connection(self.host, self.port_to)
        except OSError:
            cw.close()
            return
        try:
            head = await cr.readuntil(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            kept = [ln for ln in lines if not ln.lower().startswith(b"sec-websocket-extensions:")]
            self.record(conn, "c2s", "http", line=lines[0].decode("latin-1"),
                        headers=[ln.decode("latin-1") for ln in lines[1:] if ln])
            sw.write(b"\r\n".join(kept))
            await sw.drain()
            resp = await sr.readuntil(b"\r\n\r\n")
            self.record(conn, "s2c", "http", line=resp.split(b"\r\n")[0].decode("latin-1"))
            cw.write(resp)
            await cw.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            cw.close()
            sw.close()
            return
        await asyncio.gather(self._pump(cr, sw, conn, "c2s"), self._pump(sr, cw, conn, "s2c"),
                             return_exceptions=True)

    async def _pump(self, reader, writer, conn, direction):
        buf = bytearray()
        message, opcode = bytearray(), None
        try:
            while True:
                data = await reader.read(1 << 16)
                if not data:
                    break
                writer.write(data)
                await writer.drain()
                buf += data
                while True:
                    frame = self._parse(buf)
                    if frame is None:
                        break
                    fin, op, payload, used = frame
                    del buf[:used]
                    if op in (8, 9, 10):  # close, ping, pong
                        if op == 8:
                            code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else None
                            self.record(conn, direction, "close", code=code,
                                        reason=bytes(payload[2:]).decode("utf-8", "replace"))
                        continue
                    if op != 0:
                        opcode, message = op, bytearray()
                    message += payload
                    if fin:
                        if opcode == 1:
                            text = message.decode("utf-8", "replace")
                            try:
                                msg = json.loads(text)
                            except ValueError:
                                msg = None
                            self.record(conn, direction, "text", size=len(message),
                                        msg=msg if isinstance(msg, dict) else None,
                                        raw=None if isinstance(msg, dict) else text[:200])
                        else:
                            self.record(conn, direction, "binary", size=len(message))
                        message, opcode = bytearray(), None
        except (ConnectionError, OSError):
            pass
        finally:
            try:
                writer.close()
            except Exception:
                pass

    @staticmethod
    def _parse(buf):
        if len(buf) < 2:
            return None
        fin, op = buf[0] & 0x80, buf[0] & 0x0F
        masked, n = buf[1] & 0x80, buf[1] & 0x7F
        pos = 2
        if n == 126:
            if len(buf) < 4:
                return None
            n, pos = struct.unpack(">H", buf[2:4])[0], 4
        elif n == 127:
            if len(buf) < 10:
                return None
            n, pos = struct.unpack(">Q", buf[2:10])[0], 10
        mask = None
        if masked:
            if len(buf) < pos + 4:
                return None
            mask, pos = bytes(buf[pos : pos + 4]), pos + 4
        if len(buf) < pos + n:
            return None
        payload = bytearray(buf[pos : pos + n])
        if mask:
            payload = bytearray(b ^ mask[i % 4] for i, b in enumerate(payload))
        return bool(fin), op, payload, pos + n

    def messages(self, conn=None, direction=None, since=0.0):
        return [e for e in self.events if e["kind"] == "text" and e["msg"] is not None
                and (conn is None or e["conn"] == conn) and (direction is None or e["dir"] == direction)
                and e["t"] >= since]

    def dump(self, path):
        with open(path, "w") as f:
            for e in self.events:
                e = dict(e)
                if e.get("msg") and isinstance(e["msg"].get("audio"), str):
                    e["msg"] = dict(e["msg"], audio=f"<{len(e['msg']['audio'])} base64 chars>")
                if e.get("msg") and isinstance(e["msg"].get("text"), str) and len(e["msg"]["text"]) > 200:
                    e["msg"] = dict(e["msg"], text=e["msg"]["text"][:200] + "...")
                f.write(json.dumps(e) + "\n")


def ctx_of(msg):
    return msg.get("contextId", msg.get("context_id"))


def true_word_starts(tap, context_id, since):
    """(word, start seconds in the context's audio) from the server's alignment on the wire:
    each message's audio length (pcm_24000) before it plus its characters' start times. Words
    are split at spaces, as pipecat does."""
    offset, words, current, start = 0.0, [], "", None
    for e in tap.messages(direction="s2c", since=since):
        msg = e["msg"]
        if ctx_of(msg) != context_id or not msg.get("audio"):
            continue
        al = msg.get("alignment") or {}
        for ch, st in zip(al.get("chars") or [], al.get("charStartTimesMs") or []):
            if ch == " ":
                if current:
                    words.append((current, start))
                current, start = "", None
            else:
                if start is None:
                    start = offset + st / 1000
                current += ch
        offset += len(base64.b64decode(msg["audio"])) / 2 / RATE
    if current:
        words.append((current, start))
    return words, offset


# --------------------------------------------------------------------------------------------
# pipecat
# --------------------------------------------------------------------------------------------


async def pipecat_checks(url, token, outdir, tap):
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="WARNING")

    import pipecat
    from pipecat.frames.frames import (
        EndFrame,
        ErrorFrame,
        InterruptionFrame,
        LLMFullResponseEndFrame,
        LLMFullResponseStartFrame,
        LLMTextFrame,
        TTSAudioRawFrame,
        TTSStartedFrame,
        TTSStoppedFrame,
        TTSTextFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.worker import PipelineParams, PipelineWorker
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat.services.elevenlabs.tts import ElevenLabsTTSService
    from pipecat.services.tts_service import TextAggregationMode
    from pipecat.workers.runner import WorkerRunner

    version = getattr(pipecat, "__version__", None)
    if version is None:
        from importlib.metadata import version as _v

        version = _v("pipecat-ai")

    class Collector(FrameProcessor):
        """Records every frame going past, with its arrival (monotonic) and pipeline clock time."""

        def __init__(self, direction):
            super().__init__()
            self.direction = direction
            self.frames = []
            self.changed = asyncio.Event()

        async def process_frame(self, frame, direction):
            await super().process_frame(frame, direction)
            if direction == self.direction:
                self.frames.append((time.monotonic(), self.get_clock().get_time(), frame))
                self.changed.set()
            await self.push_frame(frame, direction)

    class Bot:
        """One pipeline: [upstream collector, ElevenLabsTTSService, downstream collector]."""

        def __init__(self, voice, mode):
            self.tts = ElevenLabsTTSService(
                api_key=token,
                url=f"ws://127.0.0.1:{tap.port}",
                settings=ElevenLabsTTSService.Settings(voice=voice),
                text_aggregation_mode=mode,
            )
            self.up = Collector(FrameDirection.UPSTREAM)
            self.down = Collector(FrameDirection.DOWNSTREAM)
            self.worker = PipelineWorker(
                Pipeline([self.up, self.tts, self.down]),
                params=PipelineParams(audio_out_sample_rate=RATE),
                cancel_on_idle_timeout=False,
            )
            self.started = asyncio.Event()

            @self.worker.event_handler("on_pipeline_started")
            async def _started(worker, frame):
                self.started.set()

        async def __aenter__(self):
            self.runner = WorkerRunner(handle_sigint=False)
            await self.runner.add_workers(self.worker)
            self.run_task = asyncio.create_task(self.runner.run())
            try:
                await asyncio.wait_for(self.started.wait(), 30)
            except TimeoutError:
                fail("pipecat pipeline did not start in 30 s")
            return self

        async def __aexit__(self, *exc):
            await self.worker.queue_frame(EndFrame())
            try:
                await asyncio.wait_for(self.run_task, 15)
            except TimeoutError:
                await self.worker.cancel()
                await self.run_task

        def errors(self):
            return [f for _, _, f in self.up.frames + self.down.frames if isinstance(f, ErrorFrame)]

        async def say(self, text, rate=TOKENS_PER_SEC, interrupt_after_audio=None):
            """Streams `text` as an LLM reply; returns (t_first_token, t_interrupt or None)."""
            await self.worker.queue_frame(LLMFullResponseStartFrame())
            t0 = time.monotonic()
            n_audio = self.count(TTSAudioRawFrame)
            for i, tok in enumerate(llm_tokens(text)):
                if interrupt_after_audio is not None and self.count(TTSAudioRawFrame) > n_audio:
                    await asyncio.sleep(interrupt_after_audio)
                    t_int = time.monotonic()
                    await self.worker.queue_frame(InterruptionFrame())
                    return t0, t_int
                await self.worker.queue_frame(LLMTextFrame(tok))
                await asyncio.sleep(max(0.0, t0 + (i + 1) / rate - time.monotonic()))
            await self.worker.queue_frame(LLMFullResponseEndFrame())
            return t0, None

        def count(self, kind):
            return sum(isinstance(f, kind) for _, _, f in self.down.frames)

        async def wait_for(self, predicate, what, timeout=TIMEOUT_S):
            deadline = time.monotonic() + timeout
            while not predicate():
                if self.errors():
                    fail(f"pipecat reported errors while waiting for {what}: "
                         + "; ".join(str(e.error) for e in self.errors()))
                self.down.changed.clear()
                left = deadline - time.monotonic()
                if left <= 0:
                    errs = "; ".join(str(e.error) for e in self.errors()) or "no error frames"
                    fail(f"pipecat: timed out after {timeout:.0f} s waiting for {what} ({errs})")
                try:
                    await asyncio.wait_for(self.down.changed.wait(), min(left, 1.0))
                except TimeoutError:
                    pass

        def context_frames(self, context_id):
            return [(t, c, f) for t, c, f in self.down.frames if getattr(f, "context_id", None) == context_id]

    def check_complete(name, text, cid, since):
        """All of `text` was aligned on the wire: the server spoke the whole reply although
        pipecat closed the context right after its flush."""
        wire, _ = true_word_starts(tap, cid, since)
        spoken, written = "".join(w for w, _ in wire), "".join(text.split())
        if len(spoken) < len(written):
            sent = [e["msg"] for e in tap.messages(direction="c2s", since=since) if e["msg"].get("context_id") == cid]
            tail = [k for m in sent[-2:] for k in ("flush", "close_context") if m.get(k)]
            fail(f"{name}: the server's alignment covers {len(spoken)} of the reply's {len(written)} "
                 f"non-space characters (last word {wire[-1][0] if wire else None!r}); pipecat ended the "
                 f"turn with {tail}: a close_context after a flush must still speak the flushed text, "
                 "then send isFinal")

    def started_contexts(bot, since):
        return [f.context_id for t, _, f in bot.down.frames if isinstance(f, TTSStartedFrame) and t >= since]

    def stopped(bot, context_id):
        return any(isinstance(f, TTSStoppedFrame) and f.context_id == context_id for _, _, f in bot.down.frames)

    def utterance(bot, text, since, name):
        """Audio, words and their times for the context that started after `since`."""
        ctxs = started_contexts(bot, since)
        if not ctxs:
            fail(f"{name}: no TTSStartedFrame")
        cid = ctxs[0]
        frames = bot.context_frames(cid)
        audio = [(t, c, f) for t, c, f in frames if isinstance(f, TTSAudioRawFrame)]
        if not audio:
            fail(f"{name}: no audio for context {cid}")
        pcm = b"".join(f.audio for _, _, f in audio)
        base_clock = audio[0][1]
        words = [(f.text, (f.pts - base_clock) / 1e9) for t, _, f in bot.down.frames
                 if isinstance(f, TTSTextFrame) and getattr(f, "context_id", None) in (cid, None)
                 and f.pts is not None and t >= since]
        return cid, pcm, audio[0][0], words

    def check_words(name, text, words, duration, cid, since):
        expected = text.split()
        got = [w for w, _ in words]
        if got != expected:
            fail(f"{name}: words {got} differ from the input's {expected}")
        wire, wire_audio = true_word_starts(tap, cid, since)
        if [w for w, _ in wire] != expected:
            glued = [w for w, _ in wire if w not in expected and any(
                w == a + b for a, b in zip(expected, expected[1:]))]
            hint = (f" ({glued[0]!r}: pipecat's sentence mode sends each sentence as its own message "
                    "with no space between them, so with auto_mode=true a message boundary must be "
                    "a word boundary, with a ' ' in the alignment)") if glued else ""
            fail(f"{name}: the server's alignment, split at spaces as pipecat splits it, gives "
                 f"{[w for w, _ in wire]}, expected {expected}{hint}")
        times = [t for _, t in words]
        if times[0] < -0.02 or any(b < a for a, b in zip(times, times[1:])) or times[-1] >= duration:
            fail(f"{name}: word times not increasing within the audio's {duration:.2f} s: "
                 + ", ".join(f"{w}@{t:.3f}" for w, t in words) + ". pipecat advances its clock per "
                 "message by the last character's start + duration, so each message's alignment "
                 "must end where its audio does")
        compared = list(zip(words, wire))
        (_, t_last), (_, s_last) = compared[-1]
        if len(words) > 1 and abs(t_last - s_last) > WORD_TIME_TOLERANCE_S \
                and abs(t_last - words[-2][1]) < 0.002:
            # pipecat emits a word when the alignment shows the space after it; the last word,
            # with no space after it, is force-completed at the end with the previous word's time.
            compared.pop()
            if name not in LAST_WORD_NOTED:
                LAST_WORD_NOTED.add(name)
                note(f"{name}: the alignment ends without a space after the last word, so pipecat "
                     f"dates {words[-1][0]!r} at the previous word's time ({t_last:.3f} s; the audio "
                     f"has it at {s_last:.3f} s)")
        worst = max(abs(t - s) for (_, t), (_, s) in compared)
        if worst > WORD_TIME_TOLERANCE_S:
            pairs = ", ".join(f"{w} {t:.3f}/{s:.3f}" for (w, t), (_, s) in zip(words, wire))
            fail(f"{name}: pipecat's word times drift from the audio by up to {worst * 1000:.0f} ms "
                 f"(pipecat/wire s: {pairs}). pipecat advances its clock per message by the last "
                 "character's start + duration, so each message's alignment must end where its audio does")
        return worst

    # ---- 1. token streaming (pipecat TextAggregationMode.TOKEN: auto_mode=false) ----
    async with Bot("af_heart", TextAggregationMode.TOKEN) as bot:
        since = time.monotonic()
        t0, _ = await bot.say(REPLY)
        await bot.wait_for(lambda: any(stopped(bot, c) for c in started_contexts(bot, since)),
                           "the end of the reply (TTSStoppedFrame: isFinal)")
        cid, pcm, t_first, words = utterance(bot, REPLY, since, "pipecat token stream")
        check_complete("pipecat token stream", REPLY, cid, since)
        (outdir / "pipecat_token.pcm").write_bytes(pcm)
        duration, rms = check_speech("pipecat token stream", pcm, REPLY)
        ok(f"pipecat {version} token stream (af_heart, {len(llm_tokens(REPLY))} tokens at "
           f"{TOKENS_PER_SEC:g}/s): {duration:.2f} s of audio, RMS {rms:.3f}, "
           f"first audio {(t_first - t0) * 1000:.0f} ms after the first token")
        worst = check_words("pipecat token stream", REPLY, words, duration, cid, since)
        ok(f"pipecat token stream words: {len(words)} in order, times {words[0][1]:.2f}-"
           f"{words[-1][1]:.2f} s within {duration:.2f} s, within {worst * 1000:.0f} ms of the audio's")
        sent = [e["msg"] for e in tap.messages(direction="c2s", since=since)]
        if not any(m.get("close_context") and m.get("context_id") == cid for m in sent):
            fail("pipecat did not close its context at the end of the turn (expected close_context)")
        if bot.errors():
            fail(f"pipecat reported errors: {[e.error for e in bot.errors()]}")

        # ---- 2. interruption mid-reply (pipecat closes the context), then a new reply ----
        since = time.monotonic()
        t0, t_int = await bot.say(LONG, interrupt_after_audio=0.3)
        if t_int is None:
            fail("pipecat interruption: the reply ended before any audio arrived to interrupt")
        cancelled = started_contexts(bot, since)[0]
        await asyncio.sleep(2.0)
        closes = [e for e in tap.messages(direction="c2s", since=t_int)
                  if e["msg"].get("close_context") and e["msg"].get("context_id") == cancelled]
        if not closes:
            fail("pipecat interruption: no close_context went out for the interrupted context")
        t_close = closes[0]["t"]
        audio_after = [e for e in tap.messages(direction="s2c", since=since)
                       if ctx_of(e["msg"]) == cancelled and e["msg"].get("audio")]
        late = [e for e in audio_after if e["t"] > t_close + CANCEL_LIMIT_S]
        if late:
            fail(f"pipecat interruption: {len(late)} audio messages for the closed context came "
                 f"more than {CANCEL_LIMIT_S:g} s after close_context (last "
                 f"{(late[-1]['t'] - t_close) * 1000:.0f} ms after)")
        last = max((e["t"] for e in audio_after), default=t_close)
        finals = [e for e in tap.messages(direction="s2c", since=since)
                  if ctx_of(e["msg"]) == cancelled and e["msg"].get("isFinal") is True]
        heard = sum(len(base64.b64decode(e["msg"]["audio"])) for e in audio_after) / 2 / RATE
        ok(f"pipecat interruption: close_context {(t_close - t_int) * 1000:.0f} ms after the "
           f"InterruptionFrame; the context's audio stopped {max(0.0, last - t_close) * 1000:.0f} ms "
           f"after it ({heard:.2f} s of its audio sent"
           + (", then isFinal)" if finals else ", no isFinal)"))

        since = time.monotonic()
        t0, _ = await bot.say(SECOND)
        await bot.wait_for(lambda: any(stopped(bot, c) for c in started_contexts(bot, since)),
                           "the reply after the interruption")
        cid, pcm, t_first, words = utterance(bot, SECOND, since, "after interruption")
        (outdir / "pipecat_after_interruption.pcm").write_bytes(pcm)
        duration, rms = check_speech("pipecat reply after the interruption", pcm, SECOND)
        check_words("pipecat reply after the interruption", SECOND, words, duration, cid, since)
        ok(f"pipecat reply after the interruption: {duration:.2f} s, RMS {rms:.3f}, "
           f"{len(words)} words in order, first audio {(t_first - t0) * 1000:.0f} ms after the first token")

        # ---- 3. interruption after the whole reply was sent (the usual barge-in) ----
        since = time.monotonic()
        t0, _ = await bot.say(LONG, rate=200.0)

        def turn_closed():
            ids = started_contexts(bot, since)
            return bool(ids) and any(e["msg"].get("close_context") and e["msg"].get("context_id") == ids[0]
                                     for e in tap.messages(direction="c2s", since=since))

        await bot.wait_for(turn_closed, "the close_context at the end of a long reply")
        t_int = time.monotonic()
        await bot.worker.queue_frame(InterruptionFrame())
        await asyncio.sleep(2.0)
        cid = started_contexts(bot, since)[0]
        msgs = [e for e in tap.messages(direction="c2s", since=since) if e["msg"].get("context_id") == cid]
        kinds = [("flush" if m["msg"].get("flush") else "close_context" if m["msg"].get("close_context")
                  else "text") for m in msgs]
        closes = [e["t"] for e in msgs if e["msg"].get("close_context")]
        audio = [e for e in tap.messages(direction="s2c", since=since)
                 if ctx_of(e["msg"]) == cid and e["msg"].get("audio")]
        after = [e for e in audio if e["t"] > t_int + CANCEL_LIMIT_S]
        sent_s = sum(len(base64.b64decode(e["msg"]["audio"])) for e in audio) / 2 / RATE
        note(f"barge-in after the reply's end: pipecat sent {kinds.count('close_context')} close_context "
             f"(the first at the turn's end, right after its flush; the second on the interruption, "
             f"{(closes[-1] - t_int) * 1000:.0f} ms after it); the server sent {sent_s:.2f} s of the "
             f"context's audio, {len(after)} messages more than {CANCEL_LIMIT_S:g} s after the "
             "interruption (pipecat drops them; only a server that stops on the second close saves that work)")
        if bot.errors():
            fail(f"pipecat reported errors: {[e.error for e in bot.errors()]}")

    # ---- 4. pipecat's default: sentence aggregation (auto_mode=true), a blended voice ----
    async with Bot(BLEND, TextAggregationMode.SENTENCE) as bot:
        since = time.monotonic()
        t0, _ = await bot.say(REPLY)
        await bot.wait_for(lambda: any(stopped(bot, c) for c in started_contexts(bot, since)),
                           "the end of the reply (sentence mode)")
        cid, pcm, t_first, words = utterance(bot, REPLY, since, "pipecat sentence mode")
        check_complete("pipecat sentence mode", REPLY, cid, since)
        (outdir / "pipecat_sentence.pcm").write_bytes(pcm)
        duration, rms = check_speech("pipecat sentence mode", pcm, REPLY)
        check_words("pipecat sentence mode", REPLY, words, duration, cid, since)
        first_sentence = [e["t"] for e in tap.messages(direction="c2s", since=since)
                          if e["msg"].get("context_id") == cid and (e["msg"].get("text") or "").strip()]
        ok(f"pipecat sentence mode ({BLEND}, auto_mode=true): {duration:.2f} s, RMS {rms:.3f}, "
           f"{len(words)} words in order, first audio {(t_first - first_sentence[0]) * 1000:.0f} ms "
           f"after the first sentence went out ({(t_first - t0) * 1000:.0f} ms after the first token)")
        if bot.errors():
            fail(f"pipecat reported errors: {[e.error for e in bot.errors()]}")


# --------------------------------------------------------------------------------------------
# raw websockets
# --------------------------------------------------------------------------------------------


async def recv_json(ws, timeout=TIMEOUT_S):
    raw = await asyncio.wait_for(ws.recv(), timeout)
    if not isinstance(raw, str):
        fail(f"server sent a binary frame ({len(raw)} bytes); expected JSON text")
    try:
        return json.loads(raw)
    except ValueError:
        fail(f"server sent text that is not JSON: {raw[:200]!r}")


async def expect_close(ws, code, name, timeout=30.0):
    """Reads until the server closes; checks the close code. Returns the messages before it."""
    seen = []
    try:
        while True:
            raw = await asyncio.wait_for(ws.recv(), timeout)
            seen.append(raw)
    except websockets.ConnectionClosed as e:
        got = e.rcvd.code if e.rcvd else None
        if got != code:
            fail(f"{name}: closed with {got} ({e.rcvd.reason if e.rcvd else 'no close frame'}), expected {code}")
        return seen, e.rcvd.reason
    except TimeoutError:
        fail(f"{name}: the server did not close within {timeout:.0f} s (expected {code})")


async def collect_context(ws, context_id, timeout=TIMEOUT_S, others=None, keep_errors=False):
    """Audio messages for `context_id` until its isFinal. Messages for other contexts go to
    `others` (a dict of lists) if given, else fail; error messages for it are kept with
    `keep_errors`, else fail."""
    msgs = []
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            fail(f"no isFinal for context {context_id} in {timeout:.0f} s")
        msg = await recv_json(ws, left)
        cid = ctx_of(msg)
        if cid != context_id and others is not None:
            others.setdefault(cid, []).append(msg)
            continue
        if "error" in msg and not keep_errors:
            fail(f"unexpected error message: {msg}")
        if cid != context_id:
            fail(f"message for context {cid} while waiting for {context_id}: {str(msg)[:200]}")
        if msg.get("isFinal") is True:
            return msgs, msg
        msgs.append(msg)


def check_alignment(name, msgs, text):
    """The chars cover the sent text in order (whitespace aside), start inside their message's
    audio and increase within it; returns (pcm, chars)."""
    pcm, chars = b"", []
    for m in msgs:
        audio = base64.b64decode(m.get("audio") or "")
        dur_ms = len(audio) / 2 / RATE * 1000
        al = m.get("alignment")
        if al:
            c, s, d = al.get("chars", []), al.get("charStartTimesMs", []), al.get("charDurationsMs", [])
            if not (len(c) == len(s) == len(d)):
                fail(f"{name}: alignment arrays differ in length: {len(c)} chars, {len(s)} starts, {len(d)} durations")
            if any(b < a for a, b in zip(s, s[1:])) or any(x < 0 or x > dur_ms + 1 for x in s):
                fail(f"{name}: character start times {s} not increasing within the message's {dur_ms:.0f} ms")
            if al.get("charsDurationsMs") not in (None, d):
                fail(f"{name}: charsDurationsMs differs from charDurationsMs")
            chars += c
        pcm += audio
    squash = lambda s: re.sub(r"\s+", " ", s).strip()
    if squash("".join(chars)) != squash(text):
        fail(f"{name}: alignment spells {''.join(chars)!r}, expected {text!r}")
    return pcm, chars


async def raw_checks(url, token, outdir):
    base = http_to_ws(url)
    voice = urllib.parse.quote("af_heart", safe="")
    single = f"{base}/v1/text-to-speech/{voice}/stream-input?output_format=pcm_24000&model_id=eleven_flash_v2_5"
    multi = f"{base}/v1/text-to-speech/{voice}/multi-stream-input?output_format=pcm_24000"
    bearer = {"Authorization": f"Bearer {token}"}
    xi = {"xi-api-key": token}

    # single context, Bearer header, token by token, {"text": ""} to end
    async with connect(single, additional_headers=bearer, max_size=16 << 20, compression=None) as ws:
        t0 = time.monotonic()
        await ws.send(json.dumps({"text": " ", "voice_settings": {"speed": 1.0, "stability": 0.5},
                                  "generation_config": {"chunk_length_schedule": [120, 160, 250, 290]}}))

        async def feed():
            for tok in llm_tokens(REPLY):
                await ws.send(json.dumps({"text": tok, "try_trigger_generation": False, "flush": False}))
                await asyncio.sleep(1 / TOKENS_PER_SEC)
            await ws.send(json.dumps({"text": ""}))

        feeder = asyncio.create_task(feed())
        msgs, first_at = [], None
        while True:
            msg = await recv_json(ws)
            if "error" in msg:
                fail(f"stream-input: error message {msg}")
            if msg.get("isFinal") is True:
                final = msg
                break
            if msg.get("audio") and first_at is None:
                first_at = time.monotonic() - t0
            msgs.append(msg)
        await feeder
        for key in ("audio", "alignment", "normalizedAlignment"):
            if key not in final or final[key] is not None:
                fail(f"stream-input: final message should have {key}: null: {final}")
        await expect_close(ws, 1000, "stream-input after the final message")
    pcm, chars = check_alignment("stream-input", msgs, REPLY)
    (outdir / "single.pcm").write_bytes(pcm)
    duration, rms = check_speech("stream-input", pcm, REPLY)
    ok(f"stream-input (Bearer header, {{\"text\": \"\"}} to end): {len(msgs)} audio messages, "
       f"{duration:.2f} s, RMS {rms:.3f}, {len(chars)} aligned characters in order, first audio "
       f"{first_at * 1000:.0f} ms after the first message, isFinal, then close 1000")

    # token in the first message; flush without "text"; close_context right after flush
    async with connect(multi, max_size=16 << 20, compression=None) as ws:
        await ws.send(json.dumps({"text": " ", "context_id": "a", "xi_api_key": token}))
        await ws.send(json.dumps({"text": "Flushed text is spoken in full. ", "context_id": "a"}))
        await ws.send(json.dumps({"text": "Even after the close.", "context_id": "a"}))
        await ws.send(json.dumps({"context_id": "a", "flush": True}))
        await ws.send(json.dumps({"context_id": "a", "close_context": True}))
        msgs, final = await collect_context(ws, "a")
        pcm, _ = check_alignment("flush then close_context", msgs,
                                 "Flushed text is spoken in full. Even after the close.")
        check_speech("flush then close_context", pcm, "Flushed text is spoken in full. Even after the close.")
        ok(f"xi_api_key in the first message; {{flush}} then {{close_context}} at once (pipecat's end of "
           f"turn): all {pcm_stats(pcm)[0]:.2f} s of the flushed text, then isFinal")

        # keep-alives pipecat sends: context-less, and for a context it has closed
        await ws.send(json.dumps({"text": ""}))
        await ws.send(json.dumps({"text": "", "context_id": "a"}))
        try:
            msg = await asyncio.wait_for(ws.recv(), 1.0)
            fail(f"keep-alives (context-less, and for closed context a) were answered: {str(msg)[:300]}")
        except TimeoutError:
            pass
        except websockets.ConnectionClosed as e:
            fail(f"keep-alives (context-less, and for closed context a) closed the socket: {e}")
        # invalid JSON while another context speaks
        await ws.send(json.dumps({"text": " ", "context_id": "b"}))
        await ws.send(json.dumps({"text": "Still talking after a broken message. ", "context_id": "b"}))
        await ws.send("{this is not json")
        err = await recv_json(ws)
        if "error" not in err or not isinstance(err.get("message"), str):
            fail(f"invalid JSON: expected an error message first, got {str(err)[:300]}")
        await ws.send(json.dumps({"text": "And it ends well.", "context_id": "b", "flush": True}))
        await ws.send(json.dumps({"context_id": "b", "close_context": True}))
        msgs, _ = await collect_context(ws, "b")
        check_alignment("context after invalid JSON", msgs, "Still talking after a broken message. And it ends well.")
        ok(f"keep-alives (context-less and for a closed context) ignored; invalid JSON answered "
           f"{{\"error\": {err['error']!r}}} and the socket and context b kept working")

        # a context id reused while its context still finishes: an error, and the finishing
        # context is untouched; reused after its isFinal: a new, unrelated context (ElevenLabs:
        # "the same context id can be used again but will not be linked to the previous one")
        await ws.send(json.dumps({"text": " ", "context_id": "d"}))
        await ws.send(json.dumps({"text": "This context is still finishing when its id comes back.",
                                  "context_id": "d", "flush": True}))
        await ws.send(json.dumps({"context_id": "d", "close_context": True}))
        await ws.send(json.dumps({"text": "Reusing an id too soon. ", "context_id": "d", "flush": True}))
        msgs, _ = await collect_context(ws, "d", keep_errors=True)
        errors = [m for m in msgs if "error" in m]
        if not errors:
            fail("context id reused while finishing: expected an error for context d")
        audio_msgs = [m for m in msgs if "error" not in m]
        check_alignment("context d after its id was reused too soon", audio_msgs,
                        "This context is still finishing when its id comes back.")
        await ws.send(json.dumps({"text": "Reusing a finished id. ", "context_id": "a", "flush": True}))
        await ws.send(json.dumps({"context_id": "a", "close_context": True}))
        msgs, _ = await collect_context(ws, "a")
        check_alignment("context id a reused after its isFinal", msgs, "Reusing a finished id. ")
        ok(f"context id reused while its context finishes: {{\"error\": {errors[0]['error']!r}}}, the "
           "finishing context untouched; reused after its isFinal: a new context that speaks")
        await ws.send(json.dumps({"close_socket": True}))
        await expect_close(ws, 1000, "close_socket")
        ok("close_socket: closed with 1000")

    # other output formats: the same short text, lengths plausible for each
    text = "One, two, three, four, five."
    for fmt, rate, width in (("pcm_16000", 16000, 2), ("ulaw_8000", 8000, 1), ("mp3_44100_128", None, None)):
        url_fmt = f"{base}/v1/text-to-speech/{voice}/stream-input?output_format={fmt}"
        async with connect(url_fmt, additional_headers=xi, max_size=16 << 20, compression=None) as ws:
            await ws.send(json.dumps({"text": " "}))
            await ws.send(json.dumps({"text": text + " ", "flush": True}))
            await ws.send(json.dumps({"text": ""}))
            data = b""
            while True:
                msg = await recv_json(ws)
                if "error" in msg:
                    fail(f"{fmt}: error message {msg}")
                if msg.get("isFinal") is True:
                    break
                data += base64.b64decode(msg.get("audio") or "")
        (outdir / f"formats.{fmt}").write_bytes(data)
        if rate:
            secs = len(data) / width / rate
            if not len(text) / 25 <= secs <= len(text) / 8 + 1.0:
                fail(f"{fmt}: {len(data)} bytes = {secs:.2f} s at {rate} Hz, implausible for {len(text)} characters")
        elif not (data[:3] == b"ID3" or (len(data) > 1 and data[0] == 0xFF and data[1] & 0xE0 == 0xE0)):
            fail(f"{fmt}: does not start with an MP3 frame or ID3 tag: {data[:8]!r}")
        if width == 2 and pcm_stats(data, rate)[1] < 0.01:
            fail(f"{fmt}: silent")
    ok("output formats pcm_16000, ulaw_8000 (lengths plausible at their rates), mp3_44100_128 (MP3 frames)")

    # binary frame, 1 MB message, wrong and missing tokens: each must end in a close code
    cases = [
        ("binary frame", multi, xi, [{"text": " ", "context_id": "a"}, b"\x00\x01binary"], 1003),
        ("1 MB text message", multi, xi, [{"text": "x" * (1 << 20), "context_id": "a"}], 1009),
        ("wrong xi-api-key header", single, {"xi-api-key": "wrong"}, [{"text": " "}], 1008),
        ("wrong Bearer token header", single, {"Authorization": "Bearer wrong"}, [{"text": " "}], 1008),
        ("wrong xi_api_key in the first message", single, {}, [{"text": " ", "xi_api_key": "wrong"}], 1008),
        ("no token", multi, {}, [{"text": " ", "context_id": "a"}], 1008),
    ]
    for name, url_, headers, payloads, code in cases:
        payloads = payloads + [{"text": "Should not be spoken. ", "flush": True, "context_id": "a"}] \
            if code == 1008 else payloads
        try:
            async with connect(url_, additional_headers=headers, compression=None) as ws:
                try:
                    for p in payloads:
                        await ws.send(p if isinstance(p, bytes) else json.dumps(p))
                except websockets.ConnectionClosed:
                    pass  # closed while we were still sending: the close code decides
                seen, reason = await expect_close(ws, code, name)
        except websockets.InvalidStatus as e:
            # A wrong token in a header is refused before the upgrade, with the API's 401 body.
            status = e.response.status_code
            if code == 1008 and status == 401 and "header" in name:
                body = e.response.body.decode("utf-8", "replace")
                if "token" not in body:
                    fail(f"{name}: HTTP 401 without a message naming the token: {body[:200]}")
                ok(f"{name}: the upgrade refused with HTTP 401 ({json.loads(body)['error']['code']})")
                continue
            fail(f"{name}: the upgrade was refused with HTTP {status}; expected close {code}")
        for raw in seen:
            try:
                msg = json.loads(raw) if isinstance(raw, str) else {}
            except ValueError:
                msg = {}
            if isinstance(msg, dict) and msg.get("audio"):
                fail(f"{name}: audio was sent before the close")
        ok(f"{name}: closed with {code} ({reason!r})")


async def limit_checks(url, token):
    """Text after the end of input, the inactivity timeout and keep-alives, a flood of tiny
    messages beside a speaking context, and a client that leaves mid-audio."""
    base = http_to_ws(url)
    voice = urllib.parse.quote("af_heart", safe="")
    xi = {"xi-api-key": token}
    single = f"{base}/v1/text-to-speech/{voice}/stream-input?output_format=pcm_24000"
    multi = f"{base}/v1/text-to-speech/{voice}/multi-stream-input?output_format=pcm_24000"

    # text after {"text": ""}: an error message; what came before is still said, then 1000
    async with connect(single, additional_headers=xi, compression=None) as ws:
        await ws.send(json.dumps({"text": " "}))
        await ws.send(json.dumps({"text": "Before the end. "}))
        await ws.send(json.dumps({"text": ""}))
        await ws.send(json.dumps({"text": "After the end. "}))
        errors, audio, final = [], 0, False
        try:
            while True:
                msg = await recv_json(ws)
                if "error" in msg:
                    errors.append(msg)
                elif msg.get("isFinal") is True:
                    final = True
                elif msg.get("audio"):
                    audio += len(base64.b64decode(msg["audio"]))
        except websockets.ConnectionClosed as e:
            code = e.rcvd.code if e.rcvd else None
        if not errors or not final or code != 1000 or audio < 24_000:
            fail(f"text after the end of input: errors {errors}, final {final}, close {code}, {audio} bytes")
    ok(f"text after the end of input: {{\"error\": {errors[0]['error']!r}}}; the text before it "
       "said, isFinal, close 1000")

    # inactivity: keep-alives hold the socket open past the timeout, silence closes it with 1008
    async with connect(multi + "&inactivity_timeout=2", additional_headers=xi, compression=None) as ws:
        await ws.send(json.dumps({"text": " ", "context_id": "k"}))
        for _ in range(4):
            await asyncio.sleep(1.0)
            await ws.send(json.dumps({"text": "", "context_id": "k"}))
        await ws.send(json.dumps({"text": "Still here.", "context_id": "k", "flush": True}))
        await ws.send(json.dumps({"context_id": "k", "close_context": True}))
        msgs, _ = await collect_context(ws, "k")
        if not any(m.get("audio") for m in msgs):
            fail("inactivity: no audio after 4 s of keep-alives")
        t0 = time.monotonic()
        _, reason = await expect_close(ws, 1008, "inactivity_timeout=2 without messages", timeout=10)
        waited = time.monotonic() - t0
    ok(f"keep-alives every second kept a 2 s inactivity_timeout open for 4 s; then silence closed "
       f"it with 1008 after {waited:.1f} s ({reason[:60]!r})")

    # pings are not activity: a socket that never authenticates and only pings is closed by its
    # inactivity_timeout like a silent one
    async with connect(multi + "&inactivity_timeout=2", compression=None,
                       ping_interval=None) as ws:
        t0 = time.monotonic()

        async def keep_pinging():
            while True:
                await asyncio.sleep(0.5)
                await ws.ping()

        pinger = asyncio.create_task(keep_pinging())
        try:
            await expect_close(ws, 1008, "unauthenticated pings only", timeout=10)
        finally:
            pinger.cancel()
        waited = time.monotonic() - t0
    ok(f"a socket that only pinged, without a token, was closed with 1008 after {waited:.1f} s")

    # a text frame that is not UTF-8: close 1007, not a dropped connection
    async with connect(multi, additional_headers=xi, compression=None) as ws:
        await ws.send(b'{"text": "\xff\xfe", "context_id": "u"}', text=True)
        _, reason = await expect_close(ws, 1007, "a text frame that is not UTF-8", timeout=10)
    ok(f"a text frame that is not UTF-8 was closed with 1007 ({reason[:60]!r})")

    # thousands of tiny messages while another context speaks: all taken, the other context
    # finishes, the flooded one is cancelled cleanly
    async with connect(multi, additional_headers=xi, max_size=16 << 20, compression=None) as ws:
        await ws.send(json.dumps({"text": " ", "context_id": "talk"}))
        await ws.send(json.dumps({"text": "A short sentence, said while the socket is flooded.",
                                  "context_id": "talk", "flush": True}))
        await ws.send(json.dumps({"context_id": "talk", "close_context": True}))
        t0 = time.monotonic()
        n = 3000
        for i in range(n):
            await ws.send(json.dumps({"text": "la ", "context_id": "flood"}))
        sent_s = time.monotonic() - t0
        await ws.send(json.dumps({"context_id": "flood", "close_context": True}))
        finals, talk_audio = set(), 0
        deadline = time.monotonic() + TIMEOUT_S
        while finals != {"talk", "flood"}:
            msg = await recv_json(ws, max(1.0, deadline - time.monotonic()))
            if "error" in msg:
                fail(f"tiny messages: error {msg}")
            if msg.get("isFinal") is True:
                finals.add(ctx_of(msg))
            elif ctx_of(msg) == "talk" and msg.get("audio"):
                talk_audio += len(base64.b64decode(msg["audio"]))
        if talk_audio < 2 * 24_000:
            fail(f"tiny messages: the other context said only {talk_audio / 48_000:.2f} s")
    ok(f"{n} tiny messages in {sent_s:.2f} s ({n / max(sent_s, 1e-9):.0f}/s) beside a speaking "
       f"context: it said all {talk_audio / 48_000:.2f} s, and the flooded context was cancelled "
       "with its isFinal")

    # a client that leaves mid-audio: the server goes on serving the next one
    ws = await connect(single, additional_headers=xi, compression=None)
    await ws.send(json.dumps({"text": " "}))
    await ws.send(json.dumps({"text": LONG, "flush": True}))
    while not (await recv_json(ws)).get("audio"):
        pass
    ws.transport.abort()
    async with connect(single, additional_headers=xi, compression=None) as ws:
        await ws.send(json.dumps({"text": " "}))
        await ws.send(json.dumps({"text": "Next client. ", "flush": True}))
        await ws.send(json.dumps({"text": ""}))
        got = 0
        try:
            while True:
                msg = await recv_json(ws)
                if msg.get("audio"):
                    got += len(base64.b64decode(msg["audio"]))
        except websockets.ConnectionClosed:
            pass
        if got < 24_000:
            fail(f"after a client left mid-audio the next got {got} bytes")
    ok("a client that left mid-audio (connection dropped) did not disturb the next one")


async def main_async(url, token, outdir):
    host_port = urllib.parse.urlsplit(url)
    tap = await WireTap(host_port.hostname, host_port.port or 80).start()
    try:
        print(f"websockets {websockets.__version__} against {url}", flush=True)
        try:
            await pipecat_checks(url, token, outdir, tap)
        finally:
            tap.dump(outdir / "wire.jsonl")
        await raw_checks(url, token, outdir)
        await limit_checks(url, token)
    finally:
        await tap.close()


def main():
    if len(sys.argv) != 4:
        fail("usage: ws_clients.py URL TOKEN OUTDIR")
    url, token, outdir = sys.argv[1].rstrip("/"), sys.argv[2], Path(sys.argv[3])
    outdir.mkdir(parents=True, exist_ok=True)
    asyncio.run(main_async(url, token, outdir))
    print("all WebSocket client checks passed", flush=True)


if __name__ == "__main__":
    main()
