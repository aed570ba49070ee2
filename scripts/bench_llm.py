"""Throughput of the llm answerer's own concurrency against the local test server with a fixed latency.

    python scripts/bench_llm.py [--requests 32] [--latency 0.25] [--concurrency 1 2 4 8] [--runs 3]

The real openai client over real HTTP (tests/llm_server.py on 127.0.0.1), the cache off, one
``answer_many`` of ``--requests`` questions per run; the median wall time of ``--runs`` runs per
concurrency, throughput and the speed-up over concurrency 1 side by side. With a fixed latency the
ideal speed-up is the concurrency itself (until the requests run out).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from benchmark.answerers.llm import LLMAnswerer  # noqa: E402
from benchmark.context import make_context  # noqa: E402
from benchmark.graph import build_graph, whole  # noqa: E402
from benchmark.questions import Question  # noqa: E402
from llm_server import LLMServer  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.25, help="seconds the server takes per request")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()

    g = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "d", "label": "DB"}], "edges": [{"src": "u", "dst": "d"}]})
    ctx = make_context("x", whole(g), g)
    items = [(Question(f"q{i}", "x", f"Can User reach DB ({i})?", "reachable", (("source", "u"), ("target", "d")),
                       True, whole(g)), ctx, None) for i in range(args.requests)]
    print(f"{args.requests} requests, server latency {args.latency} s, median of {args.runs} runs")
    print(f"{'concurrency':>11} {'median s':>9} {'req/s':>7} {'speed-up':>8} {'ideal':>6} {'max in flight':>13}")
    base = None
    with LLMServer(latency=args.latency) as server:
        for c in args.concurrency:
            answerer = LLMAnswerer(base_url=server.base_url, model="bench", api_key_env="NO_KEY", cache_path=None,
                                   concurrency=c)
            times = []
            server.max_in_flight = 0
            for _ in range(args.runs):
                t = time.perf_counter()
                answers = answerer.answer_many(items)
                times.append(time.perf_counter() - t)
                assert all(a.error is None for a in answers), [a.error for a in answers if a.error][:3]
            med = statistics.median(times)
            base = base or med
            ideal = min(c, args.requests)
            print(f"{c:>11} {med:>9.2f} {args.requests / med:>7.1f} {base / med:>8.2f} {ideal:>6} {server.max_in_flight:>13}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
