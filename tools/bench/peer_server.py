#!/usr/bin/env python3
"""The peer for `tools/bench/load.py`: kokoro-onnx 0.6.1 on onnxruntime (CPU) behind a minimal
HTTP server that streams whole sentences.

    python3 tools/bench/peer_server.py [--port 0] [--model-dir DIR] [--threads 2]

Prints `http://127.0.0.1:PORT` on its first line of output, then serves
`POST /v1/audio/speech` with an OpenAI-like body (`input`, `voice`, `speed`; the answer is always
raw 24 kHz s16le, i.e. `response_format=pcm`) and `GET /health`.

What a minimal streaming server over kokoro-onnx does, and no more: one model, one lock; the
input is split into sentences, and each sentence is rendered whole (`Kokoro.create`, which also
phonemizes) and sent as one chunk as soon as it is ready. The lock is taken per sentence and
handed out first come, first served (a ticket queue: Python's own Lock is not fair), so
concurrent requests take turns sentence by sentence in arrival order. Same model file
(kokoro-v1.0.int8.onnx) and voice tables as Banter's store, same thread count as the machine has
cores, like `kokoro_onnx_peer.py`.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime as rt
from kokoro_onnx import Kokoro

SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


class FifoLock:
    """A lock granted in the order it was asked for."""

    def __init__(self):
        self._cond = threading.Condition()
        self._next_ticket = 0
        self._serving = 0

    def __enter__(self):
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            while ticket != self._serving:
                self._cond.wait()

    def __exit__(self, *exc):
        with self._cond:
            self._serving += 1
            self._cond.notify_all()


def load_kokoro(model_dir, threads):
    opts = rt.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = rt.InferenceSession(os.path.join(model_dir, "kokoro-v1.0.int8.onnx"), opts,
                               providers=["CPUExecutionProvider"])
    voices_dir = os.path.join(model_dir, "voices")
    tables = {}
    for name in sorted(os.listdir(voices_dir)):
        if name.endswith(".bin"):
            table = np.fromfile(os.path.join(voices_dir, name), dtype=np.float32)
            tables[name[:-4]] = table.reshape(-1, 1, 256)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "voices.npz")
        np.savez(path, **tables)
        return Kokoro.from_session(sess, path), set(tables)


OPENAI_VOICES = {"alloy": "af_alloy", "echo": "am_echo", "fable": "bm_fable", "nova": "af_nova",
                 "onyx": "am_onyx", "shimmer": "af_bella", "coral": "af_heart", "sage": "af_sarah"}


def make_handler(kokoro, voices, lock):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _json(self, status, obj):
            body = json.dumps(obj).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            if self.path == "/health":
                self._json(200, {"status": "ok", "peer": "kokoro-onnx"})
            else:
                self._json(404, {"error": {"message": "not found"}})

        def do_POST(self):
            if self.path != "/v1/audio/speech":
                self._json(404, {"error": {"message": "not found"}})
                return
            try:
                length = int(self.headers.get("Content-Length", "0"))
                req = json.loads(self.rfile.read(length))
                text = str(req["input"])
                voice = OPENAI_VOICES.get(req.get("voice", "af_heart"), req.get("voice", "af_heart"))
                speed = float(req.get("speed", 1.0))
                if voice not in voices:
                    raise ValueError(f"unknown voice {voice}")
            except (ValueError, KeyError, TypeError) as e:
                self._json(400, {"error": {"message": str(e)}})
                return
            lang = "en-gb" if voice.startswith("b") else "en-us"
            sentences = [s for s in SENTENCE_END.split(text.strip()) if s.strip()]
            self.send_response(200)
            self.send_header("Content-Type", "audio/pcm")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                for sentence in sentences:
                    with lock:
                        audio, _ = kokoro.create(sentence, voice=voice, speed=speed, lang=lang)
                    pcm = (np.clip(audio, -1.0, 1.0) * 32767.0).round().astype("<i2").tobytes()
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(pcm), pcm))
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the client left; stop rendering its sentences

    return Handler


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--model-dir", default=os.environ.get(
        "BANTER_MODEL_DIR", os.path.expanduser("~/.local/share/banter/models")))
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    kokoro, voices = load_kokoro(a.model_dir, a.threads)
    kokoro.create("Warm up.", voice="af_heart", speed=1.0, lang="en-us")
    server = ThreadingHTTPServer(("127.0.0.1", a.port), make_handler(kokoro, voices, FifoLock()))
    server.daemon_threads = True
    print(f"http://127.0.0.1:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
