"""Speed of the decision layer: batched (as ``diagqa decide`` runs it) against a straightforward
per-sample implementation, side by side on the same samples of a run.

    PYTHONPATH=. python scripts/bench_decision.py results/<run-id> [--repeats 5] [--limit N]
        [--per-sample-subset N] [--threads T] [--disk-cache]

* **per-sample**: for each sample, its question, context and answer are embedded one text at a
  time (three model calls per sample, nothing reused), then the same formulas and rules.
* **batched, all signals**: :func:`benchmark.decision.apply.decide_records` with ``signals="all"``
  -- the text signals of every sample, each distinct text embedded once, in one batched call.
* **batched, where needed** (the layer's default, as ``diagqa decide`` and the report run it): the
  graph rules first, then the text signals, batched, of only the samples they leave undecided.

Both start from a loaded model (warm) and an empty embedding memory, and neither reads or writes
the on-disk embedding cache, so the figures compare algorithms, not caches. The two must produce
the same decisions (checked). The per-sample implementation costs the same per sample whatever the
run holds, so on a large run it may be timed on a seeded random subset; the batched one always
takes the whole run (its cost per sample falls as texts repeat). The implementations run one after
another in each repeat, in alternating order, so that a change in the machine's load reaches all
of them. Prints the median (and min/max) per sample of each over ``--repeats`` runs and their
ratios, in wall time and in CPU time of the process (which other jobs on a loaded machine change
far less; with ``--threads 1`` it is the work done), with the load average.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from benchmark import embeddings
from benchmark.decision.apply import decide_records, text_item
from benchmark.decision.config import DecisionConfig
from benchmark.decision.rules import GraphSignals, decide
from benchmark.decision.signals import combine
from benchmark.samples import load_samples


def per_sample(records, cfg, model):
    """The straightforward implementation: three single-text encodes per sample."""
    out = []
    for rec in records:
        item = text_item(rec)

        def vec(text):
            if not text.strip():
                return None
            return model.encode([text])[0]

        q, c, a = vec(item.question), vec(item.context), vec(item.answer)

        def sim(x, y):
            return 0.0 if x is None or y is None else float(x @ y)

        sig = combine(item, sim(c, a), sim(q, a), sim(q, c))
        out.append(decide(sig, GraphSignals.from_record(rec), cfg).verdict)
    return out


def batched(records, cfg, disk_cache=None, signals="all"):
    embeddings._memory.clear()   # no vector kept in memory from an earlier repeat
    if disk_cache is None:
        enc = lambda texts: embeddings.encode(texts, use_disk=False)  # noqa: E731
    else:
        enc = lambda texts: embeddings.encode(texts, cache_dir=disk_cache)  # noqa: E731
    decided = decide_records(records, cfg, encode=enc, signals=signals)
    batched.texts[signals] = decided.texts
    return [r["verdict"] for r in decided.rows]


batched.texts = {}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--limit", type=int, default=None, help="the first N samples (default: all)")
    ap.add_argument("--per-sample-subset", type=int, default=None, metavar="N",
                    help="time the per-sample implementation on a seeded random N of the samples (its cost per "
                         "sample does not depend on the others); the batched layer always runs on all of them")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads for both implementations (default: torch's own choice)")
    ap.add_argument("--disk-cache", action="store_true",
                    help="also time the batched layer reading embeddings an earlier decide left on disk "
                         "(a fresh folder filled by one untimed pass)")
    args = ap.parse_args(argv)
    records = load_samples(args.run).records[: args.limit]
    cfg = DecisionConfig()
    t_load = time.perf_counter()
    model = embeddings.load_model()
    t_load = time.perf_counter() - t_load
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    model.encode(["warm up"])
    n = len(records)
    subset = list(range(n))
    if args.per_sample_subset and args.per_sample_subset < n:
        import random

        subset = sorted(random.Random(0).sample(range(n), args.per_sample_subset))
    sub_records = [records[i] for i in subset]
    sizes = {"per-sample": len(subset), "batched, all": n, "batched, needed": n, "batched, disk": n}
    times = {"per-sample": [], "batched, all": [], "batched, needed": []}
    cpu = {k: [] for k in times}
    results = {}
    runners = [("per-sample", lambda: per_sample(sub_records, cfg, model)),
               ("batched, all", lambda: batched(records, cfg)),
               ("batched, needed", lambda: batched(records, cfg, signals="needed"))]
    if args.disk_cache:
        import tempfile

        cache = Path(tempfile.mkdtemp(prefix="bench-decide-"))
        batched(records, cfg, cache)   # untimed: fills the on-disk cache
        times["batched, disk"] = []
        cpu["batched, disk"] = []
        runners.append(("batched, disk", lambda: batched(records, cfg, cache)))
    for rep in range(args.repeats):
        for name, fn in (runners if rep % 2 == 0 else runners[::-1]):   # alternate the order: load drifts
            t, c = time.perf_counter(), time.process_time()
            results[name] = fn()
            times[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    for name in results:
        mine = [results[name][i] for i in subset] if name != "per-sample" else results[name]
        if mine != results["per-sample"]:
            diff = sum(a != b for a, b in zip(results["per-sample"], mine))
            print(f"warning: {diff} of {len(subset)} verdicts differ between per-sample and {name}", file=sys.stderr)
    texts = {t for r in records for t in (lambda i: (i.question, i.context, i.answer))(text_item(r)) if t.strip()}
    import torch

    print(f"{n} samples ({len(subset)} for per-sample), {len(texts)} distinct texts, {args.repeats} repeats, "
          f"{torch.get_num_threads()} torch thread(s), model load {t_load:.2f} s (once per process, not in the "
          f"figures), load average {os.getloadavg()[0]:.1f}; text signals computed for "
          f"{batched.texts.get('needed', '–')} of {n} samples where needed (median [min, max] ms per sample)")
    for label, table in (("wall", times), ("CPU", cpu)):
        print(f"{label} time:")
        med = {}
        for name, ts in table.items():
            per = [1000 * x / sizes[name] for x in ts]
            med[name] = statistics.median(per)
            print(f"  {name:<16} {med[name]:8.2f}  [{min(per):.2f}, {max(per):.2f}]"
                  + (f"  {med['per-sample'] / med[name]:.1f}x faster" if name != "per-sample" else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
