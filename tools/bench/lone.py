#!/usr/bin/env python3
"""TTFA of lone requests: one `banter serve`, two warm-up requests, then ten requests one at a
time (0.3 s apart) through the load generator's own client; prints each TTFA and the median,
and the server's TTFA and step metrics.

    python3 tools/bench/lone.py [path/to/banter] [--whole-segments] [--device cpu|cuda|cuda:N]
                                [--engine triton://HOST:PORT]
                                (BANTER_PRECISION=f32|bf16|fma|int8|amx)

`--whole-segments` serves every segment in one exact pass (`banter serve --whole-segments`): the
lone first audio of the exact, non-windowed first segment; without it, the streamed first window.
"""
import http.client
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import load  # noqa: E402

ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def main():
    argv = sys.argv[1:]
    extra = []
    for flag in ("--device", "--engine"):  # passed on to `banter serve`
        if flag in argv:
            i = argv.index(flag)
            extra += argv[i:i + 2]
            del argv[i:i + 2]
    extra += [a for a in argv if a == "--whole-segments"]
    args = [a for a in argv if a != "--whole-segments"]
    banter = args[0] if args else os.path.join(ROOT, "target", "release", "banter")
    config = tempfile.mkdtemp()
    target = load.start_target("banter", banter, config, extra)
    try:
        for text in load.TEXTS[:2]:
            load.one_request(target, text, 60)
        ttfa = []
        for i in range(10):
            sent, chunks, _err = load.one_request(target, load.TEXTS[i % 5], 60)
            ttfa.append(chunks[0][0] - sent)
            time.sleep(0.3)
        ttfa.sort()
        print("lone TTFA ms:", " ".join(f"{x * 1000:.0f}" for x in ttfa),
              " median", f"{ttfa[len(ttfa) // 2] * 1000:.0f}")
        conn = http.client.HTTPConnection(target.host, target.port)
        conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {target.token}",
                                                 "Host": f"127.0.0.1:{target.port}"})
        for line in conn.getresponse().read().decode().splitlines():
            if ("ttfa" in line or "step_seconds" in line) and ("_sum" in line or "_count" in line):
                print(line)
    finally:
        target.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
