"""Loading a dataset directory: ``diagrams/<id>.d2`` (+ ``<id>.png``) and ``annotations/<id>.yaml``.

The format is documented in ``annotations/README.md``. Loading checks the schema and reports
every problem as an :class:`~benchmark.errors.InputError` naming file, line and question;
:mod:`benchmark.validate` checks the meaning (answers, certificates, renders).
"""
from __future__ import annotations

import hashlib
import json
import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

import networkx as nx
import yaml

from benchmark.errors import InputError
from benchmark.graph import build_graph, drop_views
from benchmark.progress import Progress, counted
from benchmark.spill import Blob, Spill, keep, pack, read, unpack
from benchmark.questions import (BRANCH_SEPARATOR, NODE_ARGS, QUESTION_TYPES, Question, arg_problem, canonical_answer,
                                 certificate_from_json)

#: the bundled dataset lives at the repository root
DEFAULT_ROOT = Path(__file__).resolve().parent.parent

DIAGRAM_KEYS = {"diagram", "title", "domain", "language", "twin", "questions", "notes"}
QUESTION_KEYS = {"id", "text", "type", "args", "answer", "certificate", "counter_prior", "rationale", "twin_question",
                 "retired"}
#: libyaml's safe loader when PyYAML has it (ten times faster), else the pure-Python one
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
#: an annotation file is read up to this size (the largest bundled one is 8 kB)
MAX_ANNOTATION_BYTES = 4 * 2**20
#: the languages of labels and questions (yes/no and number words are read in these)
LANGUAGES = ("en", "ru")

#: the steps :func:`load_dataset` reports to its ``progress``: annotation files read, then questions whose
#: counter-prior is measured
LOADING, MEASURING = "loading annotations", "measuring counter-prior"
#: what each of them counts (the unit of its progress bar)
STEP_UNITS = {LOADING: "file", MEASURING: "question"}
#: diagram and question ids are names: they never hold a path separator or start with a dot
_NAME = re.compile(r"\w[\w.-]*")
REQUIRED_QUESTION_KEYS = ("id", "text", "type", "args", "answer", "certificate", "rationale")


class PackedQuestions(Sequence[Question]):
    """A diagram's questions held pickled and deflated (about a tenth of their memory as objects), made
    again each time they are read: a dataset holds its questions this way from the moment each annotation
    file is read, so that a dataset ten times as large holds ten times as many diagrams but never every
    question as an object at once. Reading them costs an unpickling: a pass over a diagram reads them once
    (``qs = list(d.questions)``), not once per question.

    >>> from benchmark.graph import Subgraph
    >>> qs = PackedQuestions([Question("q1", "d", "A to B?", "reachable", (), True, Subgraph())])
    >>> len(qs), [q.id for q in qs], qs[0].answer, qs == [qs[0]], bool(PackedQuestions())
    (1, ['q1'], True, True, False)
    """

    __slots__ = ("_data", "_n", "__weakref__")

    def __init__(self, questions: Iterable[Question] = (), spill: Spill | None = None) -> None:
        """``spill``: where the packed bytes are kept (on disk: a loaded dataset's); in memory without it.
        Pickled (to a worker), they are the bytes themselves."""
        qs = list(questions)
        self._data = keep(pack(qs), spill)
        self._n = len(qs)

    def unpacked(self) -> list[Question]:
        """The questions as new objects."""
        return unpack(self._data)

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Question]:
        return iter(self.unpacked())

    def __getitem__(self, i: Any) -> Any:
        return self.unpacked()[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (PackedQuestions, list, tuple)):
            return self.unpacked() == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedQuestions({self.unpacked()!r})"


@dataclass
class Diagram:
    """One diagram: its D2 source, rendered PNG and annotation metadata."""

    id: str
    d2_path: Path
    png_path: Path
    title: str = ""
    domain: str = ""
    language: str = "en"
    twin: str | None = None
    annotation_path: Path | None = None
    #: a list while its annotation file is read, then packed (:class:`PackedQuestions`) by :func:`load_dataset`
    questions: Sequence[Question] = field(default_factory=list)
    #: retired questions: id -> the reason (never loaded as questions; their ids stay reserved)
    retired: dict[str, str] = field(default_factory=dict)
    #: the D2 file and its imports must lie inside this folder (None: anywhere)
    import_root: Path | None = None
    #: the parsed form as compact JSON text, deflated (zlib), once :meth:`release` let go of the live one
    _parsed_packed: bytes | Blob | None = field(default=None, repr=False, compare=False)
    #: where :meth:`release` keeps the parsed form (a loaded dataset's spill file); in memory when None
    _spill: Spill | None = field(default=None, repr=False, compare=False)

    @cached_property
    def parsed(self) -> dict[str, Any]:
        """The parser's public JSON form of the D2 file (read once: after :meth:`release`, made again
        from the text it kept)."""
        if self._parsed_packed is not None:
            return json.loads(zlib.decompress(read(self._parsed_packed)))
        from benchmark.d2 import parse_file

        return parse_file(self.d2_path, root=self.import_root)

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        return build_graph(self.parsed)

    @property
    def in_memory(self) -> bool:
        """Whether the parsed form or the graph is held live (see :meth:`release`)."""
        return "parsed" in self.__dict__ or "graph" in self.__dict__

    def release(self) -> None:
        """Let go of the live parsed form and graph, keeping the parsed form as compact JSON text, deflated
        (about a fiftieth of their memory on the bundled diagrams): the next use of :attr:`parsed` or
        :attr:`graph` makes them again from it, without reading the D2 file again, so a diagram edited
        during a run reads the same throughout.
        A diagram that never parsed keeps nothing, and its next use reports its problem again.

        >>> d = Diagram(id="x", d2_path=Path("x.d2"), png_path=Path("x.png"))
        >>> d.__dict__["parsed"] = {"nodes": [{"id": "a", "label": "A"}], "edges": []}
        >>> d.graph.nodes["a"]["label"], d.in_memory
        ('A', True)
        >>> d.release(); d.in_memory, d.graph.nodes["a"]["label"]
        (False, 'A')
        """
        parsed = self.__dict__.pop("parsed", None)
        if parsed is not None:
            packed = zlib.compress(json.dumps(parsed, ensure_ascii=False, separators=(",", ":")).encode(), 1)
            self._parsed_packed = keep(packed, self._spill)
        graph = self.__dict__.pop("graph", None)
        if graph is not None:
            drop_views(graph)   # so it is freed now, not by some later full collection (unless held elsewhere)

    @cached_property
    def source(self) -> str:
        """The D2 text; empty when the parser refuses the file (not a regular file, over its
        size limit, outside ``import_root``), in which case parsing it reports why."""
        from benchmark.d2.files import DEFAULT_LIMITS, outside_root, readable

        if self.import_root is not None and outside_root(str(self.d2_path), str(self.import_root)):
            return ""
        if not readable(str(self.d2_path), DEFAULT_LIMITS.max_file_bytes):
            return ""
        return self.d2_path.read_text(encoding="utf-8")


@dataclass
class Dataset:
    root: Path
    diagrams: dict[str, Diagram]
    #: the no-model prior baselines' predictions made when the dataset was loaded (to measure
    #: ``counter_prior``), for a run's own priors to take (:data:`benchmark.priors.SET_FREE_BASELINES`);
    #: kept in this process only, never pickled to a worker
    prior_predictions: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    #: where the dataset's packed questions and parsed forms are kept (:func:`load_dataset`'s); None: in memory
    spill: Spill | None = field(default=None, repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "prior_predictions": {}}

    @property
    def questions(self) -> list[Question]:
        return [q for d in self.diagrams.values() for q in d.questions]

    def diagram(self, diagram_id: str) -> Diagram:
        return self.diagrams[diagram_id]

    def content_hash(self) -> str:
        """SHA-256 over every D2 and annotation file (names and bytes), for run cards."""
        h = hashlib.sha256()
        for d in self.diagrams.values():
            for p in (d.d2_path, d.annotation_path):
                if p is not None and p.exists():
                    h.update(p.name.encode())
                    if not p.is_file():   # e.g. a link to /dev/zero: never read it
                        h.update(b"\0not a regular file")
                        continue
                    with p.open("rb") as fh:
                        for chunk in iter(lambda: fh.read(1 << 20), b""):
                            h.update(chunk)
        return h.hexdigest()


class _Where(NamedTuple):
    file: str | None
    line: int | None


@contextmanager
def released(diagrams: Iterable[Diagram]) -> Iterator[None]:
    """Within the block the diagrams' graphs may be made; after it, those that were not held before it are
    let go again (:meth:`Diagram.release`), so a pass over a large dataset holds one diagram's graph at a
    time, not every graph at once."""
    held = [(d, d.in_memory) for d in diagrams]
    try:
        yield
    finally:
        for d, was in held:
            if not was:
                d.release()


def _line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def _mapping_lines(node: yaml.Node | None) -> dict[str, yaml.Node]:
    """The value nodes of a mapping node, by key."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _key_nodes(node: yaml.Node | None) -> dict[str, yaml.Node]:
    """The key nodes of a mapping node (where a problem with that key is located), by key."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: k for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def is_name(value: Any) -> bool:
    """Is ``value`` usable as a diagram or question id: a name, never a path.

    >>> is_name("arch_auth_cache_a-q1"), is_name("../../outside/stolen"), is_name("/etc/passwd"), is_name("..")
    (True, False, False, False)
    """
    return isinstance(value, str) and _NAME.fullmatch(value) is not None


def _as_id(value: Any) -> str | None:
    """An id as written in YAML (a name, or a bare integer), as a string; None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    return value if is_name(value) else None


class AnnotationLoader(_LOADER):  # type: ignore[misc, valid-type]
    """The safe YAML loader, refusing a mapping that repeats a key (located at the repeat)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        if isinstance(node, yaml.MappingNode):
            self.flatten_mapping(node)
            first: dict[Any, int] = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                try:
                    if key in first:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping", node.start_mark,
                            f"duplicate key {key!r} (first at line {first[key]})", key_node.start_mark)
                    first[key] = key_node.start_mark.line + 1
                except TypeError:  # an unhashable key: the base class says so
                    break
        return super().construct_mapping(node, deep=deep)

    def __init__(self, stream: Any) -> None:
        super().__init__(stream)
        self._strings: dict[str, str] = {}   # each string of this file, once (see construct_yaml_str)

    def construct_yaml_str(self, node: yaml.ScalarNode) -> str:
        """A string scalar; equal strings of one file are one object (a node id is written in many
        questions' args, answers and certificates, and the dataset keeps every question)."""
        value = super().construct_yaml_str(node)
        return self._strings.setdefault(value, value)


AnnotationLoader.add_constructor("tag:yaml.org,2002:str", AnnotationLoader.construct_yaml_str)


def read_yaml(path: Path) -> tuple[Any, yaml.Node | None]:
    """The data of one YAML file and its node tree (for line numbers), read in one pass.

    Refuses aliases (``*name``): expanding them can make a few lines into gigabytes, and an
    annotation file has no use for them. Repeated keys are refused too, and so is a file larger
    than :data:`MAX_ANNOTATION_BYTES`. Raises
    :class:`InputError` naming file and line.
    """
    fname = str(path)
    try:
        with open(path, "rb") as f:  # bounded: a link to /dev/zero must not fill the memory
            raw = f.read(MAX_ANNOTATION_BYTES + 1)
        if len(raw) > MAX_ANNOTATION_BYTES:
            raise InputError(f"annotation file is larger than {MAX_ANNOTATION_BYTES // 2**20} MiB", file=fname)
        text = raw.decode("utf-8")
        if "*" in text:  # an alias needs one; only then look at the events
            alias = next((e for e in yaml.parse(text, Loader=_LOADER) if isinstance(e, yaml.AliasEvent)), None)
            if alias is not None:
                raise InputError(f"YAML aliases are not allowed in annotation files (*{alias.anchor}); "
                                 "write the value out", file=fname, line=alias.start_mark.line + 1)
        loader = AnnotationLoader(text)
        try:
            node = loader.get_single_node()
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read annotation file: {exc}", file=fname) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', None) or exc}", file=fname,
                         line=mark.line + 1 if mark else None) from exc
    return data, node


def load_annotation_file(path: Path, diagrams_dir: Path) -> tuple[Diagram | None, list[InputError]]:
    """Parse one annotation file. Returns the diagram with the questions that loaded, and the
    schema problems found (each names file, line and question); bad questions are left out.

    A problem with the file itself (its keys, id, language, twin, question list) leaves the whole
    file out: the diagram is then None. Raises :class:`InputError` when the file cannot be read.
    """
    errors: list[InputError] = []
    fname = str(path)
    data, root_node = read_yaml(path)
    if not isinstance(data, dict):
        raise InputError("annotation file must be a mapping with 'diagram' and 'questions'", file=fname, line=1)
    top, top_keys = _mapping_lines(root_node), _key_nodes(root_node)

    def file_err(msg: str, key: str | None = None) -> None:
        errors.append(InputError(msg, file=fname, line=_line(top_keys.get(key)) if key in top_keys else 1))

    unknown = sorted(set(map(str, data)) - DIAGRAM_KEYS)
    if unknown:
        file_err(f"unknown keys {unknown}; allowed: {sorted(DIAGRAM_KEYS)}", unknown[0])
    did = data.get("diagram")
    if not isinstance(did, str) or not did:
        file_err("'diagram' (the diagram id) is required", "diagram")
    elif not is_name(did):
        file_err(f"diagram id {did!r} is not a name (letters, digits, '_', '-', '.'; never a path)", "diagram")
    elif did != path.stem:
        file_err(f"diagram id {did!r} does not match the file name {path.stem!r}", "diagram")
    for key in ("title", "domain"):
        if data.get(key) is not None and not isinstance(data[key], str):
            file_err(f"{key} must be a string", key)
    language = "en" if data.get("language") is None else data["language"]
    if language not in LANGUAGES:
        file_err(f"unknown language {language!r}; known: {', '.join(LANGUAGES)}", "language")
    twin = data.get("twin")
    if twin is not None and not is_name(twin):
        file_err(f"twin must be the id of the other diagram, got {twin!r}", "twin")
    qs = data.get("questions")
    if not isinstance(qs, list):
        file_err("'questions' must be a list", "questions")
    if errors:
        return None, errors
    diagram = Diagram(id=did, d2_path=diagrams_dir / f"{did}.d2", png_path=diagrams_dir / f"{did}.png",
                      title=data.get("title") or "", domain=data.get("domain") or "",
                      language=language, twin=twin, annotation_path=path)
    qnodes = top.get("questions").value if isinstance(top.get("questions"), yaml.SequenceNode) else []
    questions: list[Question] = []
    for i, raw in enumerate(qs):
        qnode = qnodes[i] if i < len(qnodes) else None
        line = _line(qnode)
        fields = _key_nodes(qnode)
        qid = _as_id(raw.get("id")) if isinstance(raw, dict) else None
        label = qid or f"question #{i + 1}"

        def err(msg: str, key: str | None = None) -> None:
            errors.append(InputError(msg, file=fname, line=_line(fields.get(key)) if key and key in fields else line,
                                     question=label))

        if not isinstance(raw, dict):
            err("a question must be a mapping")
            continue
        if "retired" in raw:  # a published id whose question was withdrawn: only id and reason are checked
            reason = raw["retired"]
            if qid is None:
                err(f"id must be a name (letters, digits, '_', '-', '.'), got {raw.get('id')!r}", "id")
            elif not isinstance(reason, str) or not reason.strip():
                err("retired must say why the question was withdrawn (a non-empty string)", "retired")
            else:
                diagram.retired[qid] = reason.strip()
            continue
        missing = [k for k in REQUIRED_QUESTION_KEYS if k not in raw]
        if missing:
            err(f"missing keys {missing}")
            continue
        bad = sorted(set(map(str, raw)) - QUESTION_KEYS)
        if bad:
            err(f"unknown keys {bad}; allowed: {sorted(QUESTION_KEYS)}", bad[0])
            continue
        if qid is None:
            err(f"id must be a name (letters, digits, '_', '-', '.'), got {raw['id']!r}", "id")
            continue
        qtype = raw["type"]
        if not isinstance(qtype, str) or qtype not in QUESTION_TYPES:
            err(f"unknown type {qtype!r}; known: {', '.join(QUESTION_TYPES)}", "type")
            continue
        t = QUESTION_TYPES[qtype]
        args = raw["args"]
        if not isinstance(args, dict) or set(args) != set(t.args):
            got = sorted(map(str, args)) if isinstance(args, dict) else args
            err(f"type {qtype} takes args {list(t.args)}, got {got!r}", "args")
            continue
        branches = args.get("branches") if qtype == "scenario" else None
        if isinstance(branches, list) and all(isinstance(b, str) and BRANCH_SEPARATOR not in b for b in branches):
            args = dict(args, branches=f"{BRANCH_SEPARATOR} ".join(b.strip() for b in branches))
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in args.values()):
            err("every arg must be a node id or a string", "args")
            continue
        problem = arg_problem(qtype, {k: str(v) for k, v in args.items()})
        if problem:
            err(f"args: {problem}", "args")
            continue
        try:
            answer = canonical_answer(t.kind, raw["answer"])
        except ValueError as exc:
            err(f"answer: {exc}", "answer")
            continue
        try:
            cert = certificate_from_json(raw["certificate"])
        except ValueError as exc:
            err(str(exc), "certificate")
            continue
        if "counter_prior" in raw and not isinstance(raw["counter_prior"], bool):
            err("counter_prior must be true or false", "counter_prior")
            continue
        if not isinstance(raw["text"], str) or not raw["text"].strip():
            err("text must be a non-empty string", "text")
            continue
        if raw["rationale"] is not None and not isinstance(raw["rationale"], str):
            err("rationale must be a string", "rationale")
            continue
        twin_q = raw.get("twin_question")
        if twin_q is not None and _as_id(twin_q) is None:
            err(f"twin_question must be a question id, got {twin_q!r}", "twin_question")
            continue
        extra = (("twin_question", _as_id(twin_q)),) if twin_q is not None else ()
        questions.append(Question(
            id=qid, diagram=did, text=raw["text"].strip(), type=qtype,
            args=tuple((k, str(args[k])) for k in t.args), answer=answer, certificate=cert,
            counter_prior_annotated=raw.get("counter_prior"), rationale=raw["rationale"] or "",
            twin_of=diagram.twin, language=diagram.language, file=fname, line=line, extra=extra))
    diagram.questions = questions
    return diagram, errors


def load_dataset(root: Path | str | None = None, *, strict: bool = True,
                 allow_outside_imports: bool = False, progress: Progress | None = None) -> tuple[Dataset, list[InputError]]:
    """Load ``root/diagrams`` and ``root/annotations``.

    With ``strict`` the first schema problem is raised; otherwise problems are returned and the
    questions that loaded are kept (one bad question never loses the rest). Whatever a problem is
    reported for is left out of the dataset: a question with a problem, a question whose id an
    earlier question already has (files in name order), a file with a problem of its own.
    A dataset without any annotation file is an error even when not ``strict``. A diagram's D2
    imports must stay inside ``root`` unless ``allow_outside_imports``. ``progress`` is told of each
    annotation file read (step ``loading annotations``) and of the counter-prior measured
    (:func:`measure_counter_prior`).
    """
    root = Path(root) if root is not None else DEFAULT_ROOT
    ddir, adir = root / "diagrams", root / "annotations"
    if not ddir.is_dir() or not adir.is_dir():
        raise InputError("a dataset directory needs 'diagrams/' and 'annotations/' folders", file=str(root))
    files = sorted(adir.glob("*.yaml"))
    if not files:
        raise InputError("the dataset is empty: no annotation files (annotations/*.yaml)", file=str(adir))
    diagrams: dict[str, Diagram] = {}
    problems: list[InputError] = []
    spill = Spill()   # the packed questions and parsed forms, on disk while the dataset lives
    for path in counted(files, len(files), progress, LOADING):
        try:
            diagram, errs = load_annotation_file(path, ddir)
        except InputError as exc:  # the whole file is unreadable; the other files still load
            problems.append(exc)
            continue
        problems.extend(errs)
        if diagram is None:
            continue
        diagram.questions = PackedQuestions(diagram.questions)   # to the spill once counter_prior is measured
        diagram._spill = spill
        if not diagram.d2_path.exists():
            problems.append(InputError(f"diagram file {diagram.d2_path.name} is missing", file=str(path), line=1))
            continue
        if not diagram.d2_path.is_file():  # e.g. a link to /dev/zero: never read it
            problems.append(InputError(f"diagram file {diagram.d2_path.name}: cannot read: not a regular file",
                                       file=str(path), line=1))
            continue
        diagram.import_root = None if allow_outside_imports else root
        diagrams[diagram.id] = diagram
    _drop_reused_ids(diagrams, problems)
    if strict and problems:
        raise problems[0]
    dataset = Dataset(root=root, diagrams=diagrams, spill=spill)
    measure_counter_prior(dataset, progress)
    return dataset, problems


def id_digest(text: str) -> int:
    """A 64-bit digest of an id (BLAKE2b of its UTF-8 bytes, as a signed integer): the same in every process,
    unlike ``hash``.

    >>> id_digest("q1") == id_digest("q1"), id_digest("q1") == id_digest("q2")
    (True, False)
    """
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little", signed=True)


def recurring(values: Any) -> Any:
    """The positions, in order, of the values (64-bit integers: an ``array("q")`` or any such buffer) that
    occur more than once: what a check for repeated ids reads again. The sorted copy it compares (8 bytes a
    value) is let go before the positions are found.

    >>> from array import array
    >>> recurring(array("q", [5, 3, 5, 9, 3, 1])).tolist(), recurring(array("q", [1, 2])).tolist()
    ([0, 1, 2, 4], [])
    """
    import numpy as np

    every = np.frombuffer(values, np.int64) if len(values) else np.zeros(0, np.int64)
    ordered = np.sort(every)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    del ordered
    if not len(repeated):
        return np.zeros(0, np.int64)
    return np.flatnonzero(np.isin(every, np.unique(repeated)))


def _drop_reused_ids(diagrams: dict[str, Diagram], problems: list[InputError]) -> None:
    """Leave out, reporting each, every question whose id is retired or was taken by an earlier question
    (files in name order); a diagram's questions are packed again only when one is left out.

    Every question's id is read once as a 64-bit digest (an array of them, not a dict of every id: that
    held each id string, scattered among the questions a load lets go); only the diagrams holding a
    retired id or a digest that occurs twice are read again, and checked id by id as before."""
    from array import array

    retired = {qid: d for d in diagrams.values() for qid in d.retired}
    digests, owner = array("q"), array("q")
    flagged: set[int] = set()   # the diagrams (by position) holding a retired id, or an id whose digest recurs
    order = list(diagrams.values())
    for k, d in enumerate(order):
        for q in d.questions:
            digests.append(id_digest(q.id))
            owner.append(k)
            if q.id in retired:
                flagged.add(k)
    flagged.update(owner[i] for i in recurring(digests).tolist())
    first: dict[str, _Where] = {}
    for k in sorted(flagged):
        d = order[k]
        kept, read = [], list(d.questions)
        for q in read:
            if q.id in retired:
                problems.append(InputError(f"question id is retired in {retired[q.id].annotation_path}; "
                                           "a retired id is never reused", file=q.file, line=q.line, question=q.id))
                continue
            if q.id in first:
                was = first[q.id]
                problems.append(InputError(f"question id is used twice in the dataset (first at {was.file}:{was.line})",
                                           file=q.file, line=q.line, question=q.id))
                continue
            first[q.id] = _Where(q.file, q.line)
            kept.append(q)
        if len(kept) != len(read):
            d.questions = PackedQuestions(kept, d._spill)


def measure_counter_prior(dataset: Dataset, progress: Progress | None = None) -> None:
    """Set every question's ``counter_prior`` to its measured value (DESIGN.md §4): True when the
    strongest no-model prior baseline on questions of its answer kind answers it wrongly; False for
    answer kinds outside the definition (counts, sets, paths, labels) and where the baseline could
    not answer. Computed over every loaded question of the dataset, so it is the same for every run
    on the dataset; the annotation's own ``counter_prior`` stays as ``counter_prior_annotated``.
    The questions are read a diagram at a time (:func:`benchmark.priors.run_priors` keeping none).
    ``progress`` is told how many questions every baseline has answered (step ``measuring counter-prior``)."""
    from dataclasses import replace

    from benchmark.priors import every_baseline, run_priors

    if not any(d.questions for d in dataset.diagrams.values()):
        return
    result = run_priors(dataset, keep=False, lean_known=True,
                        progress=every_baseline(progress, MEASURING) if progress is not None else None)
    dataset.prior_predictions = result.known
    measured = iter(result.measured)   # (in the order run_priors worked: diagrams by id)
    for did in sorted(dataset.diagrams):
        d = dataset.diagrams[did]
        d.questions = PackedQuestions([replace(q, counter_prior=bool(next(measured))) for q in d.questions], d._spill)


def node_args_missing(q: Question, g: nx.MultiDiGraph) -> list[str]:
    """Node-id arguments of ``q`` that are not nodes of ``g``."""
    return [f"{k}={v!r}" for k, v in q.args if k in NODE_ARGS and v not in g]
