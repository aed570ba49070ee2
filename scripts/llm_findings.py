"""What a run found about one answerer, from its samples.jsonl: accuracy and guessing, yes-bias,
twin consistency and how faithful its evidence is -- per variant, side by side.

    python scripts/llm_findings.py results/<run-id> [--answerer llm]

Failed answers (``answer.error``) are counted apart and left out of every rate. Yes-bias is read
on the yes/no questions: the share answered "yes" against the share whose gold answer is yes, and
accuracy on each. Twin consistency: of the twin pairs (the same question on two diagrams that
differ where it matters, gold answers opposite) both answered, the share answered differently.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path


def _mean(xs: list[float]) -> str:
    xs = [x for x in xs if x is not None]
    return f"{sum(xs) / len(xs):.2f}" if xs else "–"


def _share(k: int, n: int) -> str:
    return f"{k}/{n} = {k / n:.2f}" if n else "–"


def findings(run_dir: Path, answerer: str) -> list[str]:
    recs = [json.loads(line) for line in (run_dir / "samples.jsonl").open(encoding="utf-8")]
    by_variant: dict[str, list[dict]] = defaultdict(list)
    for r in recs:
        if r["answerer"] == answerer and r.get("answer") is not None:
            by_variant[r["variant"]].append(r)
    out = [f"{run_dir.name}: answerer {answerer}"]
    head = ("variant", "n", "failed", "accuracy", "grounded", "lucky", "guess rate", "said yes", "gold yes",
            "acc | gold yes", "acc | gold no", "twins differ", "faithful", "ev. recall", "ev. precision")
    out.append(" | ".join(head))
    for variant, rs in by_variant.items():
        failed = [r for r in rs if r["answer"].get("error")]
        ok = [r for r in rs if not r["answer"].get("error") and r.get("metrics")]
        correct = [r for r in ok if r["metrics"]["correct"]]
        grounded = sum(1 for r in correct if r["metrics"]["guess_class"] == "grounded")
        lucky = sum(1 for r in correct if r["metrics"]["guess_class"] == "lucky_guess")
        bools = [r for r in ok if r["question"]["type"] in ("reachable", "reachable_avoiding", "edge_exists",
                                                             "common_downstream")]
        said_yes = sum(1 for r in bools if r["metrics"].get("answer_value") is True)
        gold_yes = [r for r in bools if r["question"]["answer"] is True]
        gold_no = [r for r in bools if r["question"]["answer"] is False]
        answers = {r["question_id"]: r for r in ok}
        pairs = {tuple(sorted((q, (r["question"].get("extra") or {}).get("twin_question"))))
                 for q, r in answers.items() if (r["question"].get("extra") or {}).get("twin_question") in answers}
        differ = sum(1 for a, b in pairs
                     if repr(answers[a]["metrics"].get("answer_value")) != repr(answers[b]["metrics"].get("answer_value")))
        kinds: dict[str, int] = defaultdict(int)
        for r in failed:
            kinds[r["answer"].get("error_kind") or "error"] += 1
        out.append(" | ".join([
            variant, str(len(rs)), f"{len(failed)}" + (f" ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))})" if kinds else ""),
            _share(len(correct), len(ok)), _share(grounded, len(ok)), str(lucky), _share(lucky, len(correct)),
            _share(said_yes, len(bools)), _share(len(gold_yes), len(bools)),
            _share(sum(1 for r in gold_yes if r["metrics"]["correct"]), len(gold_yes)),
            _share(sum(1 for r in gold_no if r["metrics"]["correct"]), len(gold_no)),
            _share(differ, len(pairs)),
            _mean([r["metrics"].get("faithfulness") for r in ok]),
            _mean([r["metrics"].get("evidence_recall") for r in ok]),
            _mean([r["metrics"].get("evidence_precision") for r in ok]),
        ]))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--answerer", default="llm")
    args = ap.parse_args()
    if not (args.run_dir / "samples.jsonl").exists():
        print(f"{args.run_dir}: no samples.jsonl", file=sys.stderr)
        return 2
    print("\n".join(findings(args.run_dir, args.answerer)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
