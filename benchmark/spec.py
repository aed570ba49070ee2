"""What a benchmark run is asked to do: :class:`RunSpec`, variant names and run configs.

The default grid lives in one place, ``configs/default.yaml``; a YAML config given with
``--config`` and then the command line override it key by key::

    data: path/to/dataset      # null = the bundled dataset
    variants: [oracle+d2+khop2, oracle+d2+bm25-8]
    answerers: [solver, blind]
    seed: 0
    workers: 2
    limit: null
    sample: null               # a stratified sample of this many questions (by type, chosen by seed)
    options: {llm: {base_url: "http://127.0.0.1:8000/v1", model: m}}
    judge: {base_url: "http://127.0.0.1:8000/v1", model: j}   # optional: `diagqa judge` after the run
    selfcheck: {k: 5, temperature: 0.7, answerers: [llm]}      # optional: likewise

>>> Variant.parse("oracle+d2+khop2")
Variant(finder='oracle', source='d2', selector='khop2')
>>> make_run_id("0123456789abcdef", _dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=_dt.timezone.utc))
'20260102T030405Z-01234567'
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from benchmark.dataset import DEFAULT_ROOT
from benchmark.errors import DiagQAError, InputError

#: the default run configuration (variants x answerers); image variants are added there too
DEFAULT_CONFIG = DEFAULT_ROOT / "configs" / "default.yaml"
CONFIG_KEYS = {"data", "variants", "answerers", "seed", "workers", "limit", "sample", "options", "out", "run_id",
               "allow_outside_imports", "executor", "address", "judge", "selfcheck"}

#: where a run's per-diagram work runs: ``local`` (this process, or a pool of processes) or ``ray`` (a Ray cluster)
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class Variant:
    """One retriever variant: a finder, a graph source and a selector, named ``finder+source+selector``."""

    finder: str
    source: str
    selector: str

    @property
    def name(self) -> str:
        return f"{self.finder}+{self.source}+{self.selector}"

    @classmethod
    def parse(cls, text: str) -> "Variant":
        parts = [p.strip() for p in str(text).split("+")]
        if len(parts) != 3 or not all(parts):
            raise DiagQAError(f"variant {text!r} must be finder+source+selector, e.g. oracle+d2+khop2")
        return cls(*parts)


@dataclass(frozen=True)
class RunSpec:
    """Everything that decides a run's samples. ``run_id`` None means ``<UTC time>-<config hash>``."""

    data_dir: Path = DEFAULT_ROOT
    variants: tuple[str, ...] = ()
    answerers: tuple[str, ...] = ()
    out_dir: Path = DEFAULT_ROOT / "results"
    run_id: str | None = None
    seed: int = 0
    workers: int = 1
    limit: int | None = None
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    config_file: str | None = None
    allow_outside_imports: bool = False   # D2 imports may leave the dataset folder
    sample: int | None = None
    executor: str = "local"               # where the work runs (EXECUTORS); does not change the samples
    address: str | None = None            # the Ray cluster (``auto``, ``ray://host:port``); None starts one here
    judge: dict[str, Any] | None = None      # the LLM judge run over the finished run (does not change the samples)
    selfcheck: dict[str, Any] | None = None  # the self-check run over the finished run (likewise)

    def __post_init__(self) -> None:
        for v in self.variants:
            Variant.parse(v)
        if not self.variants:
            raise DiagQAError("a run needs at least one variant (finder+source+selector)")
        if not self.answerers:
            raise DiagQAError("a run needs at least one answerer")
        if len(set(self.variants)) != len(self.variants) or len(set(self.answerers)) != len(self.answerers):
            raise DiagQAError("a variant or answerer is listed twice")
        if self.workers < 1:
            raise DiagQAError("workers must be at least 1")
        if self.limit is not None and self.limit < 0:
            raise DiagQAError("limit must not be negative")
        if self.sample is not None and self.sample < 1:
            raise DiagQAError("sample must be at least 1")
        if self.executor not in EXECUTORS:
            raise DiagQAError(f"executor {self.executor!r} is not one of {', '.join(EXECUTORS)}")
        if self.address is not None and self.executor != "ray":
            raise DiagQAError("an address is a Ray cluster's: give it with executor ray")
        if self.judge is not None:
            from benchmark.judge.apply import split_judge_options

            split_judge_options(self.judge)
        if self.selfcheck is not None:
            from benchmark.judge.selfcheck import SelfCheckConfig

            if not isinstance(self.selfcheck, dict):
                raise DiagQAError("selfcheck must be a mapping (k, temperature, seed, answerers)")
            SelfCheckConfig.from_mapping(self.selfcheck)

    def parsed_variants(self) -> list[Variant]:
        return [Variant.parse(v) for v in self.variants]

    def identity(self) -> dict[str, Any]:
        """The part of the spec that decides the samples (no paths to outputs, no worker count, no executor)."""
        ident = {"data": str(Path(self.data_dir).resolve()), "variants": list(self.variants),
                 "answerers": list(self.answerers), "seed": self.seed, "limit": self.limit,
                 "options": self.options, **({"sample": self.sample} if self.sample is not None else {})}
        if self.allow_outside_imports:   # absent when off, so earlier runs keep their hash
            ident["allow_outside_imports"] = True
        return ident

    def config_hash(self) -> str:
        """SHA-256 of :meth:`identity` as canonical JSON."""
        text = json.dumps(self.identity(), sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(text.encode()).hexdigest()

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["data_dir"], d["out_dir"] = str(self.data_dir), str(self.out_dir)
        d["variants"], d["answerers"] = list(self.variants), list(self.answerers)
        return d


def make_run_id(config_hash: str, now: _dt.datetime | None = None) -> str:
    """``<UTC timestamp>-<first 8 hex of the config hash>``."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return f"{now.astimezone(_dt.timezone.utc):%Y%m%dT%H%M%SZ}-{config_hash[:8]}"


def load_config(path: Path | str) -> dict[str, Any]:
    """Read a run config (YAML mapping); unknown keys and wrong types are errors naming file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text) or {}
        root = yaml.compose(text)
    except OSError as exc:
        raise InputError(f"cannot read config: {exc.strerror or exc}", file=str(path)) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=str(path),
                         line=mark.line + 1 if mark else None) from exc
    if not isinstance(data, dict):
        raise InputError("a run config must be a mapping", file=str(path), line=1)
    lines = {k.value: k.start_mark.line + 1 for k, _ in root.value} if isinstance(root, yaml.MappingNode) else {}
    for key, value in data.items():
        where = dict(file=str(path), line=lines.get(key))
        if key not in CONFIG_KEYS:
            raise InputError(f"unknown key {key!r}; allowed: {', '.join(sorted(CONFIG_KEYS))}", **where)
        if key in ("variants", "answerers") and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise InputError(f"{key} must be a list of names", **where)
        if key in ("seed", "workers", "limit", "sample") and value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise InputError(f"{key} must be an integer", **where)
        if key == "executor" and value is not None and value not in EXECUTORS:
            raise InputError(f"executor must be one of {', '.join(EXECUTORS)}, got {value!r}", **where)
        if key == "address" and value is not None and not isinstance(value, str):
            raise InputError("address must be a Ray address (auto, ray://host:port)", **where)
        if key == "options" and not (isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())):
            raise InputError("options must map a component name to its keyword arguments", **where)
        if key in ("judge", "selfcheck") and value is not None and not isinstance(value, dict):
            raise InputError(f"{key} must be a mapping of options", **where)
    if "data" in data and data["data"] is not None:
        data["data"] = str((path.parent / str(data["data"])).resolve()) if not Path(str(data["data"])).is_absolute() \
            else str(data["data"])
    return data


def build_spec(config: Path | str | None = None, **overrides: Any) -> RunSpec:
    """The spec of a run: ``configs/default.yaml``, then ``config``, then non-None ``overrides``.

    ``overrides`` use the config's key names (``data``, ``variants``, ``answerers``, ``seed``,
    ``workers``, ``limit``, ``sample``, ``options``, ``out``, ``run_id``, ``executor``, ``address``).
    """
    merged: dict[str, Any] = load_config(DEFAULT_CONFIG) if DEFAULT_CONFIG.exists() else {}
    if config is not None:
        merged.update(load_config(config))
    merged.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(merged) - CONFIG_KEYS
    if unknown:
        raise DiagQAError(f"unknown run settings {sorted(unknown)}")
    return RunSpec(
        data_dir=Path(merged.get("data") or DEFAULT_ROOT),
        variants=tuple(merged.get("variants") or ()),
        answerers=tuple(merged.get("answerers") or ()),
        out_dir=Path(merged.get("out") or DEFAULT_ROOT / "results"),
        run_id=merged.get("run_id"),
        seed=int(merged.get("seed") or 0),
        workers=int(merged.get("workers") or default_workers()),
        limit=merged.get("limit"),
        options=dict(merged.get("options") or {}),
        config_file=str(config) if config is not None else None,
        allow_outside_imports=bool(merged.get("allow_outside_imports") or False),
        sample=merged.get("sample"),
        executor=str(merged.get("executor") or "local"),
        address=merged.get("address"),
        judge=merged.get("judge"),
        selfcheck=merged.get("selfcheck"),
    )


def default_workers() -> int:
    """One worker process per CPU core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def with_run_id(spec: RunSpec, now: _dt.datetime | None = None) -> RunSpec:
    """``spec`` with its run id filled in (kept when already set)."""
    return spec if spec.run_id else replace(spec, run_id=make_run_id(spec.config_hash(), now))


#: option names that hold a secret: ``api_key``, ``key``, ``auth_token``, ``secret``, ``password`` (not
#: ``max_tokens``, a count, nor ``api_key_env``, the name of the variable that holds the key)
SECRET_OPTION = re.compile(r"(?:^|_)(?:api_?key|key|token|secret|password|bearer|credentials?)$", re.IGNORECASE)


def refuse_secrets(spec: RunSpec) -> None:
    """Refuse run options that hold a secret (they would be stored in run.json); ``*_env`` options name
    the environment variable that holds one, which is how a secret is given.

    >>> refuse_secrets(RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), options={"llm": {"max_tokens": 64}}))
    >>> refuse_secrets(RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), options={"llm": {"auth_token": "x"}}))
    Traceback (most recent call last):
    ...
    benchmark.errors.DiagQAError: options.llm.auth_token: an API key must not be written into the run options (it would be stored in run.json); put it in an environment variable and name that variable with api_key_env
    >>> refuse_secrets(RunSpec(variants=("oracle+d2+oracle",), answerers=("llm",), judge={"model": "m", "api_key": "x"}))
    Traceback (most recent call last):
    ...
    benchmark.errors.DiagQAError: judge.api_key: an API key must not be written into the run options (it would be stored in run.json); put it in an environment variable and name that variable with api_key_env
    """
    places = [(f"options.{c}", opts) for c, opts in sorted((spec.options or {}).items())]
    if spec.judge is not None:
        places.append(("judge", spec.judge))
    for place, opts in places:
        for name in sorted(opts or {}):
            if SECRET_OPTION.search(str(name)):
                raise DiagQAError(f"{place}.{name}: an API key must not be written into the run options "
                                  "(it would be stored in run.json); put it in an environment variable and name "
                                  "that variable with api_key_env")
