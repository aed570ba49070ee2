"""The LLM judge and the self-check over real HTTP: the official openai client against the local test server."""
import doctest
import importlib
import json

import pytest

from benchmark.judge.agreement import summarise
from benchmark.judge.llm_judge import LLMJudge
from benchmark.review.agreement import cohen_kappa
from llm_server import LLMServer
from test_validate import run as cli


@pytest.mark.parametrize("name", ["benchmark.judge.prompt", "benchmark.judge.agreement", "benchmark.judge.llm_judge",
                                  "benchmark.judge.selfcheck", "benchmark.judge.apply", "benchmark.metrics.citations",
                                  "benchmark.answerers.chat"])
def test_doctests(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0


def record(sid, claims, context="User -> Cache\nCache -> DB", explanation="", answerer="llm", **answer):
    return {"sample_id": sid, "answerer": answerer, "variant": "v", "question_id": sid,
            "question": {"text": "Can User reach DB?"}, "context": {"text": context},
            "answer": dict({"raw": "yes", "error": None, "explanation": explanation, "evidence": [], "meta": {}}, **answer),
            "metrics": {"claims": claims}}


def claim(src, dst, verdict, kind="edge"):
    return {"kind": kind, "src": src, "dst": dst, "text": f"{src} -> {dst}", "verdict": verdict}


def labels_reply(*labels, added=()):
    items = [{"id": i, "claim": "c", "source": "a", "target": "b", "label": lab} for i, lab in enumerate(labels, 1)]
    items += [{"id": None, "claim": "extra", "source": "x", "target": "y", "label": lab} for lab in added]
    return json.dumps({"claims": items})


@pytest.fixture
def judge_for(tmp_path):
    sleeps = []

    def make(server, **kw):
        opts = dict(base_url=server.base_url, model="judge-model", max_attempts=2, backoff_s=0.1, timeout_s=5,
                    cache_path=tmp_path / "judge.sqlite", sleep=sleeps.append)
        opts.update(kw)
        return LLMJudge(**opts)

    return make


def test_a_valid_judgement_labels_the_structural_claims(judge_for):
    rec = record("s1", [claim("User", "Cache", "supported"), claim("Cache", "Moon", "fabricated")],
                 explanation="User calls Cache.")
    with LLMServer([{"content": "Here you go:\n```json\n" + labels_reply("supported", "not_in_context",
                                                                            added=["contradicted"]) + "\n```"}]) as server:
        row = judge_for(server).judge_record(rec)
    assert row["status"] == "judged" and row["model"] == "judge-model"
    assert [(c["label"], c["structural"], c["kind"]) for c in row["claims"]] == [
        ("supported", "supported", "edge"), ("not_in_context", "fabricated", "edge"), ("contradicted", None, "added")]
    req = server.requests[0]["json"]
    system, user = (m["content"] for m in req["messages"])
    assert "User -> Cache\nCache -> DB" in system and "1. User -> Cache (an arrow the answer cites)" in user
    assert "2. Cache -> Moon" in user and "Explanation: User calls Cache." in user
    fmt = req["response_format"]
    assert fmt["json_schema"]["name"] == "diagqa_judgement"
    assert fmt["json_schema"]["schema"]["properties"]["claims"]["items"]["properties"]["label"]["enum"] == [
        "supported", "contradicted", "not_in_context"]
    assert row["usage"]["calls"] == 1 and row["usage"]["prompt_tokens"] == 11 and row["meta"]["repairs"] == 0


def test_invalid_judge_output_is_sent_back_and_then_is_an_error_never_a_score(judge_for):
    rec = record("s1", [claim("User", "Cache", "supported"), claim("Cache", "DB", "supported")])
    bad = [{"content": "I think both are fine."}, {"content": labels_reply("supported")},   # prose; claim 2 missing
           {"content": json.dumps({"claims": [{"id": 1, "claim": "c", "source": "a", "target": "b", "label": "yes"}]})}]
    with LLMServer(bad) as server:
        row = judge_for(server, repairs=2).judge_record(rec)
    assert server.calls == 3   # the first request and two repairs
    assert row["status"] == "error" and row["error_kind"] == "unparsable" and "claims" not in row
    assert "label 'yes' is not one of" in row["error"] and row["meta"]["repairs"] == 2
    second = server.requests[1]["json"]["messages"]
    assert second[-2] == {"role": "assistant", "content": "I think both are fine."}
    assert "could not be used: no JSON object with 'claims'" in second[-1]["content"]
    assert "listed claim 2 is not labelled" in server.requests[2]["json"]["messages"][-1]["content"]
    s = summarise([row])["all"]
    assert s["claims"] == 0 and s["kappa"] is None and s["errors"] == {"unparsable": 1}   # counted, not scored


def test_a_repaired_reply_is_used_and_cached_under_the_first_request(judge_for, tmp_path):
    rec = record("s1", [claim("User", "Cache", "supported")])
    with LLMServer([{"content": "{not json"}, {"content": labels_reply("supported")}]) as server:
        judge = judge_for(server)
        row = judge.judge_record(rec)
        again = judge.judge_record(rec)
        assert server.calls == 2   # the second judgement came from the cache
    assert row["status"] == "judged" and row["meta"]["repairs"] == 1 and row["usage"]["calls"] == 2
    assert again["status"] == "judged" and again["meta"]["cached"] is True and again["claims"] == row["claims"]


def test_a_hanging_judge_is_a_timeout_error_and_the_breaker_stops_asking(judge_for):
    recs = [record(f"s{i}", [claim("User", "Cache", "supported")], explanation=f"e{i}") for i in range(3)]
    with LLMServer([{"delay": 3, "content": labels_reply("supported")}] * 3) as server:
        judge = judge_for(server, timeout_s=0.3, deadline_s=0.6, max_attempts=1, breaker_after=2)
        rows = [judge.judge_record(r) for r in recs]
    assert [r["status"] for r in rows] == ["error"] * 3
    assert [r["error_kind"] for r in rows] == ["timeout", "timeout", "not_attempted"]
    assert all(r["meta"]["latency_s"] < 2.5 for r in rows[:2]) and server.calls == 2


def test_samples_with_nothing_to_judge_are_not_sent():
    with LLMServer() as server:
        judge = LLMJudge(base_url=server.base_url, model="m", cache_path=None)
        rows = [judge.judge_record(record("a", [])),
                judge.judge_record(record("b", [claim("A", "B", "supported")], error="HTTP 500", raw=None)),
                judge.judge_record(record("c", [claim("A", "B", "supported")], meta={"input": "image"}))]
    assert server.calls == 0 and [r["status"] for r in rows] == ["not_judged"] * 3
    assert rows[0]["reason"].startswith("nothing to judge") and rows[1]["reason"] == "the answer is an error"


def test_agreement_on_a_constructed_case_has_the_known_kappa(judge_for):
    # 10 claims over 5 answers; judge vs structure: 4 both supported, 3 both not, 2 judge-only, 1 structure-only
    # p_o = 0.7; judge says supported 6/10, structure 5/10; p_e = 0.6*0.5 + 0.4*0.5 = 0.5; kappa = 0.4
    cases = [([("A", "B", "supported"), ("B", "C", "supported")], ["supported", "supported"]),
             ([("A", "C", "supported"), ("C", "D", "supported")], ["supported", "contradicted"]),
             ([("D", "E", "unsupported"), ("E", "F", "fabricated")], ["not_in_context", "not_in_context"]),
             ([("F", "G", "fabricated"), ("G", "H", "unsupported")], ["supported", "supported"]),
             ([("H", "I", "unsupported"), ("I", "J", "supported")], ["contradicted", "supported"])]
    recs = [record(f"s{i}", [claim(*c) for c in cs]) for i, (cs, _) in enumerate(cases)]
    replies = {f"1. {cs[0][0]} -> {cs[0][1]}": labels_reply(*labs) for cs, labs in cases}

    def responder(req):
        user = req["messages"][1]["content"]
        return next(r for key, r in replies.items() if key in user)

    with LLMServer(responder=responder, latency=0.05) as server:
        rows = judge_for(server, concurrency=3).judge_many(recs)
    assert [r["sample_id"] for r in rows] == [f"s{i}" for i in range(5)] and server.max_in_flight > 1
    s = summarise(rows, seed=0)["all"]
    assert s["claims"] == 10 and s["observed"] == 0.7 and s["kappa"] == 0.4
    assert s["kappa_low"] < 0.4 < s["kappa_high"]
    pairs = [(c["label"] == "supported", c["structural"] == "supported") for r in rows for c in r["claims"]]
    assert round(cohen_kappa([p[0] for p in pairs], [p[1] for p in pairs]), 4) == 0.4
    conf = s["confusion"]
    assert conf["supported"] == {"supported": 4, "unsupported": 1, "fabricated": 1}
    assert conf["contradicted"] == {"supported": 1, "unsupported": 1, "fabricated": 0}
    assert conf["not_in_context"] == {"supported": 0, "unsupported": 1, "fabricated": 1}


def test_a_key_in_the_judge_options_is_refused():
    from benchmark.errors import DiagQAError

    with pytest.raises(DiagQAError, match="judge: an API key must not be written"):
        LLMJudge(base_url="http://127.0.0.1:9/v1", model="m", api_key="sk-x")


# -- the whole pass over a run: `diagqa judge RUN` --------------------------------------------------

def _model(request):
    """The answerer under test: cites the context's first arrow and an arrow the diagram lacks; sampled
    (temperature > 0) it says yes on even seeds and no on odd ones."""
    system = request["messages"][0]["content"]
    if "You check an answer" in system:   # the judge: a perfect one, reading the context lines
        def norm(text):   # the names as the structural check matches them (case, a trailing "?")
            return text.replace("?", "").casefold()

        ctx = {norm(line.split(" [")[0]) for line in system.split("Context:\n", 1)[1].splitlines()}
        items = []
        for line in request["messages"][1]["content"].splitlines():
            if line[:1].isdigit() and ". " in line:
                n, rest = line.split(". ", 1)
                arrow = rest.split(" (", 1)[0]
                items.append({"id": int(n), "claim": arrow, "source": arrow.split(" -> ")[0],
                              "target": arrow.split(" -> ")[-1],
                              "label": "supported" if norm(arrow) in ctx else "not_in_context"})
        return json.dumps({"claims": items})
    first = system.split("Context:\n", 1)[1].splitlines()[0]
    src, _, rest = first.partition(" -> ")
    evidence = ([[src, rest.split(" [")[0]]] if rest else []) + [["Moon", "Mars"]]
    answer = "yes"
    if request.get("temperature", 0) > 0:
        answer = "yes" if request["seed"] % 2 == 0 else "no"
    return json.dumps({"answer": answer, "evidence": evidence, "explanation": ""})


@pytest.fixture
def judged_run(tmp_path, monkeypatch):
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    server = LLMServer(responder=_model).start()
    spec = RunSpec(variants=("oracle+d2+oracle", "oracle+d2+none"), answerers=("llm", "solver"),
                   out_dir=tmp_path / "results", workers=1, limit=6, run_id="j",
                   options={"llm": {"base_url": server.base_url, "model": "m", "explanation_chars": 0}})
    run(spec, progress=False, quiet=True)
    cfg = tmp_path / "judge.yaml"
    cfg.write_text(f"judge:\n  base_url: {server.base_url}\n  model: judge-m\n  concurrency: 2\n"
                   "selfcheck:\n  k: 3\n  temperature: 0.7\n  answerers: [llm]\n")
    yield tmp_path / "results" / "j", cfg, server
    server.stop()


def test_diagqa_judge_over_a_run_writes_rows_agreement_citations_and_the_report_section(judged_run):
    run_dir, cfg, server = judged_run
    rc, out, err = cli("judge", str(run_dir), "--config", str(cfg))
    assert rc == 0, err
    rows = [json.loads(line) for line in (run_dir / "judge.jsonl").open()]
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").open()]
    assert sorted(r["sample_id"] for r in rows) == sorted(s["sample_id"] for s in samples)
    judged = [r for r in rows if r["status"] == "judged"]
    assert judged and all(r["status"] in ("judged", "not_judged") for r in rows)
    # a perfect judge on the context: agreement with the structural check is total
    summary = json.loads((run_dir / "judge.json").read_text())
    a = summary["judge"]["all"]
    assert a["kappa"] == 1.0 and a["observed"] == 1.0 and a["claims"] == sum(len(r["claims"]) for r in judged)
    assert a["confusion"]["not_in_context"]["fabricated"] > 0 and a["confusion"]["supported"]["supported"] > 0
    # the citation check: every llm answer cites Moon -> Mars, which no context or diagram holds
    llm = summary["citations"]["llm"]
    assert llm["answers"] == 12 and llm["failing"] == 12 and llm["not_in_diagram"] == 12
    assert summary["citations"]["solver"]["failing"] == 0
    report = (run_dir / "report.md").read_text()
    assert "## Citation check, LLM judge and self-check" in report and "kappa 1.00" in report
    assert "Judge agreement with the structural check, per answerer" in report and "Self-check per answerer" in report
    assert (run_dir / "judge.md").read_text().startswith("# diagqa judge — j")
    assert "kappa 1.0" in out


def test_self_check_asks_k_seeded_repeats_and_counts_unstable_right_answers(judged_run):
    run_dir, cfg, server = judged_run
    before = server.calls
    rc, _, err = cli("judge", str(run_dir), "--config", str(cfg), "--no-report")
    assert rc == 0, err
    sampled = [r["json"] for r in server.requests[before:] if r["json"].get("temperature", 0) > 0]
    assert len(sampled) == 3 * 12 and sorted({r["seed"] for r in sampled}) == [1, 2, 3]
    assert all(r["temperature"] == 0.7 for r in sampled)
    rows = [json.loads(line) for line in (run_dir / "selfcheck.jsonl").open()]
    assert len(rows) == 12 and all(r["answerer"] == "llm" for r in rows)
    assert any(r["recorded"] == "true" for r in rows)   # yes/no questions among them
    for r in rows:   # seeds 1, 2, 3 say no, yes, no; the recorded answer (temperature 0) is yes
        no, yes, no_again = (x["value"] for x in r["repeats"])
        assert no == no_again != yes == r["recorded"]
        assert r["agreement"] == 0.3333 and r["consistent"] is False
        assert r["unstable_right"] is (r["correct"] is True)
    s = json.loads((run_dir / "judge.json").read_text())["selfcheck"]["answerers"]["llm"]
    right = sum(r["correct"] is True for r in rows)
    assert s["checked"] == 12 and s["consistency"] == 0.0 and s["unstable_right"] == right == s["right_checked"]
    # a second pass is served from the cache: same rows, no new sampled request
    calls = server.calls
    cli("judge", str(run_dir), "--config", str(cfg), "--no-report")
    assert server.calls == calls
    assert [json.loads(line) for line in (run_dir / "selfcheck.jsonl").open()] == [
        dict(r, repeats=[dict(x, cache_hit=True) for x in r["repeats"]]) for r in rows]


def test_a_run_config_with_judge_and_selfcheck_runs_them_after_the_run(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    with LLMServer(responder=_model) as server:
        cfg = tmp_path / "run.yaml"
        cfg.write_text("variants: [oracle+d2+khop1]\nanswerers: [llm]\nlimit: 3\nworkers: 1\n"
                       f"options:\n  llm: {{base_url: '{server.base_url}', model: m, explanation_chars: 0}}\n"
                       f"judge: {{base_url: '{server.base_url}', model: judge-m, max_samples: 2}}\n"
                       "selfcheck: {k: 2, temperature: 0.5}\n")
        rc, out, err = cli("run", "--config", str(cfg), "--out", str(tmp_path / "results"), "--run-id", "r",
                           "--no-progress")
    assert rc == 0, err
    run_dir = tmp_path / "results" / "r"
    assert out.strip() == str(run_dir / "report.html") and "judge kappa" in err
    card = json.loads((run_dir / "run.json").read_text())
    assert card["config"]["judge"]["model"] == "judge-m" and card["config"]["selfcheck"]["k"] == 2
    summary = json.loads((run_dir / "judge.json").read_text())
    assert summary["judge"]["all"]["samples"] == 2 and summary["judge"]["choice"]["max_samples"] == 2
    assert summary["selfcheck"]["answerers"]["llm"]["samples"] == 3
    assert "## Citation check, LLM judge and self-check" in (run_dir / "report.md").read_text()


def test_a_key_in_the_run_configs_judge_is_refused_before_anything_is_written(tmp_path):
    cfg = tmp_path / "run.yaml"
    cfg.write_text("variants: [oracle+d2+khop1]\nanswerers: [solver]\njudge: {model: m, api_key: sk-x}\n")
    rc, _, err = cli("run", "--config", str(cfg), "--out", str(tmp_path / "results"), "--run-id", "r")
    assert rc == 2 and "judge.api_key: an API key must not be written" in err
    assert not (tmp_path / "results" / "r").exists()


# -- the decision layer consults the judge only inside the uncertainty window -----------------------

def _decision_record(i, answer, claims=(0, 0, 0)):
    n, unsup, fab = claims
    return {"sample_id": f"q{i}|v|llm", "answerer": "llm", "variant": "v", "question_id": f"q{i}",
            "question": {"text": "Does Auth Service read Users DB?"}, "context": {"text": "Auth Service -> Users DB [reads]"},
            "answer": {"raw": "yes", "explanation": answer, "evidence": [], "error": None},
            "metrics": {"correct": True, "sufficient": None, "n_claims": n, "claims_unsupported": unsup,
                        "claims_fabricated": fab, "error": None, "abstained": False}, "error": None}


def _encoder(texts):
    """Context, question and the 'close' answer point one way; a 'far' answer at cosine 0.5 from them."""
    import numpy as np

    return np.array([[0.5, 0.75 ** 0.5] if "far" in t else [1.0, 0.0] for t in texts], dtype=np.float32)


def test_the_decision_layer_consults_the_judge_only_on_uncertain_text_decisions():
    from benchmark.decision.apply import decide_records
    from benchmark.decision.config import DecisionConfig

    recs = [_decision_record(1, "Auth Service reads Users DB."),                  # composite 0.89: no judge
            _decision_record(2, "far: Auth Service reads Users DB."),             # composite in the window: judge
            _decision_record(3, "far: Auth Service reads Users DB!", claims=(1, 1, 0)),   # uncertain, but G3 decides
            _decision_record(4, "far: Auth Service reads the Users DB."),         # in the window, the judge failed
            _decision_record(5, "far, Auth Service reads Users DB.")]             # in the window, a contradiction
    verdicts = {"q2|v|llm": {"status": "judged", "claims": [{"label": "supported"}, {"label": "supported"}]},
                "q4|v|llm": {"status": "error", "error_kind": "unparsable"},
                "q5|v|llm": {"status": "judged", "claims": [{"label": "supported"}, {"label": "contradicted"}]}}
    asked = []

    def judge(records):
        asked.extend(r["sample_id"] for r in records)
        return [verdicts.get(r["sample_id"]) for r in records]

    rows = {r["sample_id"]: r for r in decide_records(recs, encode=_encoder, judge=judge, signals="all").rows}
    assert asked == ["q2|v|llm", "q4|v|llm", "q5|v|llm"]   # once, with exactly the uncertain text decisions
    assert not rows["q1|v|llm"]["uncertain"] and "judge" not in rows["q1|v|llm"]
    assert rows["q3|v|llm"]["uncertain"] and rows["q3|v|llm"]["rule"] == "G3" and "judge" not in rows["q3|v|llm"]
    q2, q4, q5 = rows["q2|v|llm"], rows["q4|v|llm"], rows["q5|v|llm"]
    assert 0.45 <= q2["signals"]["composite"] < 0.65
    assert (q2["verdict"], q2["rule"], q2["confidence"]) == ("ACCEPT", "J3", 0.8)
    assert q2["judge"] == {"consulted": True, "status": "judged", "labels": {"supported": 2},
                           "heuristic_rule": "T9", "heuristic_verdict": "REVIEW"}
    assert (q4["verdict"], q4["rule"]) == ("REVIEW", "T9") and q4["judge"]["error_kind"] == "unparsable"
    assert (q5["verdict"], q5["rule"], q5["failure"]) == ("REJECT", "J1", "judge_contradicted")
    asked.clear()
    off = decide_records(recs, DecisionConfig(use_judge=False), encode=_encoder, judge=judge).rows
    assert asked == [] and [r["rule"] for r in off] == ["accept", "T9", "G3", "T9", "T9"]
    narrow = decide_records(recs, DecisionConfig(uncertain_low=0.30, uncertain_high=0.55), encode=_encoder, judge=judge)
    assert asked == [] and not any("judge" in r for r in narrow.rows)   # the window is configurable


def test_the_decision_layer_asks_a_live_judge_only_for_what_judge_jsonl_lacks(tmp_path, judge_for):
    from benchmark.judge.apply import JUDGE_ROWS, stored_or_asked

    (tmp_path / JUDGE_ROWS).write_text(json.dumps({"sample_id": "a", "status": "judged", "claims": []}) + "\n")
    recs = [record("a", [claim("User", "Cache", "supported")]), record("b", [claim("User", "Cache", "supported")])]
    with LLMServer([{"content": labels_reply("contradicted")}]) as server:
        rows = stored_or_asked(tmp_path, {"base_url": server.base_url, "model": "judge-m", "cache_path": None})(recs)
    assert server.calls == 1 and [r["sample_id"] for r in rows] == ["a", "b"]
    assert rows[0]["claims"] == [] and rows[1]["claims"][0]["label"] == "contradicted"
    stored = [json.loads(line)["sample_id"] for line in (tmp_path / JUDGE_ROWS).open()]
    assert stored == ["a", "b"]
    assert stored_or_asked(tmp_path)([record("c", [])]) == [None]   # no judge given: nothing is asked


def test_claims_past_the_cap_are_counted_not_sent(judge_for):
    from benchmark.judge.prompt import MAX_LISTED

    rec = record("s1", [claim(f"N{i}", f"N{i + 1}", "supported") for i in range(MAX_LISTED + 3)])
    with LLMServer([{"content": labels_reply(*["supported"] * MAX_LISTED)}]) as server:
        row = judge_for(server).judge_record(rec)
    user = server.requests[0]["json"]["messages"][1]["content"]
    assert f"{MAX_LISTED}. N{MAX_LISTED - 1} -> N{MAX_LISTED}" in user and f"{MAX_LISTED + 1}. " not in user
    assert row["status"] == "judged" and len(row["claims"]) == MAX_LISTED and row["unlisted"] == 3
