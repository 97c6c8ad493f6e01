#!/usr/bin/env python3
"""Open-loop load generator for Banter's speech API and its baselines (streaming.md figures).

    python3 tools/bench/load.py [--targets banter,naive,peer] [--rates 0.1,0.2,...]
                                [--secs 40] [--max-requests 40] [--out results.json]

Starts the targets itself and runs them side by side in one run (at each rate, each target in
turn, so background load on a shared machine hits them alike):
  banter  `banter serve` (the engine's scheduler: pressing streams first)
  naive   `banter serve --naive` (same engine, FIFO: one request at a time, whole segments)
  peer    `tools/bench/peer_server.py` (kokoro-onnx 0.6.1 on onnxruntime, whole sentences)
It climbs the rate ladder: Poisson arrivals at RATE requests/s for `--secs` seconds
(at most `--max-requests`), each a two-sentence input (~5 s of audio, a few different texts)
with `response_format=pcm`; every chunk's arrival time and byte count is recorded (read with
`read1`, i.e. as the socket delivers it). It stops climbing a target two rungs after capacity
is lost. Python standard library only.

Figures per rate, as defined in shared/docs/streaming.md:
  TTFA p50/p90/p99/max  first chunk with audio bytes - the moment the request was sent
  viability             mean over requests of the share of chunks i >= 2 that arrived before
                        the audio of chunks 1..i-1 had played out (playback from chunk 1)
  strict                mean over requests of 1 if every chunk was on time, else 0
  xRT                   audio seconds received / wall seconds from first send to last byte
  RSS                   the server's VmHWM (peak resident set so far) after the rate
A failed request (HTTP error, 429, broken stream, timeout) scores 0 viability, 0 strict and an
infinite TTFA. Capacity: the highest rate on the ladder with strict >= 99 % and TTFA p99 <= 1 s.
"""
import argparse
import http.client
import json
import math
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BYTES_PER_SEC = 24_000 * 2

TEXTS = [
    "The quick brown fox jumps over the lazy dog. Then it runs back into the forest to find its friends.",
    "Our train leaves the station at half past nine. Please bring your ticket and a warm coat.",
    "She opened the window and listened to the rain. It had not stopped for three whole days.",
    "The museum will be closed for repairs next week. Visitors can still walk through the garden.",
    "He poured a cup of coffee and sat down to read. The letter was shorter than he expected.",
]


def percentile(values, p):
    if not values:
        return math.inf
    s = sorted(values)
    k = (len(s) - 1) * p / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    if math.isinf(s[hi]) or math.isinf(s[lo]):
        return s[hi]
    return s[lo] + (s[hi] - s[lo]) * (k - lo)


class Target:
    """A server this script started: its URL, token and process."""

    def __init__(self, name, argv, env=None, token=None):
        self.name = name
        self.token = token
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            raise RuntimeError(f"{name}: no URL on the first line (got {line!r})")
        host, port = line[len("http://"):].rsplit(":", 1)
        self.host, self.port = host, int(port)
        # keep draining stdout so the server never blocks on it
        threading.Thread(target=lambda: self.proc.stdout.read(), daemon=True).start()

    def hwm_mb(self):
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024.0
        except OSError:
            pass
        return float("nan")

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def start_target(name, banter, config_dir, extra=(), max_queue=256):
    if name == "peer":
        return Target(name, [sys.executable, os.path.join(HERE, "peer_server.py"), "--port", "0"])
    env = dict(os.environ, BANTER_CONFIG_DIR=config_dir, RUST_LOG="warn")
    token = subprocess.run([banter, "serve", "--show-token"], env=env, check=True,
                           capture_output=True, text=True).stdout.strip()
    argv = [banter, "serve", "--port", "0", "--max-queue", str(max_queue), "--idle-timeout", "120"]
    if name == "naive":
        argv.append("--naive")
    argv.extend(extra)
    return Target(name, argv, env=env, token=token)


def one_request(target, text, timeout):
    """Sends one speech request; returns (send time, [(arrival, bytes)], error or None)."""
    body = json.dumps({"model": "kokoro", "voice": "af_heart", "input": text,
                       "response_format": "pcm"})
    headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{target.port}"}
    if target.token:
        headers["Authorization"] = f"Bearer {target.token}"
    chunks = []
    conn = http.client.HTTPConnection(target.host, target.port, timeout=timeout)
    sent = time.perf_counter()
    try:
        conn.request("POST", "/v1/audio/speech", body=body, headers=headers)
        resp = conn.getresponse()
        if resp.status != 200:
            resp.read()
            return sent, chunks, f"HTTP {resp.status}"
        while True:
            data = resp.read1(1 << 20)
            if not data:
                break
            chunks.append((time.perf_counter(), len(data)))
        return sent, chunks, None
    except (OSError, http.client.HTTPException) as e:
        return sent, chunks, f"{type(e).__name__}: {e}"
    finally:
        conn.close()


def score(sent, chunks, error):
    """Per-request figures: TTFA, viability, strict, audio seconds."""
    audio = sum(n for _, n in chunks) / BYTES_PER_SEC
    if error or not chunks:
        return {"ttfa": math.inf, "viability": 0.0, "strict": 0.0, "audio": audio,
                "error": error or "no audio"}
    first = chunks[0][0]
    played = 0.0
    on_time = 0
    for i, (t, n) in enumerate(chunks):
        if i > 0 and played > t - first:
            on_time += 1
        played += n / BYTES_PER_SEC
    later = len(chunks) - 1
    viability = on_time / later if later else 1.0
    return {"ttfa": first - sent, "viability": viability,
            "strict": 1.0 if on_time == later else 0.0, "audio": audio, "error": None}


def run_rate(target, rate, secs, max_requests, timeout, rng):
    """Open-loop Poisson arrivals at `rate` for `secs` (at most `max_requests`)."""
    results = []
    lock = threading.Lock()
    threads = []

    def worker(text):
        r = one_request(target, text, timeout)
        with lock:
            results.append(r)

    start = time.perf_counter()
    next_at = start + rng.expovariate(rate)
    n = 0
    while n < max_requests and next_at - start < secs:
        delay = next_at - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        t = threading.Thread(target=worker, args=(TEXTS[n % len(TEXTS)],), daemon=True)
        t.start()
        threads.append(t)
        n += 1
        next_at += rng.expovariate(rate)
    for t in threads:
        t.join(timeout + 5)
    scores = [score(*r) for r in results]
    scores += [{"ttfa": math.inf, "viability": 0.0, "strict": 0.0, "audio": 0.0,
                "error": "no answer"}] * (n - len(results))
    last = max((c[-1][0] for _, c, _ in results if c), default=time.perf_counter())
    first_send = min((s for s, _, _ in results), default=start)
    ttfas = [s["ttfa"] for s in scores]
    # Streams live at once: a request counts from its send to its last byte.
    edges = sorted([(s, 1) for s, c, _ in results] +
                   [(c[-1][0] if c else s, -1) for s, c, _ in results], key=lambda e: (e[0], e[1]))
    live = peak_live = 0
    for _, d in edges:
        live += d
        peak_live = max(peak_live, live)
    errors = [s["error"] for s in scores if s["error"]]
    return {
        "rate": rate,
        "requests": n,
        "peak_live": peak_live,
        "errors": len(errors),
        "error_examples": sorted(set(errors))[:3],
        "ttfa_p50": percentile(ttfas, 50),
        "ttfa_p90": percentile(ttfas, 90),
        "ttfa_p99": percentile(ttfas, 99),
        "ttfa_max": max(ttfas) if ttfas else math.inf,
        "viability": sum(s["viability"] for s in scores) / max(n, 1),
        "strict": sum(s["strict"] for s in scores) / max(n, 1),
        "audio_secs": sum(s["audio"] for s in scores),
        "xrt": sum(s["audio"] for s in scores) / max(last - first_send, 1e-9),
        "peak_rss_mb": target.hwm_mb(),
        "requests_detail": [
            {"sent": s, "chunks": [(t - s, b) for t, b in c], "error": e} for s, c, e in results
        ],
    }


TTFA_LIMIT = [1.0]  # seconds; --ttfa-limit changes it


def passes(row, limit=None):
    limit = TTFA_LIMIT[0] if limit is None else limit
    return row["strict"] >= 0.99 and row["ttfa_p99"] <= limit and row["errors"] == 0


def bench(names, args):
    """All targets run at once (idle ones cost nothing) and take turns at each rate, so a
    change in the machine's background load hits them alike."""
    configs = [tempfile.TemporaryDirectory(prefix="banter-load-") for _ in names]
    targets = {}
    try:
        for name, config in zip(names, configs):
            targets[name] = start_target(name, args.banter, config.name, args.serve_args.split(),
                                         args.max_queue)
        for target in targets.values():
            for _ in range(2):  # warm-up: voice tables, allocator, first-call costs
                one_request(target, TEXTS[0], args.timeout)
        rows = {name: [] for name in names}
        failures = {name: 0 for name in names}
        for rate in args.rates:
            for name, target in targets.items():
                if failures[name] >= args.past:
                    continue
                rng = random.Random(args.seed * 1000 + int(rate * 100))
                row = run_rate(target, rate, args.secs, args.max_requests, args.timeout, rng)
                rows[name].append(row)
                print(fmt_row(name, row), flush=True)
                failures[name] = 0 if passes(row) else failures[name] + 1
                time.sleep(args.pause)
            if all(f >= args.past for f in failures.values()):
                break
    finally:
        for target in targets.values():
            target.stop()
        for config in configs:
            config.cleanup()
    return [{"target": name,
             "rows": rows[name],
             "capacity": capacity(rows[name], passes)}
            for name in names]


def capacity(rows, passes):
    """The highest rate at which the criterion *stays* met: every rate up to it passes. A
    lucky pass above a failing rate (fewer arrivals by chance) does not count."""
    best = 0.0
    for row in sorted(rows, key=lambda r: r["rate"]):
        if not passes(row):
            break
        best = row["rate"]
    return best


def ms(x):
    return "inf" if math.isinf(x) else f"{x * 1000:.0f}"


HEADER = (f"{'target':<7} {'rate/s':>6} {'n':>3} {'live':>4} {'err':>3} {'p50 ms':>7} {'p90 ms':>7} "
          f"{'p99 ms':>7} {'max ms':>7} {'viab%':>6} {'strict%':>7} {'xRT':>5} {'RSS MB':>7}")


def fmt_row(name, r):
    return (f"{name:<7} {r['rate']:>6.2f} {r['requests']:>3} {r.get('peak_live', 0):>4} {r['errors']:>3} "
            f"{ms(r['ttfa_p50']):>7} {ms(r['ttfa_p90']):>7} {ms(r['ttfa_p99']):>7} "
            f"{ms(r['ttfa_max']):>7} {r['viability'] * 100:>6.1f} {r['strict'] * 100:>7.1f} "
            f"{r['xrt']:>5.2f} {r['peak_rss_mb']:>7.0f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--banter", default=os.path.join(
        os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "banter"))
    ap.add_argument("--targets", default="banter,naive,peer")
    ap.add_argument("--rates", default="0.1,0.2,0.3,0.4,0.5,0.6,0.8,1.0,1.25,1.5,2.0")
    ap.add_argument("--secs", type=float, default=40.0, help="arrivals per rate, seconds")
    ap.add_argument("--max-requests", type=int, default=40)
    ap.add_argument("--timeout", type=float, default=120.0, help="per request, seconds")
    ap.add_argument("--past", type=int, default=2, help="failing rates before a target stops")
    ap.add_argument("--pause", type=float, default=2.0, help="seconds between rates")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--ttfa-limit", type=float, default=1.0,
                    help="TTFA p99 bound of the capacity criterion (streaming.md: 1 s); a looser "
                         "one explores a slow or busy machine; both are reported")
    ap.add_argument("--max-queue", type=int, default=256,
                    help="`banter serve --max-queue`: speech jobs accepted at once (more get 429)")
    ap.add_argument("--out", default="load-results.json")
    ap.add_argument("--serve-args", default="",
                    help="extra arguments for `banter serve` (both banter targets), e.g. '--device cuda'")
    args = ap.parse_args()
    TTFA_LIMIT[0] = args.ttfa_limit
    args.rates = [float(r) for r in args.rates.split(",")]
    print(HEADER, flush=True)
    results = bench([n.strip() for n in args.targets.split(",")], args)
    print("\n" + HEADER)
    for res in results:
        for row in res["rows"]:
            print(fmt_row(res["target"], row))
    print()
    caps = {r["target"]: r["capacity"] for r in results}
    for res in results:
        strict = capacity(res["rows"], lambda r: passes(r, 1.0))
        res["capacity_1s"] = strict
        print(f"capacity {res['target']}: {res['capacity']:.2f} requests/s "
              f"(TTFA p99 <= {args.ttfa_limit:g} s); {strict:.2f} with the 1 s bound")
    if caps.get("banter"):
        for other in ("naive", "peer"):
            if caps.get(other):
                print(f"banter / {other}: {caps['banter'] / caps[other]:.2f}x")
            elif other in caps:
                print(f"banter / {other}: {other} has no passing rate")
        half = caps["banter"] / 2
        rows = [r for r in next(x for x in results if x["target"] == "banter")["rows"]]
        near = min(rows, key=lambda r: abs(r["rate"] - half))
        print(f"banter TTFA p50 near half capacity ({near['rate']:.2f}/s): {ms(near['ttfa_p50'])} ms")
    with open(args.out, "w") as f:
        json.dump({"args": {k: v for k, v in vars(args).items()}, "texts": TEXTS,
                   "results": results}, f, indent=1, default=str)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
