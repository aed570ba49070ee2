"""How the cost of a run and of scoring grows with the number of questions.

Builds synthetic datasets holding the bundled data 1x, 10x and 100x (copies of every diagram renamed
``<id>_c<n>``, their questions ``<id>.c<n>``; the images are the bundled ones, hard-linked), then measures, each in a fresh process so peak memory is its
own, the median over ``--repeats`` runs of:

* run    -- ``benchmark.runner.run`` without the report (stages + scoring + writing samples.jsonl);
* full   -- ``benchmark.runner.run`` with the report, i.e. what ``diagqa run`` does: its peak memory is
            the run's whole footprint (records streamed to disk, the summary and report from their rows);
* score  -- re-scoring the run's samples.jsonl (``benchmark.rescore.rescore_records``) after reading it;
* report -- aggregating and writing summary.csv / report.md / report.html.

Wall time is ``time.perf_counter`` and CPU time user + system seconds (workers included; unlike
wall time it does not grow when other programs share the machine); peak memory is the process's maximum resident set size
(``resource.getrusage``), workers included (the largest of the process and any one child, each child's
``VmHWM`` read from ``/proc`` while it runs; `main/child MB` gives the two apart). Ratios against
1x (of CPU time) are printed side by side: linear growth shows as ratios close to the scale factor. One
run that is not measured goes first (``--no-warmup`` leaves it out): it fills the caches every run reads,
so the first scale does not pay alone for drawing the drill-down's diagrams or embedding texts.

``--executors local ray`` measures the run (``run``/``full``) with each executor (``--workers`` processes, or
as many actors on an in-process Ray cluster; ``score``/``report`` are the local executor's): samples per second
(samples / wall time), peak RSS and ``samples.jsonl``'s size. The largest single process's peak RSS says
little of a run that spreads over processes, so beside it ``tree MB`` is the peak of the *sum* over the
whole process tree (the run, its pool or Ray's processes) of each process's proportional set size (PSS:
shared pages split between the processes that share them), sampled every 0.2 s from
``/proc/<pid>/smaps_rollup``.

    .venv/bin/python scripts/bench_scale.py                          # defaults below
    .venv/bin/python scripts/bench_scale.py --questions 20 --scales 1 10 100 --repeats 3
    .venv/bin/python scripts/bench_scale.py --questions 0 --scales 1 10 --kinds full   # every question
    .venv/bin/python scripts/bench_scale.py --kinds full --code ../other-checkout       # another version's code
    .venv/bin/python scripts/bench_scale.py --questions 0 --scales 1 10 --kinds full --workers 2 --executors local ray

``--code DIR`` runs the measurements with the ``benchmark`` package of another checkout (e.g. the
version before a change), so two versions can be compared side by side on the same datasets.
"""
from __future__ import annotations

import argparse
import json
import os
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
#: a measurement's checkout (``--code``), set by :func:`measure` in its environment: read here, on import, so that
#: every process of the measurement imports that ``benchmark`` package, its pool's workers too (a worker started by
#: the forkserver imports this script again before it runs a task)
CODE = os.environ.get("BENCH_SCALE_CODE")
sys.path.insert(0, CODE or str(ROOT))


class _NoAliases(yaml.SafeDumper):
    """Repeated questions share their values; annotation files may not hold YAML aliases, so each is written out."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def make_dataset(dst: Path, scale: int, questions: int | None) -> int:
    """The bundled dataset ``scale`` times over (its first ``questions`` questions): copy 0 is the bundled
    data, copy ``n`` renames every diagram ``<id>_c<n>`` and every question ``<id>.c<n>`` (twins and twin
    questions renamed within the same copy). A copy's D2 file and PNG are hard links to the bundled ones
    (copied where a link cannot be made): 10x is 500 diagrams, as a dataset ten times as large would be,
    whose images are the bundled ones, so the caches keyed by image content serve every copy."""
    import json
    import os

    from benchmark.runner import prepare_dataset

    ds, good, _ = prepare_dataset(ROOT, None)
    keep = {q.id for q in good[:questions]} if questions else {q.id for q in good}
    (dst / "diagrams").mkdir(parents=True)
    (dst / "annotations").mkdir()
    renders_path = ROOT / "diagrams" / "renders.json"
    renders = json.loads(renders_path.read_text(encoding="utf-8")) if renders_path.exists() else {}
    out_renders = {}

    def link(src: Path, target: Path) -> None:
        try:
            os.link(src, target)
        except OSError:
            shutil.copy(src, target)

    n = 0
    for did, d in sorted(ds.diagrams.items()):
        data = yaml.safe_load(d.annotation_path.read_text(encoding="utf-8"))
        qs = [q for q in data["questions"] if q["id"] in keep]
        if not qs:
            continue
        twin = data.pop("twin", None)
        if twin and not (twin in ds.diagrams and any(q.id in keep for q in ds.diagrams[twin].questions)):
            twin = None
        for r in range(scale):
            name = did if r == 0 else f"{did}_c{r}"
            link(d.d2_path, dst / "diagrams" / f"{name}.d2")
            if d.png_path.exists():
                link(d.png_path, dst / "diagrams" / f"{name}.png")
            if did in renders:
                out_renders[name] = renders[did]
            suffix = "" if r == 0 else f".c{r}"
            out = []
            for q in qs:
                q2 = dict(q, id=q["id"] + suffix)
                if "twin_question" in q2:
                    q2["twin_question"] = q["twin_question"] + suffix
                out.append(q2)
            copy = dict(data, diagram=name, questions=out)
            if twin:
                copy["twin"] = twin if r == 0 else f"{twin}_c{r}"
            (dst / "annotations" / f"{name}.yaml").write_text(yaml.dump(copy, Dumper=_NoAliases, allow_unicode=True),
                                                              encoding="utf-8")
            n += len(out)
    (dst / "diagrams" / "renders.json").write_text(json.dumps(out_renders, indent=1, sort_keys=True), encoding="utf-8")
    return n


def _cpu_s() -> float:
    """User + system CPU seconds of this process and its finished children (independent of machine load)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _own_mb() -> float:
    """Peak RSS of this process, in MB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _tree(root: int) -> tuple[float, float]:
    """The sum of the proportional set sizes of ``root`` and all its descendants, and the largest peak RSS
    (``VmHWM``) of any descendant, in MB (0 where unreadable).

    A child's peak is read from ``/proc`` while it runs: ``getrusage(RUSAGE_CHILDREN)`` would also count, for a
    program started by ``fork`` and ``exec``, the parent's pages it held for an instant between the two.
    """
    todo, seen, total, child = [root], set(), 0, 0
    while todo:
        pid = todo.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
                    break
            if pid != root:
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        child = max(child, int(line.split()[1]))
                        break
            for task in Path(f"/proc/{pid}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return total / 1024, child / 1024


class TreeSampler:
    """The peak of this process's tree (:func:`_tree`: the sum of its PSS, and the largest child's peak RSS),
    sampled in a thread while a run goes."""

    def __init__(self, every_s: float = 0.2) -> None:
        import os
        import threading

        self.peak, self.child, self._every, self._pid = 0.0, 0.0, every_s, os.getpid()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            pss, child = _tree(self._pid)
            self.peak, self.child = max(self.peak, pss), max(self.child, child)
            self._stop.wait(self._every)

    def __enter__(self) -> "TreeSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def child(args: argparse.Namespace) -> None:
    """One measurement in this process; prints one JSON line."""
    import benchmark

    if args.code and Path(benchmark.__file__).resolve().parent.parent != Path(args.code).resolve():
        raise SystemExit(f"--code {args.code}: this process imported {benchmark.__file__} (measure() sets BENCH_SCALE_CODE)")
    from benchmark.plugins import load_all

    load_all()
    with TreeSampler() as tree:
        out = _measure_child(args, tree)
    out["main_mb"], out["child_mb"] = _own_mb(), round(tree.child, 1)
    out["peak_mb"] = max(out["main_mb"], out["child_mb"])
    print(json.dumps(out))


def _measure_child(args: argparse.Namespace, tree: "TreeSampler") -> dict:
    if args.child in ("run", "full"):
        from benchmark.runner import run
        from benchmark.spec import RunSpec

        spec = RunSpec(data_dir=Path(args.data), variants=tuple(args.variants), answerers=tuple(args.answerers),
                       out_dir=Path(args.out), run_id=args.run_id, workers=args.workers,
                       **({"executor": args.executor} if args.executor != "local" else {}))
        t, c = time.perf_counter(), _cpu_s()
        result = run(spec, progress=False, quiet=True, report=args.child == "full")
        wall = time.perf_counter() - t
        run_dir = Path(args.out) / args.run_id
        out = {"wall_s": wall, "cpu_s": _cpu_s() - c, "samples": result.card["samples"],
               "samples_per_s": result.card["samples"] / wall, "tree_mb": round(tree.peak, 1),
               "samples_mb": round((run_dir / "samples.jsonl").stat().st_size / 2**20, 1),
               "output_mb": round(sum(f.stat().st_size for f in run_dir.rglob("*") if f.is_file()) / 2**20, 1)}
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
    return out


def measure(kind: str, data: Path, out: Path, run_id: str, args: argparse.Namespace, keep: bool = True,
            executor: str = "local") -> dict:
    """One measurement in a fresh process. A run's directory is removed afterwards unless ``keep``
    (the runs of ``kind`` run/full get a directory of their own each time: a run id is never reused)."""
    cmd = [sys.executable, __file__, "--child", kind, "--data", str(data), "--out", str(out), "--run-id", run_id,
           "--workers", str(args.workers), "--executor", executor, "--variants", *args.variants,
           "--answerers", *args.answerers]
    env = dict(os.environ)
    if args.code:
        cmd += ["--code", str(args.code)]
        code = str(Path(args.code).resolve())
        # the child, its pool's workers and Ray's (which read PYTHONPATH, not this script) import that checkout
        env.update(BENCH_SCALE_CODE=code, PYTHONPATH=os.pathsep.join(p for p in (code, env.get("PYTHONPATH")) if p))
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{proc.stderr[-2000:]}")
    if not keep:
        shutil.rmtree(out / run_id, ignore_errors=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


KINDS = ("run", "full", "score", "report")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--questions", type=int, default=10, help="base question count (first N bundled questions; 0 = all)")
    p.add_argument("--scales", type=int, nargs="+", default=[1, 10, 100])
    p.add_argument("--repeats", type=int, default=3, help="runs per measurement (the median is reported)")
    p.add_argument("--variants", nargs="+", default=["oracle+d2+none", "oracle+d2+full", "oracle+d2+khop2", "oracle+d2+bm25-8"])
    p.add_argument("--answerers", nargs="+", default=["solver", "keyword", "blind"])
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--json", type=Path, default=ROOT / "results" / "bench_scale.json", help="where to write the numbers")
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS), help="what to measure (default: all)")
    p.add_argument("--code", type=Path, help="checkout whose benchmark package is measured (default: this one)")
    p.add_argument("--executors", nargs="+", choices=("local", "ray"), default=["local"],
                   help="executors whose run/full are measured (default: local)")
    p.add_argument("--no-warmup", action="store_true",
                   help="measure from the caches as they are (default: one unmeasured run first fills them)")
    p.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    p.add_argument("--executor", default="local", help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--out", help=argparse.SUPPRESS)
    p.add_argument("--run-id", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args)
        return
    rows = []
    with tempfile.TemporaryDirectory(prefix="diagqa-bench-") as tmp:
        if not args.no_warmup:
            # one run first, not measured: it fills the caches every run reads (the drill-down's rendered
            # diagrams, embeddings, OCR), so each measurement is of a run, not of filling them (d2 drawing
            # the large diagrams alone peaks at about 1.5 GB, which would count as the 1x run's peak)
            data = Path(tmp) / "warmup"
            make_dataset(data, args.scales[0], args.questions or None)
            measure("full", data, Path(tmp) / "out", "warmup", args, keep=False)
            shutil.rmtree(data, ignore_errors=True)
            print("warm-up run done", file=sys.stderr)
        for scale in args.scales:
            data = Path(tmp) / f"data{scale}"
            n_q = make_dataset(data, scale, args.questions or None)
            row = {"scale": scale, "questions": n_q}
            out = Path(tmp) / "out"
            kinds = [k for k in KINDS if k in args.kinds]
            if {"score", "report"} & set(kinds) and "run" not in kinds:
                kinds.insert(0, "run")  # they read a run's samples
            jobs = [(k, "local") for k in kinds if k not in ("run", "full") or "local" in args.executors]
            jobs += [(k, e) for e in args.executors if e != "local" for k in kinds if k in ("run", "full")]
            for kind, executor in jobs:
                key = kind if executor == "local" else f"{kind}-{executor}"
                got = []
                for i in range(args.repeats):
                    if kind in ("run", "full"):  # the first plain run is kept for score and report
                        got.append(measure(kind, data, out, f"x{scale}-{key}-{i}", args,
                                           keep=key == "run" and i == 0, executor=executor))
                    else:
                        got.append(measure(kind, data, out, f"x{scale}-run-0", args))
                planned = n_q * len(args.variants) * len(args.answerers)
                if kind in ("run", "full") and any(g["samples"] != planned for g in got):
                    raise SystemExit(f"{key} at {scale}x ran {got[0]['samples']} samples, not the {planned} planned: "
                                     "the generated dataset lost questions (diagqa validate says why)")
                row[key] = {"wall_s": statistics.median(g["wall_s"] for g in got),
                             "cpu_s": statistics.median(g["cpu_s"] for g in got),
                             "peak_mb": statistics.median(g["peak_mb"] for g in got),
                             "all_peak_mb": [g["peak_mb"] for g in got],
                             "main_mb": statistics.median(g["main_mb"] for g in got),
                             "child_mb": statistics.median(g["child_mb"] for g in got),
                             "samples": got[0]["samples"], "all_wall_s": [round(g["wall_s"], 3) for g in got]}
                if "samples_mb" in got[0]:
                    row[key].update(samples_mb=got[0]["samples_mb"], output_mb=got[0]["output_mb"],
                                    samples_per_s=statistics.median(g["samples_per_s"] for g in got),
                                    tree_mb=statistics.median(g["tree_mb"] for g in got),
                                    all_tree_mb=[g["tree_mb"] for g in got])
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(data, ignore_errors=True)
            rows.append(row)
            print(f"scale {scale}: {n_q} questions done", file=sys.stderr)
    base = rows[0]
    code = f", code from {args.code}" if args.code else ""
    print(f"\nmedian of {args.repeats} runs, workers={args.workers}, variants={len(args.variants)}, "
          f"answerers={len(args.answerers)}, executors={'/'.join(args.executors)}{code}\n")

    def ratio(r: dict, kind: str, key: str = "cpu_s") -> str:  # by CPU time: wall time also measures others' load
        return f"{r[kind][key] / base[kind][key]:.2f}" if base[kind][key] else "–"

    cols = [("scale", lambda r: f"{r['scale']}×"), ("questions", lambda r: str(r["questions"])),
            ("samples", lambda r: str(next(r[k]["samples"] for k in r if isinstance(r[k], dict))))]
    keys = [k for k in base if isinstance(base[k], dict)]
    for kind in keys:
        cols += [(f"{kind} s", lambda r, k=kind: f"{r[k]['wall_s']:.2f}"),
                 (f"{kind} cpu s", lambda r, k=kind: f"{r[k]['cpu_s']:.2f}"),
                 (f"{kind} ×", lambda r, k=kind: ratio(r, k)),
                 (f"{kind} MB", lambda r, k=kind: f"{r[k]['peak_mb']:.0f}"),
                 (f"{kind} MB ×", lambda r, k=kind: ratio(r, k, "peak_mb")),
                 (f"{kind} main/child MB", lambda r, k=kind: f"{r[k]['main_mb']:.0f}/{r[k]['child_mb']:.0f}")]
        if kind == "score":
            cols.append(("µs/sample scored", lambda r: f"{1e6 * r['score']['wall_s'] / max(1, r['score']['samples']):.0f}"))
        if "samples_mb" in base[kind]:
            cols += [(f"{kind} samples/s", lambda r, k=kind: f"{r[k]['samples_per_s']:.0f}"),
                     (f"{kind} samples/s ×", lambda r, k=kind: f"{r[k]['samples_per_s'] / base[k]['samples_per_s']:.2f}"),
                     (f"{kind} tree MB", lambda r, k=kind: f"{r[k]['tree_mb']:.0f}"),
                     (f"{kind} samples.jsonl MB", lambda r, k=kind: f"{r[k]['samples_mb']:.1f}"),
                     (f"{kind} output MB", lambda r, k=kind: f"{r[k]['output_mb']:.1f}")]
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---:|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f(r) for _, f in cols) + " |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"args": {k: v for k, v in vars(args).items() if k in ("questions", "scales", "repeats",
                                                                                             "variants", "answerers", "workers", "kinds", "code",
                                                                                             "executors")},
                                     "rows": rows}, indent=1, default=str))
    print(f"\nwritten: {args.json}", file=sys.stderr)


if __name__ == "__main__":
    main()
