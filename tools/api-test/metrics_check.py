"""Reads a `/metrics` page on standard input and checks it as Prometheus' scraper would.

The page is Prometheus' text format (0.0.4). It must parse in the official `prometheus-client`
package's parser, and keep the rules that parser lets pass but Prometheus' own scraper (Go's
expfmt) enforces, failing the whole scrape: a metric family's TYPE is given once, before its
samples, and every sample belongs to the family declared last. Exit status 0 on success, with
one line per family.
"""

import sys

from prometheus_client.parser import text_string_to_metric_families

SUFFIXES = ("", "_total", "_bucket", "_sum", "_count", "_created")

text = sys.stdin.read()
families = list(text_string_to_metric_families(text))
problems = []
declared = []
current = None
seen_samples = set()
for number, line in enumerate(text.splitlines(), 1):
    if line.startswith("# TYPE "):
        name = line.split()[2]
        if name in declared:
            problems.append(f"line {number}: second TYPE line for {name}")
        if name in seen_samples:
            problems.append(f"line {number}: TYPE for {name} after its samples")
        declared.append(name)
        current = name
    elif line and not line.startswith("#"):
        sample = line.split("{")[0].split()[0]
        base = current or ""
        stem = base[: -len("_total")] if base.endswith("_total") else base
        if not any(sample == stem + s or sample == base + s for s in SUFFIXES):
            problems.append(f"line {number}: {sample} is not in the family {current}")
        seen_samples.add(base)
if problems:
    sys.exit("\n".join(problems))
for family in families:
    print(f"{family.name} {family.type} {len(family.samples)}")
print(f"metrics: {len(families)} families, every one declared once")
