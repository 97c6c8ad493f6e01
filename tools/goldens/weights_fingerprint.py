#!/usr/bin/env python3
"""Write the golden fingerprint of the converted Kokoro-82M v1.0 f32 weights.

The Rust converter (kokoro::onnx::convert_kokoro) must reproduce, from
kokoro-v1.0.int8.onnx, exactly the tensors that the Python reference mapper
(docs tools/kokoro-ref/kokoro_map.py) produces. CI has no Python reference, so
this script condenses the reference into a small JSON that the e2e test
tests/tests/e2e/convert.rs checks the Rust output against:

  for each of the 457 port tensors (weight-norm pairs folded into `.weight`):
    shape, sum, sum of squares and sum of |x| (float64), and the values at 8 fixed
    flat indices (0, the last, and 6 spread pseudo-randomly), stored with the index.

Run (needs numpy; reads the npz written by `kokoro_map.py --npz`, or the
safetensors file made from it):

  python3 tools/goldens/weights_fingerprint.py \
      --npz /tmp/assets/weights_ref.npz \
      --out tests/fixtures/goldens/weights_fingerprint.json

  python3 tools/goldens/weights_fingerprint.py \
      --safetensors /tmp/assets/kokoro-ref.safetensors --out ...
"""
import argparse
import json
import sys

import numpy as np

MODEL = "kokoro-v1.0.int8.onnx"
MODEL_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
N_SAMPLES = 8


def sample_indices(n):
    """0, n-1 and 6 indices spread by a fixed multiplicative hash, sorted, unique."""
    idx = {0, n - 1}
    for k in range(1, N_SAMPLES - 1):
        idx.add((k * 2654435761 + 40503) % n)
    return sorted(idx)


def load(args):
    if args.safetensors:
        from safetensors.numpy import load_file

        return load_file(args.safetensors)
    z = np.load(args.npz)
    # the npz also has the torch-compatible weight_g/weight_v split; the port loads the
    # folded `.weight` instead
    return {k: z[k] for k in z.files if not k.endswith((".weight_g", ".weight_v"))}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--npz", default="/tmp/assets/weights_ref.npz")
    src.add_argument("--safetensors")
    ap.add_argument("--out", default="tests/fixtures/goldens/weights_fingerprint.json")
    args = ap.parse_args()

    tensors = load(args)
    entries = {}
    total = 0
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        flat = a.reshape(-1)
        d = flat.astype(np.float64)
        total += flat.size
        entries[name] = {
            "shape": list(a.shape),
            "sum": float(d.sum()),
            "sum_sq": float((d * d).sum()),
            "abs_sum": float(np.abs(d).sum()),
            "samples": [[i, float(flat[i])] for i in sample_indices(flat.size)],
        }
    if len(entries) != 457 or total != 81_140_664:
        sys.exit(f"expected 457 tensors / 81140664 values, got {len(entries)} / {total}")
    doc = {
        "about": "fingerprint of the f32 Kokoro-82M weights converted from the int8 ONNX; "
                 "made by tools/goldens/weights_fingerprint.py from kokoro_map.py output",
        "model": MODEL,
        "model_sha256": MODEL_SHA256,
        "tensors": len(entries),
        "values": total,
        "entries": entries,
    }
    # one line per tensor: small to diff, small to commit
    head = {k: v for k, v in doc.items() if k != "entries"}
    lines = [json.dumps(head)[:-1] + ', "entries": {']
    lines += [f" {json.dumps(k)}: {json.dumps(v)}," for k, v in entries.items()]
    lines[-1] = lines[-1].rstrip(",")
    lines.append("}}")
    with open(args.out, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.out}: {len(entries)} tensors, {total} values")


if __name__ == "__main__":
    main()
