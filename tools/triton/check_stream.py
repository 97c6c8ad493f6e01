#!/usr/bin/env python3
"""Drives model `banter` on a running tritonserver over gRPC streaming and checks what the
backend (triton/backend, libtriton_banter.so) promises.

    python tools/triton/check_stream.py --grpc localhost:8001 --http localhost:8000 \
        --metrics localhost:8002 --voices ~/.local/share/banter/models/voices \
        [--banter target/debug/banter]

Needs `tritonclient[grpc]` and numpy (tools/triton/README.md). Checks, printing each stream:
  1. PHONEMES + VOICE, WHOLE false: several chunks, durations on each segment's first chunk only,
     SEGMENT_END on each segment's last, then an empty final response.
  2. Malformed requests (SPEED as INT32, an unknown input, no VOICE, an empty PHONEMES element,
     an unknown voice) each get one error naming the field while a good stream on another
     connection completes.
  3. STYLE (af_heart's table) renders exactly what VOICE af_heart renders (WHOLE true), and at
     SAMPLE_RATE 16000 each segment is round(n * 16000 / 24000) samples.
  4. With --banter: TEXT, WHOLE true equals `banter say --format f32` of the same text bit for
     bit.
  5. /v2/health/ready is 200 and /metrics counts nv_inference_request_success for banter.
Exits 1 on the first failed check.
"""

import argparse
import os
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient

MODEL = "banter"
PHONEMES = ["həlˈoʊ.", "ðɪs ɪz ə tˈɛst ʌv ðə stɹˈiːmɪŋ bˈækˌɛnd, wɪð ə lˈɔŋɚ sˈɛntəns."]
TEXT = "Hello from Triton. This is the second sentence."


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def tensor(name, array, datatype):
    t = grpcclient.InferInput(name, list(array.shape), datatype)
    t.set_data_from_numpy(array)
    return t


def strings(name, values):
    return tensor(name, np.array([v.encode() for v in values], dtype=np.object_), "BYTES")


def stream(url, inputs, request_id="1", timeout=600):
    """One request on its own stream: a list of chunk dicts, or the error text."""
    done = queue.Queue()
    chunks = []

    def callback(result, error):
        if error is not None:
            done.put(str(error))
            return
        response = result.get_response()
        final = response.parameters.get("triton_final_response")
        if result.as_numpy("AUDIO") is not None:
            chunks.append(
                {
                    "audio": result.as_numpy("AUDIO"),
                    "segment": int(result.as_numpy("SEGMENT")[0]),
                    "end": bool(result.as_numpy("SEGMENT_END")[0]),
                    "durations": result.as_numpy("DURATIONS"),
                }
            )
        if final is not None and final.bool_param:
            done.put(None)

    client = grpcclient.InferenceServerClient(url)
    client.start_stream(callback=callback)
    client.async_stream_infer(
        MODEL, inputs, request_id=request_id, enable_empty_final_response=True
    )
    try:
        error = done.get(timeout=timeout)
    finally:
        client.stop_stream()
        client.close()
    return error if error is not None else chunks


def show(label, chunks):
    print(f"{label}: {len(chunks)} chunks")
    for c in chunks:
        d = c["durations"]
        print(
            f"  segment {c['segment']} samples {len(c['audio']):6d} end {c['end']!s:5} "
            f"durations {len(d) if d is not None else 0}"
        )


def check_chunks(label, chunks, segments):
    if isinstance(chunks, str):
        fail(f"{label}: error {chunks}")
    show(label, chunks)
    seen = set()
    for c in chunks:
        first = c["segment"] not in seen
        seen.add(c["segment"])
        has = c["durations"] is not None and len(c["durations"]) > 0
        if has != first:
            fail(f"{label}: segment {c['segment']} durations on a chunk that is {'' if first else 'not '}its first")
    if seen != set(range(segments)):
        fail(f"{label}: segments {sorted(seen)}, expected 0..{segments}")
    ends = [c["segment"] for c in chunks if c["end"]]
    if ends != list(range(segments)):
        fail(f"{label}: SEGMENT_END on segments {ends}")


def audio(chunks):
    return np.concatenate([c["audio"] for c in chunks]).astype(np.float32)


def by_segment(chunks):
    out = {}
    for c in chunks:
        out.setdefault(c["segment"], []).append(c["audio"])
    return {k: np.concatenate(v) for k, v in out.items()}


def voice_inputs(phonemes, whole=False, rate=None):
    inputs = [strings("PHONEMES", phonemes), strings("VOICE", ["af_heart"])]
    inputs.append(tensor("WHOLE", np.array([whole], dtype=bool), "BOOL"))
    if rate:
        inputs.append(tensor("SAMPLE_RATE", np.array([rate], dtype=np.int32), "INT32"))
    return inputs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--grpc", default="localhost:8001")
    ap.add_argument("--http", default="localhost:8000")
    ap.add_argument("--metrics", default="localhost:8002")
    ap.add_argument("--voices", default=os.path.expanduser("~/.local/share/banter/models/voices"))
    ap.add_argument("--banter", help="a banter binary, to compare a local render")
    args = ap.parse_args()

    # 1. windowed stream
    chunks = stream(args.grpc, voice_inputs(PHONEMES))
    check_chunks("windowed (WHOLE false)", chunks, len(PHONEMES))
    if len(chunks) <= len(PHONEMES):
        fail("WHOLE false should give several chunks per segment")
    windowed = chunks

    # 2. malformed requests beside a good stream
    good = {}
    t = threading.Thread(target=lambda: good.update(r=stream(args.grpc, voice_inputs(PHONEMES))))
    t.start()
    bad = {
        "SPEED": voice_inputs(PHONEMES) + [tensor("SPEED", np.array([1], dtype=np.int32), "INT32")],
        "PITCH": voice_inputs(PHONEMES) + [tensor("PITCH", np.array([1.0], dtype=np.float32), "FP32")],
        "VOICE": [strings("PHONEMES", PHONEMES)],
        "PHONEMES": [strings("PHONEMES", ["həlˈoʊ", "\U0001F600"]), strings("VOICE", ["af_heart"])],
        "VOICE ": [strings("PHONEMES", PHONEMES), strings("VOICE", ["zz_nobody"])],
    }
    for field, inputs in bad.items():
        error = stream(args.grpc, inputs, timeout=60)
        print(f"malformed {field.strip()}: {error}")
        if not isinstance(error, str) or field.strip() not in error:
            fail(f"the error for a bad {field.strip()} does not name it: {error!r}")
    t.join()
    check_chunks("good stream beside them", good["r"], len(PHONEMES))

    # 3. STYLE equals the named voice, whole; and resampling keeps each segment's length
    heart = np.fromfile(os.path.join(args.voices, "af_heart.bin"), dtype="<f4").reshape(510, 256)
    named = stream(args.grpc, voice_inputs(PHONEMES, whole=True))
    check_chunks("VOICE af_heart, WHOLE true", named, len(PHONEMES))
    styled_inputs = [
        strings("PHONEMES", PHONEMES),
        tensor("STYLE", heart, "FP32"),
        tensor("WHOLE", np.array([True]), "BOOL"),
    ]
    styled = stream(args.grpc, styled_inputs)
    check_chunks("STYLE af_heart, WHOLE true", styled, len(PHONEMES))
    if not np.array_equal(audio(named), audio(styled)):
        fail("STYLE af_heart differs from VOICE af_heart")
    print(f"STYLE == VOICE af_heart: {len(audio(named))} samples, bit for bit")
    whole_segments = by_segment(named)
    windowed_segments = by_segment(windowed)
    for k, v in whole_segments.items():
        if len(windowed_segments[k]) != len(v):
            fail(f"segment {k}: windowed {len(windowed_segments[k])} samples, whole {len(v)}")
    slow = stream(args.grpc, voice_inputs(PHONEMES, whole=True, rate=16000))
    check_chunks("SAMPLE_RATE 16000", slow, len(PHONEMES))
    for k, v in by_segment(slow).items():
        want = (len(whole_segments[k]) * 16000 + 12000) // 24000
        if len(v) != want:
            fail(f"16 kHz segment {k}: {len(v)} samples, expected {want}")
    print("SAMPLE_RATE 16000: every segment round(n * 2/3) samples")

    # 4. a local render of the same text
    if args.banter:
        inputs = [strings("TEXT", [TEXT]), strings("VOICE", ["af_heart"]),
                  tensor("WHOLE", np.array([True]), "BOOL")]
        remote = stream(args.grpc, inputs)
        if isinstance(remote, str):
            fail(f"TEXT: {remote}")
        with tempfile.TemporaryDirectory() as d:
            wav = os.path.join(d, "say.wav")
            subprocess.run(
                [args.banter, "say", "--format", "f32", "--device", "cpu", "-o", wav, TEXT],
                check=True,
            )
            local = read_f32_wav(wav)
        if not np.array_equal(audio(remote), local):
            diff = np.max(np.abs(audio(remote)[: len(local)] - local[: len(audio(remote))]))
            fail(f"TEXT: Triton {len(audio(remote))} samples, banter say {len(local)}, max diff {diff}")
        print(f"TEXT WHOLE true == banter say: {len(local)} samples, bit for bit")

    # 5. health and metrics
    ready = urllib.request.urlopen(f"http://{args.http}/v2/health/ready").status
    print(f"/v2/health/ready: {ready}")
    metrics = urllib.request.urlopen(f"http://{args.metrics}/metrics").read().decode()
    lines = [l for l in metrics.splitlines() if l.startswith("nv_inference_request_")
             and 'model="banter"' in l]
    print("\n".join(lines))
    success = [l for l in lines if l.startswith("nv_inference_request_success")]
    if not success or float(success[0].split()[-1]) < 6:
        fail("nv_inference_request_success does not count the streams")
    print("all checks passed")


def read_f32_wav(path):
    data = open(path, "rb").read()
    pos = 12
    while pos + 8 <= len(data):
        kind, size = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        if kind == b"data":
            return np.frombuffer(data[pos + 8:pos + 8 + size], dtype="<f4")
        pos += 8 + size + (size & 1)
    fail(f"{path}: no data chunk")


if __name__ == "__main__":
    main()
