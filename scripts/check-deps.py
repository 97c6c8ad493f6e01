#!/usr/bin/env python3
"""Licences and duplicate dependencies of what ships, offline (`cargo metadata` from the lock file;
no registry, no advisory database). Checks, for every crate built into the `banter` binary on
Linux (normal and build dependencies of `app`, not dev-dependencies):
  - licences: its SPDX expression can be met from ALLOWED (licences a GPL-3.0-or-later program
    may include); crates that compile a bundled C library count that library's licence too
    (BUNDLED), and the program must then be GPL-3.0-or-later, as packaging/copyright says;
  - bans: no crate in two versions unless REVIEWED lists it (a new duplicate is a bigger binary
    and a longer build: pick one version, or add it here with the reason).
Banter links GPL espeak-ng and ships no weights (the Apache-2.0 model is fetched on first use):
this keeps that story true as dependencies change.

Usage: cargo metadata --format-version 1 --locked --filter-platform x86_64-unknown-linux-gnu | scripts/check-deps.py
"""
import json, re, sys

ALLOWED = {
    "MIT", "MIT-0", "Apache-2.0", "Apache-2.0 WITH LLVM-exception", "BSD-2-Clause", "BSD-3-Clause",
    "0BSD", "ISC", "Zlib", "Unicode-3.0", "Unicode-DFS-2016", "MPL-2.0", "BSL-1.0", "Unlicense",
    "CC0-1.0", "LGPL-2.0-or-later", "LGPL-2.1-or-later", "LGPL-3.0", "LGPL-3.0-or-later", "GPL-3.0-or-later",
    # the studio's bundled fonts (egui's defaults): font licences, distributable with any program
    "OFL-1.1", "Ubuntu-font-1.0",
}
# Crates whose build compiles a C library from bundled sources, and that library's licence.
BUNDLED = {
    "espeak-rs-sys": ("espeak-ng", "GPL-3.0-or-later"),
    "mp3lame-sys": ("LAME", "LGPL-2.0-or-later"),
    "audiopus_sys": ("libopus", "BSD-3-Clause"),
    "libsqlite3-sys": ("SQLite", "Unlicense"),
}
# Crates built in two versions, each because upstream crates pin different majors (none of these
# is a direct dependency of ours at the older version); `cargo tree -d -p app` shows the pairs.
REVIEWED = {
    # triton-client's build step only (protox compiles its .proto, prost-build writes the code):
    # none of these is linked into banter.
    "foldhash": "prost-build's petgraph 0.8 -> hashbrown 0.15 pins 0.1 (triton-client's build only)",
    "prettyplease": "prost-build 0.14.6 uses 0.3; bindgen (espeak-rs-sys) and tonic-build pin 0.2",
    "unicode-width": "miette 7 (protox's error reports) pins 0.1",
    "base64": "spm_precompiled (candle's tokenizers) pins 0.13; axum uses 0.22",
    "bit-set": "fancy-regex (tokenizers) pins 0.8",
    "bit-vec": "follows bit-set",
    "calloop": "winit 0.30 pins 0.13; smithay-clipboard (eframe's Wayland clipboard) 0.14",
    "calloop-wayland-source": "follows calloop",
    "smithay-client-toolkit": "winit 0.30 pins 0.19; smithay-clipboard uses 0.20",
    "bitflags": "ebur128 and bindgen's older rustix pin 1.x; the rest use 2.x",
    "getrandom": "ahash/rand 0.9 use 0.3; tempfile and zip 0.4",
    "hashbrown": "safetensors pins 0.16; indexmap 0.17",
    "itertools": "bindgen 0.12, rayon-cond 0.14, others 0.15",
    "linux-raw-sys": "follows the two rustix majors",
    "miniz_oxide": "png pins 0.8; flate2 0.9",
    "rand_core": "tokenizers' rand 0.9 against 0.10",
    "rustc-hash": "bindgen (espeak-rs-sys's build) pins 1.x",
    "rustix": "bindgen's which 4 pins 0.38; winit, tempfile 1.x",
    "shlex": "bindgen pins 1.x; cc 2.x (build tools only)",
    "syn": "proc macros between syn 2 and 3",
    "thiserror": "calloop and smithay-client-toolkit (winit's Wayland) pin 1.x",
    "thiserror-impl": "follows thiserror",
}

def tokens(expr):
    return re.findall(r"\(|\)|[A-Za-z0-9.+-]+(?: WITH [A-Za-z0-9.+-]+)?", expr.replace("/", " OR "))

def satisfiable(expr):
    """Whether the SPDX expression can be met from ALLOWED (OR: any side; AND: both)."""
    toks = tokens(expr)
    pos = 0
    def atom():
        nonlocal pos
        t = toks[pos]; pos += 1
        if t == "(":
            v = disj()
            pos += 1  # ")"
            return v
        return t in ALLOWED
    def conj():
        nonlocal pos
        v = atom()
        while pos < len(toks) and toks[pos] == "AND":
            pos += 1
            v = atom() and v
        return v
    def disj():
        nonlocal pos
        v = conj()
        while pos < len(toks) and toks[pos] == "OR":
            pos += 1
            v = conj() or v
        return v
    return disj()

m = json.load(sys.stdin)
pkgs = {p["id"]: p for p in m["packages"]}
nodes = {n["id"]: n for n in m["resolve"]["nodes"]}
members = set(m["workspace_members"])
app = next(i for i in members if pkgs[i]["name"] == "app")
seen, todo = set(), [app]
while todo:
    i = todo.pop()
    if i in seen:
        continue
    seen.add(i)
    for d in nodes[i]["deps"]:
        if any(k["kind"] in (None, "build") for k in d["dep_kinds"]):
            todo.append(d["pkg"])

fail = False
gpl = False
for i in sorted(seen, key=lambda i: pkgs[i]["name"]):
    p = pkgs[i]
    lic = p.get("license")
    if not lic:
        print(f"licences: {p['name']} {p['version']} declares no SPDX licence", file=sys.stderr)
        fail = True
    elif not satisfiable(lic):
        print(f"licences: {p['name']} {p['version']} is {lic!r}, outside the allowed set", file=sys.stderr)
        fail = True
    if p["name"] in BUNDLED:
        lib, blic = BUNDLED[p["name"]]
        gpl |= blic.startswith("GPL")
        if lib not in open("packaging/copyright").read():
            print(f"licences: packaging/copyright does not name {lib} ({blic}), which {p['name']} links in", file=sys.stderr)
            fail = True
if gpl:
    for i in members:
        if pkgs[i]["license"] != "GPL-3.0-or-later":
            print(f"licences: {pkgs[i]['name']} must be GPL-3.0-or-later: the binary links GPL code", file=sys.stderr)
            fail = True

versions = {}
for i in seen:
    versions.setdefault(pkgs[i]["name"], set()).add(pkgs[i]["version"])
dups = sorted(n for n, v in versions.items() if len(v) > 1)
for n in sorted(REVIEWED.keys() - set(dups)):
    print(f"bans: {n} is no longer built twice; drop it from REVIEWED", file=sys.stderr)
    fail = True
for n in dups:
    if n not in REVIEWED:
        print(f"bans: {n} is built in versions {sorted(versions[n])}; keep one, or review it into REVIEWED", file=sys.stderr)
        fail = True
print(f"dependencies: {len(seen)} crates ship, licences ok" if not fail else "dependencies: FAILED", f"({len(dups)} reviewed duplicates)" if not fail else "")
sys.exit(1 if fail else 0)
