"""How the cost of a run and of scoring grows with the number of questions.

Builds synthetic datasets holding every bundled question 1x, 10x and 100x (repeats get ids
``<id>~<n>``; diagrams are shared), then measures, each in a fresh process so peak memory is its
own, the median over ``--repeats`` runs of:

* run    -- ``benchmark.runner.run`` without the report (stages + scoring + writing samples.jsonl);
* score  -- re-scoring the run's samples.jsonl (``benchmark.rescore.rescore_records``) after reading it;
* report -- aggregating and writing summary.csv / report.md / report.html.

Wall time is ``time.perf_counter`` and CPU time user + system seconds (workers included; unlike
wall time it does not grow when other programs share the machine); peak memory is the process's maximum resident set size
(``resource.getrusage``), workers included. Ratios against 1x (of CPU time) are printed side by side: linear
growth shows as ratios close to the scale factor.

    .venv/bin/python scripts/bench_scale.py                          # defaults below
    .venv/bin/python scripts/bench_scale.py --questions 20 --scales 1 10 100 --repeats 3
"""
from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_dataset(dst: Path, scale: int, questions: int | None) -> int:
    """A copy of the bundled dataset whose questions (the first ``questions``) are repeated ``scale`` times."""
    from benchmark.runner import prepare_dataset

    ds, good, _ = prepare_dataset(ROOT, None)
    keep = {q.id for q in good[:questions]} if questions else {q.id for q in good}
    (dst / "diagrams").mkdir(parents=True)
    (dst / "annotations").mkdir()
    n = 0
    for did, d in sorted(ds.diagrams.items()):
        data = yaml.safe_load(d.annotation_path.read_text(encoding="utf-8"))
        qs = [q for q in data["questions"] if q["id"] in keep]
        if not qs:
            continue
        shutil.copy(d.d2_path, dst / "diagrams" / d.d2_path.name)
        twin = data.pop("twin", None)
        if twin and not any(q["id"] in keep for q in ds.diagrams[twin].questions if twin in ds.diagrams):
            twin = None
        out = []
        for r in range(scale):
            for q in qs:
                q2 = dict(q, id=q["id"] if r == 0 else f"{q['id']}~{r}")
                if "twin_question" in q2:
                    q2["twin_question"] = q["twin_question"] if r == 0 else f"{q['twin_question']}~{r}"
                out.append(q2)
        data["questions"] = out
        if twin:
            data["twin"] = twin
        (dst / "annotations" / f"{did}.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        n += len(out)
    return n


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children (independent of machine load)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, kids) / 1024, 1)


def child(args: argparse.Namespace) -> None:
    """One measurement in this process; prints one JSON line."""
    from benchmark.plugins import load_all

    load_all()
    if args.child == "run":
        from benchmark.runner import run
        from benchmark.spec import RunSpec

        spec = RunSpec(data_dir=Path(args.data), variants=tuple(args.variants), answerers=tuple(args.answerers),
                       out_dir=Path(args.out), run_id=args.run_id, workers=args.workers)
        t, c = time.perf_counter(), _cpu_s()
        result = run(spec, progress=False, quiet=True, report=False)
        out = {"wall_s": time.perf_counter() - t, "cpu_s": _cpu_s() - c, "samples": len(result.records)}
    else:
        from benchmark.rescore import load_run, rescore_records

        run_dir = Path(args.out) / args.run_id
        t = time.perf_counter()
        records, graphs, card = load_run(run_dir)
        t_read, c_read = time.perf_counter(), _cpu_s()
        records = rescore_records(records, graphs, workers=args.workers)
        t_score, c_score = time.perf_counter(), _cpu_s()
        if args.child == "report":
            from benchmark.report import write_report

            write_report(run_dir, records, card)
        if args.child == "score":
            out = {"wall_s": t_score - t_read, "cpu_s": c_score - c_read}
        else:
            out = {"wall_s": time.perf_counter() - t_score, "cpu_s": _cpu_s() - c_score}
        out.update(read_s=t_read - t, samples=len(records))
    out["peak_mb"] = _peak_mb()
    print(json.dumps(out))


def measure(kind: str, data: Path, out: Path, run_id: str, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(data), "--out", str(out), "--run-id", run_id,
           "--workers", str(args.workers), "--variants", *args.variants, "--answerers", *args.answerers]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=10, help="base question count (first N bundled questions; 0 = all)")
    p.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    p.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is reported)")
    p.add_argument("--variants", nargs="+", default=["oracle+d2+none", "oracle+d2+full", "oracle+d2+khop2", "oracle+d2+bm25-8"])
    p.add_argument("--answerers", nargs="+", default=["solver", "keyword", "blind"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--json", type=Path, default=ROOT / "results" / "bench_scale.json", help="where to write the numbers")
    p.add_argument("--child", choices=["run", "score", "report"], help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--run-id", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="diagqa-bench-") as tmp:
        for scale in args.scales:
            data = Path(tmp) / f"data{scale}"
            n_q = make_dataset(data, scale, args.questions or None)
            row = {"scale": scale, "questions": n_q}
            for kind in ("run", "score", "report"):
                got = [measure(kind, data, Path(tmp) / "out", f"x{scale}", args) for _ in range(args.repeats)]
                row[kind] = {"wall_s": statistics.median(g["wall_s"] for g in got),
                             "cpu_s": statistics.median(g["cpu_s"] for g in got),
                             "peak_mb": statistics.median(g["peak_mb"] for g in got),
                             "samples": got[0]["samples"], "all_wall_s": [round(g["wall_s"], 3) for g in got]}
            rows.append(row)
            print(f"scale {scale}: {n_q} questions done", file=sys.stderr)
    base = rows[0]
    print(f"\nmedian of {args.repeats} runs, workers={args.workers}, variants={len(args.variants)}, answerers={len(args.answerers)}\n")
    print("| scale | questions | samples | run s | run cpu s | run × | run MB | score s | score cpu s | score × "
          "| µs/sample scored | score MB | report s | report × |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        def ratio(kind: str) -> str:  # by CPU time: wall time also measures whoever else uses the machine
            return f"{r[kind]['cpu_s'] / base[kind]['cpu_s']:.1f}" if base[kind]["cpu_s"] else "–"
        print(f"| {r['scale']}× | {r['questions']} | {r['run']['samples']} | {r['run']['wall_s']:.2f} | "
              f"{r['run']['cpu_s']:.2f} | {ratio('run')} | {r['run']['peak_mb']:.0f} | {r['score']['wall_s']:.2f} | "
              f"{r['score']['cpu_s']:.2f} | {ratio('score')} | "
              f"{1e6 * r['score']['wall_s'] / max(1, r['score']['samples']):.0f} | {r['score']['peak_mb']:.0f} | "
              f"{r['report']['wall_s']:.2f} | {ratio('report')} |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: v for k, v in vars(args).items() if k in ("questions", "scales", "repeats",
                                                                                             "variants", "answerers", "workers")},
                                     "rows": rows}, indent=1, default=str))
    print(f"\nwritten: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
