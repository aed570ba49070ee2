"""Time the MiniLM encoder in a fresh process: load (imports and weights), then embedding texts.

    python scripts/bench_embed.py [--runs N]
    python scripts/bench_embed.py --batch-tokens 1000000 1024 [--samples RUN/samples.jsonl] [--limit N] [--runs N]

Every process that embeds texts pays the load once: a cold ``diagqa run`` pays it in its own process
(the ``dense`` finder) and in each pool worker that embeds (``dense-8``'s edge texts). Two ways,
interleaved run by run so that a busy machine slows them alike, each a fresh interpreter:

- ``torch-only``: :class:`benchmark.minilm.MiniLM`, what the harness uses;
- ``sentence-transformers``: ``SentenceTransformer(folder).encode(..., normalize_embeddings=True)``,
  what it used before, from the same model folder.

Each child times its load (import to a model ready to encode) and its encoding of the bundled
dataset's 735 question texts (one call, batches of 64). The two batch the texts differently (by
tokens, by characters), so their vectors agree up to the last bits of float sums: the largest
difference is printed, and the script fails if it exceeds 1e-6.
Medians of ``--runs`` runs; the ratio column is each median over the torch-only one.

With ``--batch-tokens``, the ways are the torch-only encoder with each token budget of a batch
(``MiniLM.encode(batch_tokens=N)``, at most 64 texts a batch as well; a budget of a million is no budget),
the first the reference. ``--samples`` embeds a run's texts instead of the questions: the distinct
question, context and answer texts of its ``samples.jsonl``, what the decision layer embeds when it
embeds every sample's (contexts are the long ones).
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
from benchmark.embeddings import model_path
if sys.argv[1].startswith("torch-only"):
    from benchmark.minilm import MiniLM
    model = MiniLM(model_path())
    budget = {"batch_tokens": int(sys.argv[1].split("@")[1])} if "@" in sys.argv[1] else {}
    enc = lambda texts: model.encode(texts, batch_size=64, **budget)
else:
    from sentence_transformers import SentenceTransformer
    model = SentenceTransformer(str(model_path()), device="cpu")
    enc = lambda texts: model.encode(texts, batch_size=64, convert_to_numpy=True, normalize_embeddings=True,
                                     show_progress_bar=False)
t1 = time.perf_counter()
texts = json.load(open(sys.argv[2]))
vecs = enc(texts)
t2 = time.perf_counter()
import numpy as np
np.save(sys.argv[3], np.asarray(vecs, dtype=np.float32))
print(json.dumps({"load_s": t1 - t0, "encode_s": t2 - t1}))
"""

WAYS = ("torch-only", "sentence-transformers")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each way (default 5)")
    ap.add_argument("--batch-tokens", type=int, nargs="+", metavar="N",
                    help="compare these token budgets of a batch (torch-only), instead of the two encoders")
    ap.add_argument("--samples", type=Path, help="embed this run's distinct question, context and answer texts")
    ap.add_argument("--limit", type=int, help="only the first N texts")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from benchmark.dataset import load_dataset

    ways = tuple(f"torch-only@{n}" for n in args.batch_tokens) if args.batch_tokens else WAYS
    if args.samples:
        from benchmark.decision.apply import text_item
        from benchmark.records import loads_line
        from benchmark.rundir import scan_samples

        seen: dict[str, None] = {}
        for _, rec in scan_samples(args.samples, loads_line):
            item = text_item(rec)
            seen.update(dict.fromkeys(t for t in (item.question, item.context, item.answer) if t))
        texts, what = list(seen), "distinct texts of the run's samples"
    else:
        texts, what = [q.text for d in load_dataset(ROOT)[0].diagrams.values() for q in d.questions], "question texts"
    texts = texts[:args.limit] if args.limit else texts
    times: dict[str, dict[str, list[float]]] = {w: {"load_s": [], "encode_s": []} for w in ways}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "texts.json"
        src.write_text(json.dumps(texts))
        vecs = {}
        for run in range(args.runs):
            for way in (ways if run % 2 == 0 else ways[::-1]):
                out = Path(tmp) / f"{way}.npy"
                proc = subprocess.run([sys.executable, "-c", CHILD, way, str(src), str(out)], cwd=ROOT,
                                      capture_output=True, text=True, check=True)
                got = json.loads(proc.stdout.strip().splitlines()[-1])
                for k in got:
                    times[way][k].append(got[k])
                vecs[way] = np.load(out)
    diff = max((float(np.abs(vecs[ways[0]] - vecs[w]).max()) for w in ways[1:]), default=0.0)
    same = diff <= 1e-6
    print(f"{len(texts)} {what}, {args.runs} runs each, fresh process per run; largest difference "
          f"from the first way's vectors: {diff:.1e}")
    base = {k: statistics.median(times[ways[0]][k]) for k in ("load_s", "encode_s")}
    print(f"{'':24}{'load s':>10}{'ratio':>8}{'encode s':>11}{'ratio':>8}")
    for way in ways:
        med = {k: statistics.median(times[way][k]) for k in ("load_s", "encode_s")}
        print(f"{way:24}{med['load_s']:10.2f}{med['load_s'] / base['load_s']:8.2f}"
              f"{med['encode_s']:11.2f}{med['encode_s'] / base['encode_s']:8.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
