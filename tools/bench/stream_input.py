#!/usr/bin/env python3
"""Latency of speech fed by a streaming LLM: Banter's ElevenLabs-style WebSocket input against
waiting for the whole reply and POSTing it.

    PY=~/.cache/banter-api-test/venv/bin/python      # tools/api-test/setup.sh makes it (websockets)
    $PY tools/bench/stream_input.py [--banter PATH] [--rates 15,30,60] [--reps 5]
                                    [--concurrent 4] [--out stream-input.json]

Starts `banter serve` itself (a temporary BANTER_CONFIG_DIR, as load.py does; or give --url and
--token of a running server). A simulated LLM emits a ~45-word, four-sentence reply as word-ish
tokens (leading space, punctuation attached, long words in two pieces) at each rate, into
`/v1/text-to-speech/af_heart/stream-input?output_format=pcm_24000`, then `{"text": ""}`. Every
run's reply is different (names, places, times), so no render cache can answer it.

Per run:
  TTFA from first token   first audio - the moment the first token was sent
  TTFA from clause end    first audio - the moment the token that completes the first clause and
                          the space after it was sent (a server can start no earlier; target
                          <= 300 ms)
  stalls                  a player starts at the first audio and plays in real time; a stall is a
                          moment it runs dry before the last audio (count and total ms; target:
                          none at >= 15 tokens/s)
Baseline, per run: the same kind of reply POSTed whole to /v1/audio/speech (pcm, streamed)
once the LLM would have finished it: wait = emission time (first to last token) + that
request's TTFA; also from the end of the first clause, and its stalls.
Concurrency: --concurrent contexts on one multi-stream-input socket, each fed by its own LLM at
30 tokens/s, all starting together, each ended with flush + close_context (as pipecat ends a
turn): per-context TTFA and stalls.
Standard library + websockets.
"""
import argparse
import asyncio
import base64
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

try:
    import websockets
    from websockets.asyncio.client import connect
except ImportError:
    sys.exit("stream_input.py needs websockets: run tools/api-test/setup.sh and use its venv's python "
             "(~/.cache/banter-api-test/venv/bin/python)")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BYTES_PER_SEC = 24_000 * 2
STALL_MIN_S = 0.005  # gaps shorter than this are scheduling noise, not audible
CLAUSE = re.compile(r"[,.;:!?]\s")

NAMES = ["Alice", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ingrid", "Jonas",
         "Keiko", "Lars", "Mateo", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sven", "Tamsin",
         "Ulrich", "Vera", "Wendell", "Ximena", "Yusuf", "Zofia"]
PLACES = ["museum", "aquarium", "library", "gallery", "observatory", "botanical garden", "castle"]
HOURS = ["eight", "half past eight", "nine", "half past nine", "ten", "eleven"]
CLOSING = ["sunset", "six in the evening", "seven", "half past five", "dusk"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
COUNTS = ["two", "three", "four", "five"]
OTHER = ["the harbour tour", "the night market", "the river cruise", "the old town walk",
         "the cooking class"]


def reply(i):
    """The i-th simulated LLM reply: four sentences, ~45 words, different for every i."""
    pick = lambda xs, k=1: xs[(i // k) % len(xs)]
    return (f"Alright {pick(NAMES)}, here is what I found. The {pick(PLACES, 2)} opens at "
            f"{pick(HOURS, 3)} tomorrow morning, and the garden stays open until {pick(CLOSING, 5)}. "
            f"I can book {pick(COUNTS, 7)} tickets for {pick(DAYS, 11)}, and send the confirmation "
            f"to your email right away. Would that work for you, or should I look at "
            f"{pick(OTHER, 13)} instead?")


def llm_tokens(text):
    """Word-ish tokens as an LLM streams them: a leading space, punctuation attached, words
    longer than eight letters cut in two (no space before the second piece)."""
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


def clause_token(tokens):
    """Index of the token that completes the first clause and the space after it."""
    text = "".join(tokens)
    m = CLAUSE.search(text)
    end = m.end() if m else len(text)  # the space is character end-1
    pos = 0
    for i, tok in enumerate(tokens):
        pos += len(tok)
        if pos >= end:
            return i
    return len(tokens) - 1


def stalls(chunks):
    """chunks: [(arrival, seconds of audio)] in order. A player starts at the first and plays in
    real time; returns (number of times it ran dry, total stall seconds)."""
    if not chunks:
        return 0, 0.0
    t0, d0 = chunks[0]
    ends = t0 + d0  # when the audio received so far has finished playing
    n, total = 0, 0.0
    for t, d in chunks[1:]:
        if t > ends:
            if t - ends > STALL_MIN_S:
                n += 1
                total += t - ends
            ends = t
        ends += d
    return n, total


def ms(x):
    return "-" if x is None else f"{x * 1000:.0f}"


def med_max(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    return statistics.median(xs), max(xs)


class Server:
    def __init__(self, args):
        self.proc = None
        self.config = None
        if args.url:
            u = urllib.parse.urlsplit(args.url)
            self.host, self.port, self.token = u.hostname, u.port, args.token
            return
        self.config = tempfile.TemporaryDirectory(prefix="banter-stream-input-")
        env = dict(os.environ, BANTER_CONFIG_DIR=self.config.name, RUST_LOG="warn")
        self.token = subprocess.run([args.banter, "serve", "--show-token"], env=env, check=True,
                                    capture_output=True, text=True).stdout.strip()
        self.proc = subprocess.Popen([args.banter, "serve", "--port", "0", "--max-queue", "256",
                                      "--idle-timeout", "600"], stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.stop()
            sys.exit(f"banter serve: no URL on its first line (got {line!r})")
        self.host, port = line[len("http://"):].rsplit(":", 1)
        self.port = int(port)

    def stop(self):
        if self.proc:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.config:
            self.config.cleanup()

    def ws(self, path):
        return f"ws://{self.host}:{self.port}{path}"


INIT = {"text": " ", "voice_settings": {"speed": 1.0, "stability": 0.5, "similarity_boost": 0.8},
        "generation_config": {"chunk_length_schedule": [120, 160, 250, 290]}}


async def single_run(server, text, rate, voice, timeout):
    """One reply into stream-input; returns the run's record (times relative to the first token)."""
    tokens = llm_tokens(text)
    k = clause_token(tokens)
    url = server.ws(f"/v1/text-to-speech/{urllib.parse.quote(voice, safe='')}/stream-input"
                    "?output_format=pcm_24000")
    sent, chunks, error = [], [], None
    async with connect(url, additional_headers={"xi-api-key": server.token}, max_size=64 << 20,
                       compression=None, open_timeout=timeout) as ws:
        await ws.send(json.dumps(INIT))

        async def feed():
            t0 = time.perf_counter()
            for i, tok in enumerate(tokens):
                await asyncio.sleep(max(0.0, t0 + i / rate - time.perf_counter()))
                sent.append(time.perf_counter())
                await ws.send(json.dumps({"text": tok, "try_trigger_generation": False}))
            await ws.send(json.dumps({"text": ""}))

        feeder = asyncio.create_task(feed())
        try:
            async with asyncio.timeout(timeout):
                async for raw in ws:
                    now = time.perf_counter()
                    msg = json.loads(raw)
                    if "error" in msg:
                        error = f"{msg.get('error')}: {msg.get('message')}"
                        break
                    if msg.get("audio"):
                        chunks.append((now, len(base64.b64decode(msg["audio"])) / BYTES_PER_SEC))
                    if msg.get("isFinal") is True:
                        break
        except TimeoutError:
            error = f"no final message in {timeout:.0f} s"
        except websockets.ConnectionClosed as e:
            error = f"closed early: {e}"
        await asyncio.gather(feeder, return_exceptions=True)
    return score(sent, k, chunks, error, tokens, rate)


def score(sent, k, chunks, error, tokens, rate):
    t0 = sent[0]
    first = chunks[0][0] if chunks else None
    n, total = stalls(chunks)
    return {
        "tokens": len(tokens), "rate": rate, "clause_token": k,
        "emit_s": sent[-1] - t0,
        "ttfa_first_token": None if first is None else first - t0,
        "ttfa_clause_end": None if first is None else first - sent[k],
        "stalls": n, "stall_s": total,
        "audio_s": sum(d for _, d in chunks),
        "error": error,
        "sent": [t - t0 for t in sent],
        "chunks": [(t - t0, d) for t, d in chunks],
    }


def post_run(server, text, voice, timeout):
    """POST the whole reply; returns (TTFA, chunks relative to the send, error)."""
    body = json.dumps({"model": "kokoro", "input": text, "voice": voice, "response_format": "pcm"})
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {server.token}",
               "Host": f"127.0.0.1:{server.port}"}
    conn = http.client.HTTPConnection(server.host, server.port, timeout=timeout)
    chunks = []
    t0 = time.perf_counter()
    try:
        conn.request("POST", "/v1/audio/speech", body=body, headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            return None, [], f"HTTP {resp.status}: {resp.read()[:200]!r}"
        while True:
            data = resp.read1(1 << 20)
            if not data:
                break
            chunks.append((time.perf_counter() - t0, len(data) / BYTES_PER_SEC))
    except (OSError, http.client.HTTPException) as e:
        return None, chunks, f"{type(e).__name__}: {e}"
    finally:
        conn.close()
    return (chunks[0][0] if chunks else None), chunks, None


async def concurrent_run(server, texts, rate, voice, timeout):
    """len(texts) contexts on one multi-stream-input socket, each its own LLM, starting together."""
    url = server.ws(f"/v1/text-to-speech/{urllib.parse.quote(voice, safe='')}/multi-stream-input"
                    "?output_format=pcm_24000")
    ids = [f"ctx{i}" for i in range(len(texts))]
    sent = {c: [] for c in ids}
    chunks = {c: [] for c in ids}
    finals, errors = set(), {}
    async with connect(url, additional_headers={"xi-api-key": server.token}, max_size=64 << 20,
                       compression=None, open_timeout=timeout) as ws:
        for c in ids:
            await ws.send(json.dumps(dict(INIT, context_id=c)))

        async def feed(c, tokens):
            t0 = time.perf_counter()
            for i, tok in enumerate(tokens):
                await asyncio.sleep(max(0.0, t0 + i / rate - time.perf_counter()))
                sent[c].append(time.perf_counter())
                await ws.send(json.dumps({"text": tok, "context_id": c}))
            await ws.send(json.dumps({"context_id": c, "flush": True}))
            await ws.send(json.dumps({"context_id": c, "close_context": True}))

        tokens = {c: llm_tokens(t) for c, t in zip(ids, texts)}
        feeders = [asyncio.create_task(feed(c, tokens[c])) for c in ids]
        try:
            async with asyncio.timeout(timeout):
                async for raw in ws:
                    now = time.perf_counter()
                    msg = json.loads(raw)
                    c = msg.get("contextId", msg.get("context_id"))
                    if "error" in msg:
                        errors[c] = f"{msg.get('error')}: {msg.get('message')}"
                        finals.add(c)
                    elif msg.get("isFinal") is True:
                        finals.add(c)
                    elif msg.get("audio") and c in chunks:
                        chunks[c].append((now, len(base64.b64decode(msg["audio"])) / BYTES_PER_SEC))
                    if finals >= set(ids):
                        break
        except TimeoutError:
            for c in set(ids) - finals:
                errors[c] = f"no final message in {timeout:.0f} s"
        except websockets.ConnectionClosed as e:
            for c in set(ids) - finals:
                errors[c] = f"closed early: {e}"
        await asyncio.gather(*feeders, return_exceptions=True)
        await ws.send(json.dumps({"close_socket": True}))
    return [dict(score(sent[c], clause_token(tokens[c]), chunks[c], errors.get(c), tokens[c], rate),
                 context=c) for c in ids]


HEAD = (f"{'tok/s':>5} {'n':>2} {'emit s':>6} | {'WS TTFA from 1st token':>22} {'from clause end':>16} "
        f"{'stalls':>11} | {'POST TTFA':>10} {'wait (emit+TTFA)':>17} {'from clause end':>16} {'stalls':>11}")
SUB = (f"{'':>5} {'':>2} {'':>6} | {'med / max ms':>22} {'med / max ms':>16} {'n / ms max':>11} | "
       f"{'med / max':>10} {'med / max ms':>17} {'med / max ms':>16} {'n / ms max':>11}")


def mm(xs):
    a, b = med_max(xs)
    return f"{ms(a)} / {ms(b)}"


def row(rate, ws_runs, base_runs):
    emit = statistics.median(r["emit_s"] for r in ws_runs)
    ws_st = f"{max(r['stalls'] for r in ws_runs)} / {ms(max(r['stall_s'] for r in ws_runs))}"
    b_st = f"{max(r['stalls'] for r in base_runs)} / {ms(max(r['stall_s'] for r in base_runs))}"
    return (f"{rate:>5g} {len(ws_runs):>2} {emit:>6.2f} | {mm(r['ttfa_first_token'] for r in ws_runs):>22} "
            f"{mm(r['ttfa_clause_end'] for r in ws_runs):>16} {ws_st:>11} | "
            f"{mm(r['ttfa'] for r in base_runs):>10} {mm(r['wait'] for r in base_runs):>17} "
            f"{mm(r['wait_from_clause'] for r in base_runs):>16} {b_st:>11}")


async def bench(args, server):
    counter = iter(range(10**6))
    results = {"single": [], "concurrent": []}
    # warm-up: voice tables, allocator, first-call costs
    await single_run(server, reply(next(counter)), 60.0, args.voice, args.timeout)
    post_run(server, reply(next(counter)), args.voice, args.timeout)
    for rate in args.rates:
        ws_runs, base_runs = [], []
        for rep in range(args.reps):
            r = await single_run(server, reply(next(counter)), rate, args.voice, args.timeout)
            ws_runs.append(r)
            await asyncio.sleep(args.pause)
            text = reply(next(counter))
            tokens = llm_tokens(text)
            emit = (len(tokens) - 1) / rate
            clause_at = clause_token(tokens) / rate
            ttfa, chunks, error = post_run(server, text, args.voice, args.timeout)
            n, total = stalls(chunks)
            base_runs.append({"tokens": len(tokens), "emit_s": emit, "ttfa": ttfa,
                              "wait": None if ttfa is None else emit + ttfa,
                              "wait_from_clause": None if ttfa is None else emit + ttfa - clause_at,
                              "stalls": n, "stall_s": total, "audio_s": sum(d for _, d in chunks),
                              "error": error, "chunks": chunks})
            await asyncio.sleep(args.pause)
            for x in (r, base_runs[-1]):
                if x["error"]:
                    print(f"  rate {rate:g} rep {rep}: error {x['error']}", flush=True)
        results["single"].append({"rate": rate, "ws": ws_runs, "baseline": base_runs})
        print(row(rate, ws_runs, base_runs), flush=True)
        ws_audio = statistics.median(r["audio_s"] for r in ws_runs)
        post_audio = statistics.median(r["audio_s"] for r in base_runs)
        if ws_audio < 0.7 * post_audio:
            print(f"  warning: the WebSocket replies have {ws_audio:.1f} s of audio (median), the POSTed "
                  f"ones {post_audio:.1f} s: audio is missing", flush=True)
    if args.concurrent > 1:
        for rep in range(args.reps_concurrent):
            texts = [reply(next(counter)) for _ in range(args.concurrent)]
            runs = await concurrent_run(server, texts, 30.0, args.voice, args.timeout)
            results["concurrent"].append(runs)
            print(f"  concurrent rep {rep}: " + ", ".join(
                f"{r['context']} {ms(r['ttfa_first_token'])}/{ms(r['ttfa_clause_end'])} ms "
                f"{r['stalls']} stalls" + (f" ERROR {r['error']}" if r["error"] else "") for r in runs),
                flush=True)
            await asyncio.sleep(args.pause)
    return results


def report(args, results):
    print("\nsingle context (stream-input, pcm_24000) against the whole reply POSTed at the end "
          "(/v1/audio/speech, pcm):")
    print(HEAD)
    print(SUB)
    for res in results["single"]:
        print(row(res["rate"], res["ws"], res["baseline"]))
    clause_ok = all(r["ttfa_clause_end"] is not None and r["ttfa_clause_end"] <= 0.300
                    for res in results["single"] for r in res["ws"])
    worst = max((r["ttfa_clause_end"] or float("inf") for res in results["single"] for r in res["ws"]),
                default=None)
    print(f"target TTFA from the end of the first clause <= 300 ms (every run): "
          f"{'met' if clause_ok else 'NOT met'} (max {ms(worst)} ms)")
    no_stalls = all(r["stalls"] == 0 for res in results["single"] if res["rate"] >= 15 for r in res["ws"])
    print(f"target no stalls at >= 15 tokens/s: {'met' if no_stalls else 'NOT met'}")
    audio_short = [r for res in results["single"] for r in res["ws"] if r["error"]]
    if audio_short:
        print(f"{len(audio_short)} WebSocket runs had errors (see the JSON)")
    if results["concurrent"]:
        runs = [r for rep in results["concurrent"] for r in rep]
        print(f"\n{args.concurrent} contexts on one multi-stream-input socket, 30 tokens/s each, "
              f"{len(results['concurrent'])} reps:")
        print(f"{'context':>8} {'TTFA from 1st token':>20} {'from clause end':>16} {'stalls':>7} "
              f"{'stall ms':>9} {'audio s':>8}")
        print(f"{'':>8} {'med / max ms':>20} {'med / max ms':>16} {'max':>7} {'max':>9} {'med':>8}")
        for c in sorted({r["context"] for r in runs}):
            rs = [r for r in runs if r["context"] == c]
            print(f"{c:>8} {mm(r['ttfa_first_token'] for r in rs):>20} {mm(r['ttfa_clause_end'] for r in rs):>16} "
                  f"{max(r['stalls'] for r in rs):>7} {ms(max(r['stall_s'] for r in rs)):>9} "
                  f"{statistics.median(r['audio_s'] for r in rs):>8.2f}")
        print(f"{'all':>8} {mm(r['ttfa_first_token'] for r in runs):>20} {mm(r['ttfa_clause_end'] for r in runs):>16} "
              f"{max(r['stalls'] for r in runs):>7} {ms(max(r['stall_s'] for r in runs)):>9} "
              f"{statistics.median(r['audio_s'] for r in runs):>8.2f}")
        errs = [r for r in runs if r["error"]]
        if errs:
            print(f"{len(errs)} contexts had errors, e.g. {errs[0]['error']}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--banter", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "banter"))
    ap.add_argument("--url", help="a running server (http://HOST:PORT) instead of starting one")
    ap.add_argument("--token", help="its token (with --url)")
    ap.add_argument("--rates", default="15,30,60", help="tokens per second")
    ap.add_argument("--reps", type=int, default=5, help="runs per rate (each WebSocket + baseline)")
    ap.add_argument("--concurrent", type=int, default=4, help="contexts on one socket (0: skip)")
    ap.add_argument("--reps-concurrent", type=int, default=3)
    ap.add_argument("--voice", default="af_heart")
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between runs")
    ap.add_argument("--timeout", type=float, default=120.0, help="per run, seconds")
    ap.add_argument("--out", default="stream-input-results.json")
    args = ap.parse_args()
    args.rates = [float(r) for r in args.rates.split(",")]
    if args.url and not args.token:
        ap.error("--url needs --token")
    server = Server(args)
    try:
        print(f"server http://{server.host}:{server.port}; reply e.g. {reply(0)!r} "
              f"({len(llm_tokens(reply(0)))} tokens)", flush=True)
        print(HEAD)
        print(SUB, flush=True)
        results = asyncio.run(bench(args, server))
    finally:
        server.stop()
    report(args, results)
    with open(args.out, "w") as f:
        json.dump({"args": vars(args), "results": results}, f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
