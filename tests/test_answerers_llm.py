"""The llm answerer over real HTTP: the official openai client against a local scripted server."""
import base64
import json
import sqlite3
import time

import pytest

from benchmark.answerers.cache import ReplyCache, request_key
from benchmark.answerers.llm import LLMAnswerer, build_messages, parse_reply
from benchmark.answerers.llm_http import Pace
from benchmark.context import make_context
from benchmark.dataset import DEFAULT_ROOT
from benchmark.errors import DiagQAError, StageUnavailable
from benchmark.graph import build_graph, whole
from benchmark.metrics import error_kind, score_sample
from benchmark.questions import Question
from llm_server import LLMServer, completion

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


def _items(n):
    qs = [Question(f"q{i}", "x", f"Can User reach DB ({i})?", "reachable", (("source", "u"), ("target", "d")), True,
                   whole(G)) for i in range(n)]
    return [(q, CTX, None) for q in qs]


def test_success_over_real_http(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.error is None and a.error_kind is None and a.raw == "yes"
    assert a.evidence == (("User", "Cache"), ("Cache", "DB"))
    assert a.meta["cached"] is False and a.meta["attempts"] == 1 and a.meta["tokens"]["total_tokens"] == 18
    assert a.usage["prompt_tokens"] == 11 and a.usage["completion_tokens"] == 7 and a.usage["calls"] == 1
    assert a.usage["cache_hit"] is False and a.usage["latency_s"] > 0 and "cost" not in a.usage
    req = server.requests[0]
    assert req["json"]["model"] == "test-model" and req["json"]["temperature"] == 0.0
    system, user = (m["content"] for m in req["json"]["messages"])
    assert "User -> Cache" in system and '"yes" or "no"' in user and user.startswith(Q.text)
    fmt = req["json"]["response_format"]   # structured output: the answer schema of the question's kind
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["schema"]["properties"]["answer"]["enum"] == ["yes", "no", "cannot tell"]
    assert req["headers"]["authorization"] == f"Bearer {SECRET}"   # the key is used ...
    s = score_sample(Q, G, whole(G), CTX, a)
    assert s["correct"] and s["faithfulness"] == 1.0 and s["guess_class"] == "grounded"


def test_llama_cpp_form_of_structured_output(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        answerer_for(server, response_format="json_object_schema", explanation_chars=0).answer(Q, CTX)
    fmt = server.requests[0]["json"]["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["required"] == ["answer", "evidence"]
    assert "explanation" not in server.requests[0]["json"]["messages"][0]["content"]


def test_endpoint_without_structured_output_falls_back_to_lenient_parsing(answerer_for):
    with LLMServer(reject_response_format=True, responder=lambda req: "Sure:\n```json\n" + GOOD + "\n```") as server:
        answerer = answerer_for(server)
        first = answerer.answer(Q, CTX)
        second = answerer.answer(Q, make_context("x", whole(G).__class__(), G))
    assert first.raw == "yes" and second.raw == "yes" and first.meta["structured"] is False
    assert ["response_format" in r["json"] for r in server.requests] == [True, False, False]


def test_structured_output_fallback_with_requests_in_flight(answerer_for):
    with LLMServer(reject_response_format=True, latency=0.5, responder=lambda req: GOOD) as server:
        answers = answerer_for(server, concurrency=4, cache_path=None).answer_many(_items(8))
    assert [a.raw for a in answers] == ["yes"] * 8   # the requests rejected while in flight were asked again


def test_retry_after_500_and_429_with_backoff(answerer_for):
    with LLMServer([{"status": 500}, {"status": 429}, {"content": GOOD}]) as server:
        answerer = answerer_for(server)
        a = answerer.answer(Q, CTX)
    assert a.error is None and a.raw == "yes" and a.meta["attempts"] == 3 and server.calls == 3
    assert a.usage["calls"] == 3
    assert answerer_for.sleeps == [0.5, 1.0]  # exponential backoff


def test_retry_after_header_is_honoured_up_to_the_cap_then_given_up(answerer_for):
    with LLMServer([{"status": 429, "headers": {"Retry-After": "7"}}, {"status": 503, "headers": {"Retry-After": "99"}},
                    {"content": GOOD}]) as server:
        a = answerer_for(server, max_retry_after_s=30).answer(Q, CTX)
        assert server.calls == 2   # no third call: 99 s is past the cap, so it gave up instead of waiting
    assert answerer_for.sleeps == [7.0]
    assert a.raw is None and a.error_kind == "http_error" and "retry after 99 s" in a.error


def test_429_within_the_cap_waits_and_succeeds(answerer_for):
    with LLMServer([{"status": 429, "headers": {"Retry-After": "2"}}, {"content": GOOD}]) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.raw == "yes" and answerer_for.sleeps == [2.0]


def test_rate_limited_for_good_is_an_error_of_its_kind(answerer_for):
    with LLMServer([{"status": 429}] * 3) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.raw is None and a.error_kind == "rate_limited" and server.calls == 3


def test_all_500_gives_errors_not_answers(answerer_for):
    with LLMServer(responder=None, script=[{"status": 500}] * 4) as server:
        a = answerer_for(server, max_attempts=4).answer(Q, CTX)
    assert a.raw is None and a.error_kind == "http_error" and "HTTP 500 after 4 attempt(s)" in a.error
    assert a.usage["calls"] == 4 and server.calls == 4


def test_client_errors_are_not_retried(answerer_for):
    with LLMServer([{"status": 400}, {"content": GOOD}]) as server:
        a = answerer_for(server).answer(Q, CTX)
    assert a.error.startswith("HTTP 400 after 1 attempt(s)") and server.calls == 1


def test_slow_reply_times_out_then_retries(answerer_for):
    with LLMServer([{"content": GOOD, "delay": 2.0}, {"content": GOOD}]) as server:
        a = answerer_for(server, timeout_s=0.5).answer(Q, CTX)
    assert a.error is None and a.raw == "yes" and a.meta["attempts"] == 2


def test_a_hanging_server_costs_the_deadline_not_attempts_times_timeout(answerer_for):
    with LLMServer([{"content": GOOD, "delay": 30}] * 4) as server:
        t = time.monotonic()
        a = answerer_for(server, timeout_s=20, deadline_s=1.0, max_attempts=4).answer(Q, CTX)
        elapsed = time.monotonic() - t
    assert a.raw is None and a.error_kind == "timeout" and server.calls == 1
    assert elapsed < 10   # bounded by the 1 s deadline, far below one 20 s read timeout


def test_a_trickling_server_is_cut_off_at_the_deadline(answerer_for):
    # one byte every 50 ms: each read succeeds, so only the overall deadline can end the request
    with LLMServer([{"content": GOOD, "trickle": 0.05}]) as server:
        t = time.monotonic()
        a = answerer_for(server, timeout_s=5, deadline_s=1.0, max_attempts=1).answer(Q, CTX)
        elapsed = time.monotonic() - t
    assert a.raw is None and a.error_kind == "timeout" and "deadline" in a.error
    assert elapsed < 5   # the whole body would take more than 12 s


def test_bounded_retries_record_an_error(answerer_for):
    with LLMServer([{"status": 503}] * 5) as server:
        a = answerer_for(server, max_attempts=2).answer(Q, CTX)
    assert a.raw is None and "HTTP 503 after 2 attempt(s)" in a.error and server.calls == 2


def test_oversized_reply_is_cut_off(answerer_for):
    big = json.dumps({"answer": "yes", "evidence": [], "explanation": "x" * 50_000})
    with LLMServer([{"content": big}]) as server:
        a = answerer_for(server, max_reply_bytes=10_000, max_attempts=1).answer(Q, CTX)
    assert a.raw is None and a.error_kind == "reply_too_large"


def test_cache_hit_makes_no_second_call_and_survives_a_new_answerer(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        first = answerer_for(server).answer(Q, CTX)
        again = answerer_for(server).answer(Q, CTX)  # a re-run: new instance, same cache file
        assert server.calls == 1
    assert again.meta["cached"] is True and again.raw == first.raw and again.evidence == first.evidence
    assert again.usage["cache_hit"] is True and again.usage["calls"] == 0


@pytest.mark.parametrize("step", [
    {"content": ""},
    {"body": json.dumps(dict(completion(""), choices=[{"index": 0, "message": {"role": "assistant", "content": None},
                                                        "finish_reason": "stop"}]))},
    {"content": "I think the answer is yes."},
    {"content": '{"answer": null, "evidence": []}'},
])
def test_empty_null_or_invalid_replies_are_errors_and_are_not_cached(answerer_for, step, tmp_path):
    with LLMServer([step, {"content": GOOD}]) as server:
        bad = answerer_for(server).answer(Q, CTX)
        good = answerer_for(server).answer(Q, CTX)   # a re-run asks again: the failure was not kept
        cached = answerer_for(server).answer(Q, CTX)
        assert server.calls == 2
    assert bad.raw is None and bad.error_kind == "unparsable"
    assert good.raw == "yes" and good.meta["cached"] is False and cached.meta["cached"] is True
    s = score_sample(Q, G, whole(G), CTX, bad)
    assert s["answer_reason"].startswith("answerer error")


def test_a_failure_cached_by_an_older_version_is_asked_again(answerer_for, tmp_path):
    with LLMServer([{"content": GOOD}]) as server:
        answerer = answerer_for(server)
        key = request_key("test-model", build_messages(Q, CTX.text), dict(answerer.params, response_format="json_schema"))
        ReplyCache(tmp_path / "llm.sqlite").put(key, "test-model", "not json", {}, 0.1)
        a = answerer.answer(Q, CTX)
        assert server.calls == 1
    assert a.raw == "yes" and a.meta["cached"] is False


def test_circuit_breaker_marks_the_rest_not_attempted(answerer_for):
    with LLMServer(script=[{"status": 500}] * 50) as server:
        answers = answerer_for(server, max_attempts=2, breaker_after=3).answer_many(_items(10))
        assert server.calls == 6   # 3 failed samples x 2 attempts, then no more calls
    kinds = [a.error_kind for a in answers]
    assert kinds.count("http_error") == 3 and kinds.count("not_attempted") == 7
    assert all(a.raw is None and a.usage["calls"] == 0 for a in answers if a.error_kind == "not_attempted")


def test_a_success_resets_the_breaker(answerer_for):
    with LLMServer(script=[{"status": 500}, {"status": 500}, {"content": GOOD}, {"status": 500}, {"status": 500},
                           {"content": GOOD}]) as server:
        answerer = answerer_for(server, max_attempts=1, breaker_after=3)
        answers = [answerer.answer(q, c) for q, c, _ in _items(6)]
    assert [a.error_kind for a in answers] == ["http_error", "http_error", None, "http_error", "http_error", None]


def test_unparsable_replies_do_not_trip_the_breaker(answerer_for):
    with LLMServer(responder=lambda req: "no json here") as server:
        answers = answerer_for(server, breaker_after=2).answer_many(_items(5))
        assert server.calls == 5
    assert {a.error_kind for a in answers} == {"unparsable"}


def test_concurrency_keeps_requests_in_flight(answerer_for):
    with LLMServer(latency=1.5) as server:   # long enough for eight threads to start on a busy machine
        answers = answerer_for(server, concurrency=8, cache_path=None).answer_many(_items(16))
        assert server.max_in_flight == 8 and server.calls == 16
    assert [a.raw for a in answers] == ["yes"] * 16


def test_concurrency_one_is_one_at_a_time_and_answers_keep_their_order(answerer_for):
    def echo(req):  # the answer names the question it was asked
        return json.dumps({"answer": req["messages"][1]["content"].split("(")[1].split(")")[0], "evidence": []})

    with LLMServer(responder=echo) as server:
        answers = answerer_for(server, cache_path=None).answer_many(_items(5))
        assert server.max_in_flight == 1
    assert [a.raw for a in answers] == ["0", "1", "2", "3", "4"]


def test_requests_per_minute_spaces_request_starts():
    now, slept = [100.0], []

    def sleep(s):
        slept.append(s)
        now[0] += s

    pace = Pace(120, clock=lambda: now[0], sleep=sleep)
    for _ in range(3):
        pace.wait()
    assert slept == [0.5, 0.5]


def test_cache_lives_under_diagqa_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "shared"))
    monkeypatch.chdir(tmp_path)
    with LLMServer([{"content": GOOD}]) as server:
        a = LLMAnswerer(base_url=server.base_url, model="test-model", api_key_env="NO_SUCH_KEY")
        a.answer(Q, CTX)
    assert a.config["cache_path"] == str(tmp_path / "shared" / "llm.sqlite")
    assert (tmp_path / "shared" / "llm.sqlite").exists() and not (tmp_path / ".cache").exists()


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
    assert a.raw is None and needle in a.error and a.error_kind
    s = score_sample(Q, G, whole(G), CTX, a)
    # a failed call is unmeasured (never a wrong answer), with its kind
    assert s["correct"] is None and s["guess_class"] == "error" and s["answer_reason"].startswith("answerer error")
    # the score carries the answerer's own kind of failure (a body that is no chat completion is an HTTP error)
    assert s["error"] == a.error_kind and a.error_kind in ("unparsable", "http_error")


def test_parse_reply_is_linear_on_hostile_text():
    # many unclosed braces and answer keys before the real object: found in a bounded number of passes
    text = "{" * 20_000 + '{"answer": ' * 20 + " prose " + '{"answer": "no", "evidence": [["A", "B"]]}'
    assert parse_reply(text) == ("no", (("A", "B"),), "")
    with pytest.raises(ValueError):
        parse_reply('{"answer": ' * 50_000)


def test_unreachable_endpoint_is_an_error(answerer_for):
    server = LLMServer()
    url = server.base_url
    server.stop()  # nothing listens there now
    a = answerer_for(server, base_url=url, max_attempts=2).answer(Q, CTX)
    assert a.raw is None and a.error_kind == "connection_error" and "ConnectError" in a.error


def test_key_never_reaches_cache_records_or_config(answerer_for, tmp_path):
    with LLMServer([{"status": 500}, {"content": GOOD}]) as server:
        answerer = answerer_for(server)
        a = answerer.answer(Q, CTX)
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert stored and SECRET.encode() not in stored
    assert SECRET not in json.dumps(a.to_json()) and SECRET not in json.dumps(answerer.config)
    assert answerer.config["api_key_env"] == "DIAGQA_TEST_KEY" and answerer.config["api_key_set"] is True


def test_a_reply_that_echoes_the_key_is_scrubbed(answerer_for, tmp_path):
    echo = json.dumps({"answer": "yes", "evidence": [["User", "Cache"]], "explanation": f"my key is {SECRET}"})
    with LLMServer([{"content": echo}, {"status": 400, "body": json.dumps({"error": {"message": f"bad key {SECRET}"}})}]) as server:
        answerer = answerer_for(server)
        a = answerer.answer(Q, CTX)
        b = answerer.answer(Q, make_context("x", whole(G).__class__(), G))
    assert a.explanation == "my key is ***" and SECRET not in json.dumps(a.to_json())
    assert b.error and SECRET not in b.error
    with sqlite3.connect(tmp_path / "llm.sqlite") as con:
        rows = con.execute("SELECT content FROM replies").fetchall()
    assert rows and all(SECRET not in r[0] for r in rows)


@pytest.mark.parametrize("options", [{"api_key": SECRET}, {"openai_api_key": SECRET}])
def test_a_key_in_the_options_is_refused(options):
    with pytest.raises(DiagQAError, match="must not be written into the run options"):
        LLMAnswerer(base_url="http://127.0.0.1:9/v1", model="m", **options)


def test_a_run_with_a_key_in_its_options_writes_nothing(tmp_path):
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    spec = RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), out_dir=tmp_path / "results", workers=1,
                   limit=2, run_id="k", options={"llm": {"model": "m", "base_url": "http://127.0.0.1:9/v1",
                                                         "api_key": SECRET}})
    with pytest.raises(DiagQAError, match="api_key_env"):
        run(spec, progress=False, quiet=True, report=False)
    assert not (tmp_path / "results" / "k").exists()


@pytest.mark.parametrize("name,refused", [("auth_token", True), ("openai_api_key", True), ("password", True),
                                           ("max_tokens", False), ("api_key_env", False)])
def test_secret_option_names_are_refused_and_counts_are_not(tmp_path, name, refused):
    from benchmark.spec import RunSpec, refuse_secrets

    spec = RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), out_dir=tmp_path, options={"llm": {name: "x"}})
    if refused:
        with pytest.raises(DiagQAError, match=f"options.llm.{name}: an API key must not be written"):
            refuse_secrets(spec)
    else:
        refuse_secrets(spec)


def test_image_input_sends_the_png_as_a_data_url(answerer_for):
    png = DEFAULT_ROOT / "diagrams" / "arch_api_gateway.png"
    with LLMServer([{"content": GOOD}, {"content": GOOD}]) as server:
        answerer_for(server, input="image", image_fit="none").answer(Q, CTX, image=png)
        answerer_for(server, input="image+text", image_fit="none").answer(Q, CTX, image=png)
    for req, with_text in zip(server.requests, (False, True)):
        system, user = req["json"]["messages"]
        assert ("User -> Cache" in system["content"]) is with_text and "attached image" in system["content"]
        text, image = user["content"]
        assert text["type"] == "text" and text["text"].startswith(Q.text)
        url = image["image_url"]["url"]
        assert image["type"] == "image_url" and url.startswith("data:image/png;base64,")
        assert base64.b64decode(url.split(",", 1)[1]) == png.read_bytes()


def test_image_input_finds_the_png_by_the_context_diagram(answerer_for, tmp_path):
    (tmp_path / "x.png").write_bytes(b"\x89PNG\r\n\x1a\nfake")
    with LLMServer([{"content": GOOD}]) as server:
        answerer_for(server, input="image", image_dir=tmp_path, image_fit="none").answer(Q, CTX)
    url = server.requests[0]["json"]["messages"][1]["content"][1]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == b"\x89PNG\r\n\x1a\nfake"


def test_image_input_tiles_a_wide_diagram_to_the_stated_input_size(answerer_for, tmp_path):
    import io
    import shutil

    from PIL import Image

    from benchmark import image_input

    for ext in ("png", "d2"):   # the PNG beside its D2 file: the label height is measured from it
        shutil.copy(DEFAULT_ROOT / "diagrams" / f"state_order.{ext}", tmp_path / f"state_order.{ext}")
    png = tmp_path / "state_order.png"
    with LLMServer([{"content": GOOD}]) as server:
        a = answerer_for(server, input="image").answer(Q, CTX, image=png)
    parts = server.requests[0]["json"]["messages"][1]["content"]
    images = [Image.open(io.BytesIO(base64.b64decode(p["image_url"]["url"].split(",", 1)[1])))
              for p in parts if p["type"] == "image_url"]
    plan = image_input.plan_for(png, tmp_path / "state_order.d2")
    assert len(images) == plan.tiles == a.meta["image_tiles"] > 1
    assert "overlapping tiles, 1 row(s) by" in parts[1]["text"]
    assert [im.size for im in images] == plan.tile_sizes()
    assert all(w * h <= image_input.MAX_PIXELS and max(w, h) <= image_input.MAX_ASPECT * min(w, h) + 1
               for w, h in (im.size for im in images))
    assert plan.label_px_input >= image_input.MIN_LABEL_PX    # 32 px labels, sent at least 12 px tall


def test_image_input_of_a_broken_png_is_an_error_answer(answerer_for, tmp_path):
    (tmp_path / "x.png").write_bytes(b"not a png at all")
    with LLMServer([{"content": GOOD}]) as server:
        a = answerer_for(server, input="image", image_dir=tmp_path).answer(Q, CTX)
    assert a.error and "not a PNG" in a.error and not server.requests


def test_bad_options_are_clear_errors():
    with pytest.raises(DiagQAError, match="input must be one of"):
        LLMAnswerer(model="m", input="video")
    with pytest.raises(DiagQAError, match="unknown option"):
        LLMAnswerer(model="m", temprature=0.1)
    with pytest.raises(DiagQAError, match="image_fit must be one of"):
        LLMAnswerer(model="m", image_fit="crop")


def test_cost_from_configured_prices(answerer_for):
    with LLMServer([{"content": GOOD}]) as server:
        a = answerer_for(server, price_per_1k_prompt=1.0, price_per_1k_completion=2.0).answer(Q, CTX)
    assert a.usage["cost"] == pytest.approx(11 / 1000 * 1.0 + 7 / 1000 * 2.0)


def test_without_a_model_the_stage_is_unavailable(monkeypatch):
    monkeypatch.delenv("DIAGQA_LLM_MODEL", raising=False)
    with pytest.raises(StageUnavailable, match="no model configured"):
        LLMAnswerer(base_url="http://127.0.0.1:9/v1")


def test_prompt_states_the_format_of_each_kind():
    q = Question("q", "x", "Which steps lead from User to DB?", "path", (("source", "u"), ("target", "d")), None, None)
    system, user = (m["content"] for m in build_messages(q, ""))
    assert "from the first step to the last" in user and "(empty: nothing was retrieved)" in system


def test_parse_reply_rejects_objects_without_answer():
    with pytest.raises(ValueError):
        parse_reply('{"evidence": []}')


def _model(request):  # answers "yes" citing the first context line, as JSON in a code fence
    system = request["messages"][0]["content"]
    line = system.split("Context:\n", 1)[1].splitlines()[0]
    src, _, rest = line.partition(" -> ")
    return "```json\n" + json.dumps({"answer": "yes", "evidence": [[src, rest.split(" [")[0]]] if rest else [],
                                     "explanation": ""}) + "\n```"


def test_a_run_through_the_runner_resumes_from_the_cache(tmp_path, monkeypatch):
    """A real run with the llm answerer against the local server; a second run makes no calls."""
    from benchmark.runner import run
    from benchmark.spec import RunSpec

    monkeypatch.setenv("DIAGQA_TEST_KEY", SECRET)
    options = {"llm": {"base_url": None, "model": "test-model", "api_key_env": "DIAGQA_TEST_KEY",
                       "cache_path": str(tmp_path / "cache" / "llm.sqlite"), "max_attempts": 2, "backoff_s": 0,
                       "concurrency": 4}}
    with LLMServer(responder=_model) as server:
        options["llm"]["base_url"] = server.base_url
        spec = dict(variants=("oracle+d2+oracle",), answerers=("llm", "solver"), out_dir=tmp_path / "results",
                    workers=1, limit=6, options=options)
        first = run(RunSpec(run_id="first", **spec), progress=False, quiet=True, report=False)
        calls = server.calls
        again = run(RunSpec(run_id="again", **spec), progress=False, quiet=True, report=False)
        assert server.calls == calls == 6
    llm = [r for r in first.records if r.answerer == "llm"]
    assert len(llm) == 6 and all(r.answer["error"] is None and r.metrics is not None for r in llm)
    assert all(r.answer["usage"]["calls"] == 1 and r.timings["answer_s"] > 0 for r in llm)
    assert all(r.metrics["n_claims"] >= 1 for r in llm if " -> " in r.context["text"])
    assert any(r.metrics["faithfulness"] == 1.0 for r in llm)
    assert [r.metrics for r in again.records] == [r.metrics for r in first.records]
    assert all(r.answer["meta"]["cached"] for r in again.records if r.answerer == "llm")
    assert [r.sample_id for r in again.records] == [r.sample_id for r in first.records]
    for path in (tmp_path / "results").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


def test_a_run_whose_llm_calls_all_fail_exits_non_zero(tmp_path, monkeypatch, capsys):
    """Every call answers HTTP 500: the samples carry the error, and `diagqa run` says so and exits 1 (a run
    in which every sample of an answerer failed has failed; a smaller share over the limit exits 3)."""
    from benchmark.cli import main

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    with LLMServer(script=[{"status": 500}] * 100) as server:
        cfg = tmp_path / "llm.yaml"
        cfg.write_text(json.dumps({"variants": ["oracle+d2+oracle"], "answerers": ["solver", "llm"], "limit": 6,
                                   "workers": 1, "options": {"llm": {"base_url": server.base_url, "model": "m",
                                                                     "max_attempts": 2, "backoff_s": 0,
                                                                     "breaker_after": 3}}}))
        rc = main(["run", "--config", str(cfg), "--out", str(tmp_path / "results"), "--run-id", "r", "--no-progress"])
        assert server.calls == 6   # 3 samples x 2 attempts, then the breaker
    err = capsys.readouterr().err
    assert rc == 1 and "answerer llm: 6 of 6 samples failed" in err and "not_attempted 3" in err
    assert "every sample of answerer llm failed" in err
    assert "answerer solver" not in err
    recs = [json.loads(line) for line in (tmp_path / "results" / "r" / "samples.jsonl").open()]
    llm = [r for r in recs if r["answerer"] == "llm"]
    assert sorted(r["answer"]["error_kind"] for r in llm) == ["http_error"] * 3 + ["not_attempted"] * 3
    assert all(r["answer"]["raw"] is None for r in llm)


def test_a_small_share_of_failures_is_tolerated(tmp_path, monkeypatch):
    from benchmark.cli import main

    monkeypatch.setenv("DIAGQA_CACHE", str(tmp_path / "cache"))
    with LLMServer(script=[{"content": "not json"}], responder=_model) as server:
        cfg = tmp_path / "llm.yaml"
        cfg.write_text(json.dumps({"variants": ["oracle+d2+oracle"], "answerers": ["llm"], "limit": 6, "workers": 1,
                                   "options": {"llm": {"base_url": server.base_url, "model": "m"}}}))
        args = ["run", "--config", str(cfg), "--out", str(tmp_path / "results"), "--no-progress"]
        assert main(args + ["--run-id", "a", "--max-error-share", "0.2"]) == 0   # 1 of 6 failed
        assert main(args + ["--run-id", "b", "--max-error-share", "0.1"]) == 0   # cached now: nothing failed


def test_the_prompt_explains_edge_kinds_only_when_the_context_marks_one():
    from benchmark.answerers.llm import KIND_NOTE, build_messages
    from benchmark.graph import Subgraph
    from benchmark.questions import Question

    q = Question("q", "d", "Can A reach C?", "reachable", (("source", "a"), ("target", "c")), False, Subgraph())
    marked = build_messages(q, "A -> B [sync] (data)\nB -> C")[0]["content"]
    plain = build_messages(q, "A -> B [sync]\nB -> C")[0]["content"]
    assert KIND_NOTE in marked and KIND_NOTE not in plain
    assert marked.replace("\n" + KIND_NOTE, "").replace(" (data)", "") == plain
