"""Finder ``clip``: an open_clip image index over the diagrams' PNGs, queried with the question text.

Each PNG is padded to a white square (diagrams are tall or wide; a centre crop would cut labels
off), preprocessed by the model's own transform, encoded in batches and L2-normalised; a question
is ranked by cosine similarity between its text embedding and every image embedding. Image
embeddings are cached on disk, keyed by the PNG's SHA-256 and a fingerprint of the model.

The model is chosen by constructor arguments or the environment:
``DIAGQA_CLIP_MODEL`` (default ``ViT-B-32``) and ``DIAGQA_CLIP_PRETRAINED`` (default
``laion2b_s34b_b79k``; an open_clip tag, or a path to a local checkpoint file). Nothing is
downloaded: the weights of a tag are looked for in the local Hugging Face and open_clip caches
before torch or open_clip are imported, and when they are not there the constructor raises
:class:`~benchmark.errors.StageUnavailable` at once with one line saying what was looked for where.
``pretrained=None`` builds a randomly initialised model from ``seed`` (for tests of the pipeline).
"""
from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib.util
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from benchmark.dataset import Dataset
from benchmark.errors import InputError, StageUnavailable
from benchmark.finders.cache import cache_root, sha256_bytes, write_atomic
from benchmark.finders.ranking import ranked
from benchmark.questions import Question
from benchmark.stages import FINDERS

DEFAULT_MODEL = "ViT-B-32"
DEFAULT_PRETRAINED = "laion2b_s34b_b79k"
#: the score of a diagram whose PNG could not be read: below any cosine similarity
MISSING_SCORE = -2.0
#: weight file names open_clip looks for in a Hugging Face repository
HF_WEIGHT_NAMES = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")
_UNSET: Any = object()


def hf_cache_dir() -> Path:
    """The Hugging Face hub cache, resolved from the environment as huggingface_hub does."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"])
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]) / "hub"
    xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(xdg) / "huggingface" / "hub"


def openclip_url_cache() -> Path:
    """Where open_clip keeps checkpoints downloaded from plain URLs."""
    return Path(os.path.expanduser("~/.cache/clip"))


def _literal_kwargs(call: ast.Call) -> dict[str, Any]:
    out = {}
    for kw in call.keywords:
        if kw.arg is not None:
            with contextlib.suppress(ValueError):
                out[kw.arg] = ast.literal_eval(kw.value)
    return out


def _tags_of(node: ast.AST, variables: dict[str, ast.AST]) -> dict[str, dict[str, Any]] | None:
    if isinstance(node, ast.Name):
        node = variables.get(node.id)  # type: ignore[assignment]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict":
        return {kw.arg: _literal_kwargs(kw.value) for kw in node.keywords
                if kw.arg is not None and isinstance(kw.value, ast.Call)}
    if isinstance(node, ast.Dict):
        return {k.value: _literal_kwargs(v) for k, v in zip(node.keys, node.values)
                if isinstance(k, ast.Constant) and isinstance(v, ast.Call)}
    return None


def pretrained_cfg_fast(model: str, tag: str) -> dict[str, Any] | None:
    """open_clip's download configuration for ``model``/``tag`` read from its source, without importing
    it (importing open_clip imports torch, seconds of work). ``{}`` when the model has no such tag;
    None when the source cannot be read this way (the caller then asks open_clip itself).

    >>> pretrained_cfg_fast("ViT-B-32", "laion2b_s34b_b79k")["hf_hub"]
    'laion/CLIP-ViT-B-32-laion2B-s34B-b79K/'
    >>> pretrained_cfg_fast("ViT-B-32", "no_such_tag")
    {}
    """
    spec = importlib.util.find_spec("open_clip")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(list(spec.submodule_search_locations)[0]) / "pretrained.py"
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return None
    variables: dict[str, ast.AST] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            variables[stmt.targets[0].id] = stmt.value
    table = variables.get("_PRETRAINED")
    if not isinstance(table, ast.Dict):
        return None
    base = model[:-len("-quickgelu")] if model.endswith("-quickgelu") else model
    for key, value in zip(table.keys, table.values):
        if isinstance(key, ast.Constant) and key.value == base:
            tags = _tags_of(value, variables)
            if tags is None:
                return None
            cfg = tags.get(tag.lower().replace("-", "_"), {})  # {}: the model is known, the tag is not
            return cfg if base == model or cfg.get("quick_gelu") else {}
    return None


def _find_in_hf_cache(repo: str, names: tuple[str, ...]) -> tuple[Path | None, Path]:
    """A cached file of ``repo`` (first of ``names`` found; the snapshot ``refs/main`` names first)."""
    folder = hf_cache_dir() / f"models--{repo.replace('/', '--')}"
    snapshots = folder / "snapshots"
    order: list[Path] = []
    ref = folder / "refs" / "main"
    if ref.is_file():
        order.append(snapshots / ref.read_text(encoding="utf-8").strip())
    if snapshots.is_dir():
        order.extend(sorted(p for p in snapshots.iterdir() if p not in order))
    for snap in order:
        for name in names:
            if (snap / name).is_file():
                return snap / name, folder
    return None, folder


@dataclass(frozen=True)
class Weights:
    """Where a model's weights are: a local file, plus the tag's preprocessing settings."""

    path: Path
    tag_cfg: dict[str, Any]


def locate_weights(model: str, pretrained: str) -> Weights:
    """The local weight file for ``pretrained`` (a tag of ``model`` or a file path); never downloads.

    Raises :class:`StageUnavailable` with one line naming the model, the tag and where it looked.
    """
    as_path = Path(os.path.expanduser(pretrained))
    if as_path.is_file():
        return Weights(as_path, {})
    if os.sep in pretrained or as_path.suffix in (".pt", ".pth", ".bin", ".safetensors"):
        raise StageUnavailable(f"clip: checkpoint file {pretrained} does not exist")
    cfg = pretrained_cfg_fast(model, pretrained)
    if cfg is None:
        try:
            import open_clip
        except ImportError as exc:
            raise StageUnavailable("clip: open_clip is not installed (pip install 'diagqa[image]')") from exc
        cfg = open_clip.get_pretrained_cfg(model, pretrained) or None
    if not cfg:
        raise StageUnavailable(f"clip: open_clip has no pretrained weights tagged {pretrained!r} for model {model!r}")
    if cfg.get("file"):
        return Weights(Path(cfg["file"]), cfg)
    looked: list[str] = []
    if cfg.get("hf_hub"):
        hub = cfg["hf_hub"]
        if hub.endswith("/"):  # a repository with open_clip's default weight file names
            repo, names = hub.rstrip("/"), HF_WEIGHT_NAMES
        else:
            repo, filename = os.path.split(hub)
            stem = os.path.splitext(filename)[0]
            names = (filename,) if filename.endswith(".safetensors") else (f"{stem}.safetensors", filename)
        found, folder = _find_in_hf_cache(repo, names)
        if found:
            return Weights(found, cfg)
        looked.append(str(folder))
    if cfg.get("url"):
        local = openclip_url_cache() / os.path.basename(cfg["url"])
        if local.is_file():
            return Weights(local, cfg)
        looked.append(str(local))
    raise StageUnavailable(
        f"clip: weights for {model}/{pretrained} are not on this machine (looked in {', '.join(looked)}); "
        f"nothing is downloaded at run time: put them there or pass pretrained=/path/to/checkpoint.pt")


@contextlib.contextmanager
def hub_offline() -> Iterator[None]:
    """Set ``HF_HUB_OFFLINE=1`` (and the transformers twin) for the duration of model loading."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update({k: "1" for k in saved})
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def pad_to_square(image):
    """``image`` (PIL, RGB) centred on a white square, so the model's centre crop keeps all of it."""
    from PIL import Image

    side = max(image.size)
    canvas = Image.new("RGB", (side, side), (255, 255, 255))
    canvas.paste(image, ((side - image.width) // 2, (side - image.height) // 2))
    return canvas


@FINDERS.register("clip")
class ClipFinder:
    """open_clip image-text similarity over the PNGs (default ViT-B-32 / laion2b_s34b_b79k, local weights only)."""

    name = "clip"

    def __init__(self, model: str | None = None, pretrained: str | None = _UNSET, *, config: str | Path | None = None,
                 seed: int = 0, batch_size: int = 16, device: str = "cpu", cache_dir: str | Path | None = None) -> None:
        self.model_name = model or os.environ.get("DIAGQA_CLIP_MODEL") or DEFAULT_MODEL
        if pretrained is _UNSET:
            pretrained = os.environ.get("DIAGQA_CLIP_PRETRAINED") or DEFAULT_PRETRAINED
        if isinstance(pretrained, str) and pretrained.strip().lower() in ("", "none", "random"):
            pretrained = None
        self.pretrained = pretrained
        self.config = Path(config) if config else None
        self.seed, self.batch_size, self.device = seed, batch_size, device
        self.cache_dir = Path(cache_dir) if cache_dir else cache_root() / "clip"
        self.weights = locate_weights(self.model_name, pretrained) if pretrained else None
        self.problems: list[str] = []
        self._model: Any = None
        self._ids: list[str] = []
        self._matrix: Any = None
        self._missing: list[str] = []
        self._text_cache: dict[str, Any] = {}

    # -- model -------------------------------------------------------------------------------
    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import open_clip
            import torch
        except ImportError as exc:
            raise StageUnavailable("clip: open_clip/torch are not installed (pip install 'diagqa[image]')") from exc
        if self.config is not None:
            if not self.config.is_file():
                raise StageUnavailable(f"clip: model config {self.config} does not exist")
            open_clip.add_model_config(self.config)
        cfg = self.weights.tag_cfg if self.weights else {}
        with hub_offline():
            torch.manual_seed(self.seed)
            try:
                model, _, preprocess = open_clip.create_model_and_transforms(
                    self.model_name, pretrained=str(self.weights.path) if self.weights else None,
                    device=self.device, force_quick_gelu=bool(cfg.get("quick_gelu", False)),
                    image_mean=cfg.get("mean"), image_std=cfg.get("std"),
                    image_interpolation=cfg.get("interpolation"), image_resize_mode=cfg.get("resize_mode"))
            except (RuntimeError, OSError, ValueError, KeyError) as exc:
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise StageUnavailable(f"clip: cannot load {self.model_name}/{self.pretrained}: {first}") from exc
        model.eval()
        self._torch, self._preprocess = torch, preprocess
        self._tokenizer = open_clip.get_tokenizer(self.model_name)
        self._model = model
        self._fingerprint = self._model_fingerprint(open_clip)

    def _model_fingerprint(self, open_clip: Any) -> str:
        if self.weights is not None:
            st = self.weights.path.stat()
            weights: Any = [str(self.weights.path.resolve()), st.st_size, st.st_mtime_ns]
        else:
            weights = ["random", self.seed, self._torch.__version__]
        desc = {"model": self.model_name, "config": open_clip.get_model_config(self.model_name), "weights": weights,
                "open_clip": getattr(open_clip, "__version__", ""), "preprocess": repr(self._preprocess),
                "pad": "white-square"}
        return hashlib.sha256(json.dumps(desc, sort_keys=True, default=str).encode()).hexdigest()[:20]

    def encode_images(self, images: list[bytes]) -> Any:
        """L2-normalised embeddings (numpy, one row per image) of encoded PNG bytes, in batches."""
        import numpy as np
        from PIL import Image

        self._load()
        torch = self._torch
        rows = []
        for start in range(0, len(images), self.batch_size):
            chunk = images[start:start + self.batch_size]
            pixels = [self._preprocess(pad_to_square(Image.open(io.BytesIO(b)).convert("RGB"))) for b in chunk]
            batch = torch.stack(pixels)
            with torch.no_grad():
                feats = self._model.encode_image(batch.to(self.device))
                feats = torch.nn.functional.normalize(feats.float(), dim=-1)
            rows.append(feats.cpu().numpy())
        return np.concatenate(rows) if rows else np.zeros((0, 0), dtype=np.float32)

    def encode_text(self, text: str) -> Any:
        """The L2-normalised embedding (numpy vector) of ``text``."""
        self._load()
        if text not in self._text_cache:
            torch = self._torch
            with torch.no_grad():
                feats = self._model.encode_text(self._tokenizer([text]).to(self.device))
                feats = torch.nn.functional.normalize(feats.float(), dim=-1)
            self._text_cache[text] = feats[0].cpu().numpy()
        return self._text_cache[text]

    # -- finder ------------------------------------------------------------------------------
    def fit(self, dataset: Dataset) -> None:
        import numpy as np

        self._load()
        self._ids, self._missing, self.problems = [], [], []
        found: dict[str, Any] = {}
        todo: list[tuple[str, Path, bytes]] = []
        for did, diagram in sorted(dataset.diagrams.items()):
            try:
                data = diagram.png_path.read_bytes()
            except OSError as exc:  # one missing PNG ranks last; the others are still found
                why = InputError(f"cannot read image: {exc.strerror or exc}", file=str(diagram.png_path))
                self.problems.append(str(why))
                self._missing.append(did)
                continue
            entry = self.cache_dir / self._fingerprint / f"{sha256_bytes(data)}.npy"
            if entry.exists():
                found[did] = np.load(entry)
            else:
                todo.append((did, entry, data))
        if todo:
            try:
                fresh = self.encode_images([data for _, _, data in todo])
            except (OSError, ValueError) as exc:  # an unreadable PNG: encode one by one to isolate it
                fresh = None
                self.problems.append(f"clip: batch encoding failed ({exc}); encoding images one by one")
            for i, (did, entry, data) in enumerate(todo):
                try:
                    vec = fresh[i] if fresh is not None else self.encode_images([data])[0]
                except (OSError, ValueError) as exc:
                    why = InputError(f"not a readable image: {exc}", file=str(dataset.diagrams[did].png_path))
                    self.problems.append(str(why))
                    self._missing.append(did)
                    continue
                buf = io.BytesIO()
                np.save(buf, vec.astype(np.float32))
                write_atomic(entry, buf.getvalue())
                found[did] = vec
        self._ids = sorted(found)
        self._matrix = np.stack([found[d] for d in self._ids]) if found else None

    def image_embedding(self, diagram_id: str) -> Any:
        """The stored embedding of one fitted diagram."""
        return self._matrix[self._ids.index(diagram_id)]

    def rank(self, question: Question) -> list[tuple[str, float]]:
        scores = {d: MISSING_SCORE for d in self._missing}
        if self._matrix is not None:
            sims = self._matrix @ self.encode_text(question.text)
            scores.update({d: float(s) for d, s in zip(self._ids, sims)})
        return ranked(scores)
