"""Time the MiniLM encoder in a fresh process: load (imports and weights), then embedding texts.

    python scripts/bench_embed.py [--runs N]

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
if sys.argv[1] == "torch-only":
    from benchmark.minilm import MiniLM
    model = MiniLM(model_path())
    enc = lambda texts: model.encode(texts, batch_size=64)
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
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    import numpy as np

    from benchmark.dataset import load_dataset

    texts = [q.text for d in load_dataset(ROOT)[0].diagrams.values() for q in d.questions]
    times: dict[str, dict[str, list[float]]] = {w: {"load_s": [], "encode_s": []} for w in WAYS}
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "texts.json"
        src.write_text(json.dumps(texts))
        vecs = {}
        for run in range(args.runs):
            for way in (WAYS if run % 2 == 0 else WAYS[::-1]):
                out = Path(tmp) / f"{way}.npy"
                proc = subprocess.run([sys.executable, "-c", CHILD, way, str(src), str(out)], cwd=ROOT,
                                      capture_output=True, text=True, check=True)
                got = json.loads(proc.stdout.strip().splitlines()[-1])
                for k in got:
                    times[way][k].append(got[k])
                vecs[way] = np.load(out)
    diff = float(np.abs(vecs[WAYS[0]] - vecs[WAYS[1]]).max())
    same = diff <= 1e-6
    print(f"{len(texts)} question texts, {args.runs} runs each, fresh process per run; largest difference "
          f"between the two ways' vectors: {diff:.1e}")
    base = {k: statistics.median(times[WAYS[0]][k]) for k in ("load_s", "encode_s")}
    print(f"{'':24}{'load s':>10}{'ratio':>8}{'encode s':>11}{'ratio':>8}")
    for way in WAYS:
        med = {k: statistics.median(times[way][k]) for k in ("load_s", "encode_s")}
        print(f"{way:24}{med['load_s']:10.2f}{med['load_s'] / base['load_s']:8.2f}"
              f"{med['encode_s']:11.2f}{med['encode_s'] / base['encode_s']:8.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
