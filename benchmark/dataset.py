"""Loading a dataset directory: ``diagrams/<id>.d2`` (+ ``<id>.png``) and ``annotations/<id>.yaml``.

The format is documented in ``annotations/README.md``. Loading checks the schema and reports
every problem as an :class:`~benchmark.errors.InputError` naming file, line and question;
:mod:`benchmark.validate` checks the meaning (answers, certificates, renders).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import networkx as nx
import yaml

from benchmark.errors import InputError
from benchmark.graph import build_graph
from benchmark.questions import NODE_ARGS, QUESTION_TYPES, Question, canonical_answer, certificate_from_json

#: the bundled dataset lives at the repository root
DEFAULT_ROOT = Path(__file__).resolve().parent.parent

DIAGRAM_KEYS = {"diagram", "title", "domain", "language", "twin", "questions", "notes"}
QUESTION_KEYS = {"id", "text", "type", "args", "answer", "certificate", "counter_prior", "rationale", "twin_question"}
#: libyaml's safe loader when PyYAML has it (ten times faster), else the pure-Python one
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
REQUIRED_QUESTION_KEYS = ("id", "text", "type", "args", "answer", "certificate", "counter_prior", "rationale")


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
    questions: list[Question] = field(default_factory=list)
    #: the D2 file and its imports must lie inside this folder (None: anywhere)
    import_root: Path | None = None

    @cached_property
    def parsed(self) -> dict[str, Any]:
        """The parser's public JSON form of the D2 file."""
        from benchmark.d2 import parse_file

        return parse_file(self.d2_path, root=self.import_root)

    @cached_property
    def graph(self) -> nx.MultiDiGraph:
        return build_graph(self.parsed)

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


def _line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def _mapping_lines(node: yaml.Node) -> dict[str, yaml.Node]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def load_annotation_file(path: Path, diagrams_dir: Path) -> tuple[Diagram, list[InputError]]:
    """Parse one annotation file. Returns the diagram with the questions that loaded, and the
    schema problems found (each names file, line and question); bad questions are left out."""
    errors: list[InputError] = []
    fname = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        root_node = yaml.compose(text, Loader=_LOADER)
        data = yaml.load(text, Loader=_LOADER)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read annotation file: {exc}", file=fname) from exc
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(exc, 'problem', exc)}", file=fname,
                         line=mark.line + 1 if mark else None) from exc
    if not isinstance(data, dict):
        raise InputError("annotation file must be a mapping with 'diagram' and 'questions'", file=fname, line=1)
    top = _mapping_lines(root_node)
    unknown = set(data) - DIAGRAM_KEYS
    if unknown:
        errors.append(InputError(f"unknown keys {sorted(unknown)}; allowed: {sorted(DIAGRAM_KEYS)}", file=fname,
                                 line=_line(top.get(sorted(unknown)[0]))))
    did = data.get("diagram")
    if not isinstance(did, str) or not did:
        raise InputError("'diagram' (the diagram id) is required", file=fname, line=1)
    if did != path.stem:
        errors.append(InputError(f"diagram id {did!r} does not match the file name {path.stem!r}", file=fname,
                                 line=_line(top.get("diagram"))))
    diagram = Diagram(id=did, d2_path=diagrams_dir / f"{did}.d2", png_path=diagrams_dir / f"{did}.png",
                      title=str(data.get("title") or ""), domain=str(data.get("domain") or ""),
                      language=str(data.get("language") or "en"), twin=data.get("twin"), annotation_path=path)
    qs = data.get("questions")
    if not isinstance(qs, list):
        errors.append(InputError("'questions' must be a list", file=fname, line=_line(top.get("questions"))))
        return diagram, errors
    qnodes = top.get("questions").value if isinstance(top.get("questions"), yaml.SequenceNode) else []
    for i, raw in enumerate(qs):
        qnode = qnodes[i] if i < len(qnodes) else None
        line = _line(qnode)
        fields = _mapping_lines(qnode) if qnode is not None else {}
        qid = raw.get("id") if isinstance(raw, dict) else None
        label = str(qid) if qid else f"question #{i + 1}"

        def err(msg: str, key: str | None = None) -> None:
            errors.append(InputError(msg, file=fname, line=_line(fields.get(key)) if key and key in fields else line,
                                     question=label))

        if not isinstance(raw, dict):
            err("a question must be a mapping")
            continue
        missing = [k for k in REQUIRED_QUESTION_KEYS if k not in raw]
        if missing:
            err(f"missing keys {missing}")
            continue
        bad = set(raw) - QUESTION_KEYS
        if bad:
            err(f"unknown keys {sorted(bad)}; allowed: {sorted(QUESTION_KEYS)}", sorted(bad)[0])
            continue
        qtype = raw["type"]
        if qtype not in QUESTION_TYPES:
            err(f"unknown type {qtype!r}; known: {', '.join(QUESTION_TYPES)}", "type")
            continue
        t = QUESTION_TYPES[qtype]
        args = raw["args"]
        if not isinstance(args, dict) or set(args) != set(t.args):
            err(f"type {qtype} takes args {list(t.args)}, got {sorted(args) if isinstance(args, dict) else args!r}", "args")
            continue
        if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in args.values()):
            err("every arg must be a node id or a string", "args")
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
        if not isinstance(raw["counter_prior"], bool):
            err("counter_prior must be true or false", "counter_prior")
            continue
        if not isinstance(raw["text"], str) or not raw["text"].strip():
            err("text must be a non-empty string", "text")
            continue
        extra = (("twin_question", str(raw["twin_question"])),) if raw.get("twin_question") else ()
        diagram.questions.append(Question(
            id=str(qid), diagram=did, text=raw["text"].strip(), type=qtype,
            args=tuple((k, str(args[k])) for k in t.args), answer=answer, certificate=cert,
            counter_prior=raw["counter_prior"], rationale=str(raw["rationale"] or ""),
            twin_of=diagram.twin, language=diagram.language, file=fname, line=line, extra=extra))
    return diagram, errors


def load_dataset(root: Path | str | None = None, *, strict: bool = True,
                 allow_outside_imports: bool = False) -> tuple[Dataset, list[InputError]]:
    """Load ``root/diagrams`` and ``root/annotations``.

    With ``strict`` the first schema problem is raised; otherwise problems are returned and the
    questions that loaded are kept (one bad question never loses the rest). A diagram's D2
    imports must stay inside ``root`` unless ``allow_outside_imports``.
    """
    root = Path(root) if root is not None else DEFAULT_ROOT
    ddir, adir = root / "diagrams", root / "annotations"
    if not ddir.is_dir() or not adir.is_dir():
        raise InputError("a dataset directory needs 'diagrams/' and 'annotations/' folders", file=str(root))
    diagrams: dict[str, Diagram] = {}
    problems: list[InputError] = []
    for path in sorted(adir.glob("*.yaml")):
        try:
            diagram, errs = load_annotation_file(path, ddir)
        except InputError as exc:  # the whole file is unreadable; the other files still load
            problems.append(exc)
            continue
        problems.extend(errs)
        if not diagram.d2_path.exists():
            problems.append(InputError(f"diagram file {diagram.d2_path.name} is missing", file=str(path), line=1))
            continue
        diagram.import_root = None if allow_outside_imports else root
        diagrams[diagram.id] = diagram
    seen: set[str] = set()
    for d in diagrams.values():
        for q in d.questions:
            if q.id in seen:
                problems.append(InputError("question id is used twice in the dataset", file=q.file, line=q.line, question=q.id))
            seen.add(q.id)
    if strict and problems:
        raise problems[0]
    return Dataset(root=root, diagrams=diagrams), problems


def node_args_missing(q: Question, g: nx.MultiDiGraph) -> list[str]:
    """Node-id arguments of ``q`` that are not nodes of ``g``."""
    return [f"{k}={v!r}" for k, v in q.args if k in NODE_ARGS and v not in g]
