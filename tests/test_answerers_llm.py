"""The llm answerer over real HTTP: the official openai client against a local scripted server."""
import json

import pytest

from benchmark.answerers.llm import LLMAnswerer, build_messages, parse_reply
from benchmark.context import make_context
from benchmark.errors import StageUnavailable
from benchmark.graph import build_graph, whole
from benchmark.metrics import error_kind, score_sample
from benchmark.questions import Question
from llm_server import LLMServer

SECRET = "sk-test-Zq81-never-store-me"
G = build_graph({"nodes": [{"id": "u", "label": "User"}, {"id": "c", "label": "Cache"}, {"id": "d", "label": "DB"}],
                 "edges": [{"src": "u", "dst": "c"}, {"src": "c", "dst": "d"}]})
CTX = make_context("x", whole(G), G)
Q = Question("q1", "x", "Can User reach DB?", "reachable", (("source", "u"), ("target", "d")), True,
             whole(G))
GOOD = json.dumps({"answer": "yes", "evidence": [["User", "Cache"], ["Cache", "DB"]],
                   "explanation": "User -> Cache -> DB"})


@pytest.fixture
def answerer_for(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGQA_TEST_KEY", SECRET)
    sleeps = []

    def make(server, **kw):
        opts = dict(base_url=server.base_url, model="test-model", api_key_env="DIAGQA_TEST_KEY", max_attempts=3,
                    backoff_s=0.5, timeout_s=5, cache_path=tmp_path / "llm.sqlite", sleep=sleeps.append)
        opts.update(kw)
        return LLMAnswerer(**opts)

    make.sleeps = sleeps
    return make


def test_success_over_real_http(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.error is None and a.raw == "yes"
    assert a.evidence == (("User", "Cache"), ("Cache", "DB"))
    assert a.meta["cached"] is False and a.meta["attempts"] == 1 and a.meta["tokens"]["total_tokens"] == 18
    req = server.requests[0]
    assert req["json"]["model"] == "test-model" and req["json"]["temperature"] == 0.0
    system = req["json"]["messages"][0]["content"]
    assert "User -> Cache" in system and '"yes" or "no"' in system
    assert req["json"]["messages"][1]["content"] == Q.text
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"   # the key is used ...
    s = score_sample(Q, G, whole(G), CTX, a)
    assert s["correct"] and s["faithfulness"] == 1.0 and s["guess_class"] == "grounded"


def test_retry_after_500_and_429_with_backoff(answerer_for):
    with LLMServer([{"status": 500}, {"status": 429}, {"content": GOOD}]) as server:
        answerer = answerer_for(server)
        a = answerer.answer(Q, CTX)
    assert a.error is None and a.raw == "yes" and a.meta["attempts"] == 3 and server.calls == 3
    assert answerer_for.sleeps == [0.5, 1.0]  # exponential backoff


def test_retry_after_header_is_respected_up_to_the_cap(answerer_for):
    with LLMServer([{"status": 429, "headers": {"Retry-After": "7"}}, {"status": 503, "headers": {"Retry-After": "99"}},
                    {"content": GOOD}]) as server:
        a = answerer_for(server, max_backoff_s=30).answer(Q, CTX)
    assert a.raw == "yes" and answerer_for.sleeps == [7.0, 30]


def test_bounded_retries_record_an_error(answerer_for):
    with LLMServer([{"status": 503}] * 5) as server:
        a = answerer_for(server, max_attempts=2).answer(Q, CTX)
    assert a.raw is None and "HTTP 503 after 2 attempt(s)" in a.error and server.calls == 2


def test_client_errors_are_not_retried(answerer_for):
    with LLMServer([{"status": 400}, {"content": GOOD}]) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.error.startswith("HTTP 400 after 1 attempt(s)") and server.calls == 1


def test_slow_reply_times_out_then_retries(answerer_for):
    with LLMServer([{"content": GOOD, "delay": 2.0}, {"content": GOOD}]) as server:
        a = answerer_for(server, timeout_s=0.5).answer(Q, CTX)
    assert a.error is None and a.raw == "yes" and a.meta["attempts"] == 2


def test_cache_hit_makes_no_second_call_and_survives_a_new_answerer(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        first = answerer_for(server).answer(Q, CTX)
        again = answerer_for(server).answer(Q, CTX)  # a re-run: new instance, same cache file
        assert server.calls == 1
    assert again.meta["cached"] is True and again.raw == first.raw and again.evidence == first.evidence


def test_different_context_is_a_different_request(answerer_for):
    with LLMServer() as server:
        answerer = answerer_for(server)
        answerer.answer(Q, CTX)
        answerer.answer(Q, make_context("x", whole(G).__class__(), G))
        assert server.calls == 2


@pytest.mark.parametrize("reply,expected", [
    ("```json\n" + GOOD + "\n```", "yes"),
    ("Here you go: " + GOOD + " -- done.", "yes"),
    ('{"answer": ["Cache"], "evidence": [], "explanation": ""}', ["Cache"]),
])
def test_lenient_parsing_of_replies(answerer_for, reply, expected):
    with LLMServer([{"content": reply}]) as server:
        assert answerer_for(server).answer(Q, CTX).raw == expected


@pytest.mark.parametrize("step,needle", [
    ({"content": "I think the answer is yes."}, "unparsable reply"),
    ({"content": '{"answer": "yes", "evidence": "User->DB"}'}, "unparsable reply"),
    ({"body": "{not json at all"}, "after 1 attempt"),
])
def test_bad_replies_are_recorded_as_errors_not_raised(answerer_for, step, needle):
    with LLMServer([step]) as server:
        a = answerer_for(server, max_attempts=1).answer(Q, CTX)
    assert a.raw is None and needle in a.error
    s = score_sample(Q, G, whole(G), CTX, a)
    # a failed call is unmeasured (never a wrong answer), with its kind
    assert s["correct"] is None and s["guess_class"] == "error" and s["answer_reason"].startswith("answerer error")
    assert s["error"] == "unparsable" and error_kind(a.error) == "unparsable"   # a reply that is no JSON answer


def test_unreachable_endpoint_is_an_error(answerer_for):
    server = LLMServer()
    url = server.base_url
    server.stop()  # nothing listens there now
    a = answerer_for(server, base_url=url, max_attempts=2).answer(Q, CTX)
    assert a.raw is None and "APIConnectionError" in a.error


def test_key_never_reaches_cache_records_or_config(answerer_for, tmp_path):
    with LLMServer([{"status": 500}, {"content": GOOD}]) as server:
        answerer = answerer_for(server)
        a = answerer.answer(Q, CTX)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert stored and SECRET.encode() not in stored
    assert SECRET not in json.dumps(a.to_json()) and SECRET not in json.dumps(answerer.config)
    assert answerer.config["api_key_env"] == "DIAGQA_TEST_KEY" and answerer.config["api_key_set"] is True


def test_without_a_model_the_stage_is_unavailable(monkeypatch):
    monkeypatch.delenv("DIAGQA_LLM_MODEL", raising=False)
    with pytest.raises(StageUnavailable, match="no model configured"):
        LLMAnswerer(base_url="http://127.0.0.1:9/v1")


def test_prompt_states_the_format_of_each_kind():
    q = Question("q", "x", "Which steps lead from User to DB?", "path", (("source", "u"), ("target", "d")), None, None)
    system = build_messages(q, "")[0]["content"]
    assert "from the first step to the last" in system and "(empty: nothing was retrieved)" in system


def test_parse_reply_rejects_objects_without_answer():
    with pytest.raises(ValueError):
        parse_reply('{"evidence": []}')


def test_a_run_through_the_runner_resumes_from_the_cache(tmp_path, monkeypatch):
    """A real run with the llm answerer against the local server; a second run makes no calls."""
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    monkeypatch.setenv("DIAGQA_TEST_KEY", SECRET)

    def model(request):  # answers "yes" citing the first context line, as JSON in a code fence
        system = request["messages"][0]["content"]
        line = system.split("Context:\n", 1)[1].splitlines()[0]
        src, _, rest = line.partition(" -> ")
        return "```json\n" + json.dumps({"answer": "yes", "evidence": [[src, rest.split(" [")[0]]] if rest else [],
                                         "explanation": ""}) + "\n```"

    options = {"llm": {"base_url": None, "model": "test-model", "api_key_env": "DIAGQA_TEST_KEY",
                       "cache_path": str(tmp_path / "cache" / "llm.sqlite"), "max_attempts": 2, "backoff_s": 0}}
    with LLMServer(responder=model) as server:
        options["llm"]["base_url"] = server.base_url
        spec = dict(variants=("oracle+d2+oracle",), answerers=("llm", "solver"), out_dir=tmp_path / "results",
                    workers=1, limit=6, options=options)
        first = run(RunSpec(run_id="first", **spec), progress=False, quiet=True, report=False)
        calls = server.calls
        again = run(RunSpec(run_id="again", **spec), progress=False, quiet=True, report=False)
        assert server.calls == calls == 6
    llm = [r for r in first.records if r.answerer == "llm"]
    assert len(llm) == 6 and all(r.answer["error"] is None and r.metrics is not None for r in llm)
    assert all(r.metrics["n_claims"] >= 1 for r in llm if " -> " in r.context["text"])
    assert any(r.metrics["faithfulness"] == 1.0 for r in llm)
    assert [r.metrics for r in again.records] == [r.metrics for r in first.records]
    assert all(r.answer["meta"]["cached"] for r in again.records if r.answerer == "llm")
    for path in (tmp_path / "results").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
