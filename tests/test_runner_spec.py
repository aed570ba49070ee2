"""Run specs: the default grid, YAML configs, command-line overrides and config errors."""
from __future__ import annotations

import datetime as dt

import pytest

from benchmark.errors import DiagQAError, InputError
from benchmark.spec import DEFAULT_CONFIG, RunSpec, Variant, build_spec, load_config, make_run_id, with_run_id

DEFAULT_VARIANTS = ["oracle+d2+none", "oracle+d2+full", "oracle+d2+oracle", "oracle+d2+khop1", "oracle+d2+khop2",
                    "oracle+d2+path", "oracle+d2+bm25-8", "oracle+d2+dense-8", "oracle+d2+d2chunks-5"]


def test_default_grid_lives_in_the_default_config():
    spec = build_spec()
    assert list(spec.variants)[: len(DEFAULT_VARIANTS)] == DEFAULT_VARIANTS
    assert spec.answerers[:3] == ("solver", "keyword", "blind")
    assert spec.seed == 0 and spec.workers >= 1
    assert load_config(DEFAULT_CONFIG)["variants"] == list(spec.variants)


def test_config_then_command_line_override(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("variants: [oracle+d2+khop2]\nanswerers: [solver]\nseed: 7\ndata: mydata\nlimit: 5\n")
    spec = build_spec(cfg)
    assert spec.variants == ("oracle+d2+khop2",) and spec.seed == 7 and spec.limit == 5
    assert spec.data_dir == (tmp_path / "mydata").resolve()  # relative to the config file
    spec = build_spec(cfg, answerers=["blind", "keyword"], seed=3)
    assert spec.answerers == ("blind", "keyword") and spec.seed == 3 and spec.variants == ("oracle+d2+khop2",)


@pytest.mark.parametrize("text, line, message", [
    ("variants: [oracle+d2+full]\nanswerer: [solver]\n", 2, "unknown key 'answerer'"),
    ("seed: zero\n", 1, "seed must be an integer"),
    ("variants: oracle+d2+full\n", 1, "variants must be a list"),
    ("variants: [a, b\n", 2, "not valid YAML"),
])
def test_config_errors_name_file_and_line(tmp_path, text, line, message):
    cfg = tmp_path / "bad.yaml"
    cfg.write_text(text)
    with pytest.raises(InputError) as err:
        load_config(cfg)
    assert err.value.file == str(cfg) and err.value.line == line and message in str(err.value)


def test_variant_names_and_spec_checks():
    assert Variant.parse("ocr-bm25+ocr+path") == Variant("ocr-bm25", "ocr", "path")
    with pytest.raises(DiagQAError, match="finder\\+source\\+selector"):
        Variant.parse("oracle+khop2")
    with pytest.raises(DiagQAError, match="listed twice"):
        RunSpec(variants=("oracle+d2+full", "oracle+d2+full"), answerers=("solver",))
    with pytest.raises(DiagQAError, match="at least one answerer"):
        RunSpec(variants=("oracle+d2+full",), answerers=())


def test_run_id_is_utc_time_plus_config_hash():
    a = RunSpec(variants=("oracle+d2+full",), answerers=("solver",))
    b = RunSpec(variants=("oracle+d2+full",), answerers=("solver",), seed=1)
    assert a.config_hash() != b.config_hash()
    assert RunSpec(variants=("oracle+d2+full",), answerers=("solver",), workers=4).config_hash() == a.config_hash()
    now = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.timezone.utc)
    assert with_run_id(a, now).run_id == make_run_id(a.config_hash(), now) == f"20260304T050607Z-{a.config_hash()[:8]}"
    assert with_run_id(RunSpec(variants=("oracle+d2+full",), answerers=("solver",), run_id="mine")).run_id == "mine"


def test_doctests_of_the_run_modules():
    import doctest

    import benchmark.records
    import benchmark.runner
    import benchmark.spec

    for mod in (benchmark.spec, benchmark.records, benchmark.runner):
        result = doctest.testmod(mod)
        assert result.failed == 0 and result.attempted > 0, mod.__name__


#: files in configs/ that configure something else than a run
NOT_RUN_CONFIGS = {"decision.yaml"}


@pytest.mark.parametrize("path", sorted(p for p in DEFAULT_CONFIG.parent.glob("*.yaml") if p.name not in NOT_RUN_CONFIGS),
                         ids=lambda p: p.name)
def test_every_shipped_config_names_registered_components(path):
    from benchmark.plugins import load_all
    from benchmark.stages import ANSWERERS, FINDERS, SELECTORS, SOURCES

    load_all()
    spec = build_spec(path)
    for v in spec.parsed_variants():
        assert v.finder in FINDERS and v.source in SOURCES and v.selector in SELECTORS, v.name
    assert all(a in ANSWERERS for a in spec.answerers)
    assert set(spec.options) <= set(spec.answerers) | {n for v in spec.parsed_variants() for n in (v.finder, v.source, v.selector)}


def test_run_list_names_every_stage(capsys):
    from benchmark.cli import main

    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    for name in ("finders:", "oracle", "sources:", "d2", "selectors:", "khop", "answerers:", "solver", "blind"):
        assert name in out


def test_executor_and_address_are_checked_and_leave_the_config_hash_alone(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("seed: 1\nexecutor: dask\n", encoding="utf-8")
    with pytest.raises(InputError, match="executor must be one of local, ray") as err:
        load_config(cfg)
    assert err.value.line == 2
    with pytest.raises(DiagQAError, match="give it with executor ray"):
        RunSpec(variants=("oracle+d2+full",), answerers=("solver",), address="auto")
    local = build_spec(None, variants=["oracle+d2+full"], answerers=["solver"])
    on_ray = build_spec(None, variants=["oracle+d2+full"], answerers=["solver"], executor="ray", address="auto")
    assert (local.executor, on_ray.executor, on_ray.address) == ("local", "ray", "auto")
    assert local.config_hash() == on_ray.config_hash()  # where a run runs does not change its samples
