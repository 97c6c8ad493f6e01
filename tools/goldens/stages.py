#!/usr/bin/env python3
"""Regenerate the stage goldens of the Kokoro port from the all-f32 oracle graph.

The oracle is the int8 ONNX rewritten to f32 activations by
`shared/tools/kokoro-ref/kokoro_float_onnx.py` (same dequantised weights as our safetensors), so
a correct f32 port must match it stage by stage (see shared/docs/kokoro-port.md §4-§5).

    python3 tools/goldens/stages.py [--model-dir DIR] [--out tests/fixtures/goldens/stages]

Needs: onnx, onnxruntime, numpy, safetensors, kokoro-onnx (for the reference phonemes), and the
fetched model store (DIR defaults to $BANTER_MODEL_DIR or ~/.local/share/banter/models).
Writes one `<voice>_<n>.safetensors` per sentence and voice. Encoder-side tensors are written for
every case; the large decoder-side tensors (har, conv_post, audio...) only for the `decoder` cases,
to keep the committed files small.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper
from safetensors.numpy import save_file

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "tools", "kokoro-ref"))

# (voice, espeak language, sentences); the first sentence of each voice also gets decoder goldens.
CASES = [
    ("af_heart", "en-us", ["Welcome back to the show.",
                           "Is it really three forty-five already? Time flies!",
                           "She said, \"I'd love to,\" and then, quietly, left."]),
    ("am_michael", "en-us", ["Hello there, friend.",
                             "Our guest today wrote four books about the sea.",
                             "Why would anyone do that? Nobody knows."]),
    ("bf_emma", "en-gb", ["Good evening, everyone.",
                          "The weather in Manchester was rather grey on Tuesday.",
                          "Honestly, I can't say I'm surprised at all!"]),
]

PROBES = {
    "bert_out": "/encoder/bert/encoder/albert_layer_groups.0/albert_layers.0/full_layer_layer_norm_11/LayerNormalization_output_0",
    "d_en": "/encoder/bert_encoder/Add_output_0",
    "dur_enc_d": "/encoder/predictor/text_encoder/Concat_4_output_0",
    "dur_logits": "/encoder/predictor/duration_proj/linear_layer/Add_output_0",
    "dur_float": "/encoder/Div_output_0",
    "pred_dur": "/encoder/Cast_output_0",
    "en": "/encoder/MatMul_output_0",
    "shared_out": "/encoder/Transpose_2_output_0",
    "F0_pred": "/encoder/Reshape_output_0",
    "N_pred": "/encoder/Reshape_1_output_0",
    "t_en": "/encoder/text_encoder/Transpose_2_output_0",
    "asr": "/encoder/MatMul_1_output_0",
    "dec_in": "/decoder/decoder/Concat_output_0",
    "dec_out": "/decoder/decoder/decode.3/Div_4_output_0",
    "har": "/decoder/decoder/generator/Concat_3_output_0",
    "conv_post": "/decoder/decoder/generator/conv_post/Conv_output_0",
}
ENCODER_KEYS = ["bert_out", "d_en", "dur_enc_d", "dur_logits", "dur_float", "pred_dur", "F0_pred", "N_pred", "t_en"]
FIRST_KEYS = ["en", "shared_out", "asr"]
DECODER_KEYS = ["asr", "dec_in", "dec_out", "har", "conv_post", "audio"]


def model_dir(arg):
    if arg:
        return arg
    if os.environ.get("BANTER_MODEL_DIR"):
        return os.environ["BANTER_MODEL_DIR"]
    base = os.environ.get("XDG_DATA_HOME", os.path.expanduser("~/.local/share"))
    return os.path.join(base, "banter", "models")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir")
    ap.add_argument("--out", default=os.path.join(HERE, "..", "..", "tests", "fixtures", "goldens", "stages"))
    a = ap.parse_args()
    md = model_dir(a.model_dir)
    os.makedirs(a.out, exist_ok=True)
    from kokoro_onnx.tokenizer import Tokenizer
    tok = Tokenizer()

    with tempfile.TemporaryDirectory() as tmp:
        f32 = os.path.join(tmp, "kokoro-f32.onnx")
        subprocess.run([sys.executable, os.path.join(REF, "kokoro_float_onnx.py"),
                        os.path.join(md, "kokoro-v1.0.int8.onnx"), f32], check=True)
        m = onnx.load(f32)
        for key, name in PROBES.items():
            t = TensorProto.INT64 if key == "pred_dur" else TensorProto.FLOAT
            m.graph.output.append(helper.make_tensor_value_info(name, t, None))
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])

    index = []
    for voice, lang, sentences in CASES:
        table = np.fromfile(os.path.join(md, "voices", voice + ".bin"), dtype=np.float32).reshape(-1, 1, 256)
        for i, text in enumerate(sentences):
            phonemes = tok.phonemize(text, lang)
            ids = tok.tokenize(phonemes)
            feeds = {"tokens": np.array([[0, *ids, 0]], dtype=np.int64), "style": table[len(ids) - 1],
                     "speed": np.array([1.0], dtype=np.float32)}
            names = ["audio"] + list(PROBES.values())
            outs = dict(zip(["audio"] + list(PROBES.keys()), sess.run(names, feeds)))
            keys = list(ENCODER_KEYS)
            if i == 0:
                keys += FIRST_KEYS + DECODER_KEYS
            res = {"tokens": feeds["tokens"], "style": feeds["style"], "speed": feeds["speed"]}
            for k in dict.fromkeys(keys):
                res[k] = outs[k]
            res = {k: np.ascontiguousarray(v) for k, v in res.items()}
            fname = f"{voice}_{i}.safetensors"
            save_file(res, os.path.join(a.out, fname))
            index.append({"file": fname, "voice": voice, "lang": lang, "text": text, "phonemes": phonemes,
                          "frames": int(outs["pred_dur"].sum()), "decoder": i == 0})
            print(fname, len(ids), "tokens", int(outs["pred_dur"].sum()), "frames")
    with open(os.path.join(a.out, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
