"""all-MiniLM-L6-v2 sentence embeddings computed with torch alone.

The model is a 6-layer BERT encoder followed by mean pooling over the tokens and L2 normalisation
(the three modules its ``modules.json`` lists). :class:`MiniLM` loads the bundled files directly --
``config.json``, ``tokenizer.json`` (the ``tokenizers`` library), ``model.safetensors`` -- and runs the
encoder with ``torch.nn.functional``, the same operations in the same order as ``transformers``'
``BertModel`` with its ``sdpa`` attention and ``sentence-transformers``' ``Pooling`` and ``Normalize``
(``tests/test_embeddings.py`` compares the vectors with ``sentence-transformers``' own). It exists
because importing ``sentence-transformers`` (and with it ``transformers`` and ``scikit-learn``)
takes about 6 s more than importing torch, and a cold run pays that in every process that embeds.

Texts are stripped, tokenized (truncated at the model's ``max_seq_length``), sorted by their
number of tokens so that a batch holds texts of about the same length, and encoded in inference mode
a batch at a time: at most ``batch_size`` texts and at most ``batch_tokens`` tokens, padding included
(one text at least). A batch's attention weights are batch x heads x tokens x tokens: 64 texts of 256
tokens hold 200 MB of them, and on a CPU a batch that large runs out of the caches. With batches of
about 1 024 tokens, 600 contexts of a run (69 tokens on average) took 4.0 s where batches of 64 texts
took 6.0 s, the 735 bundled questions 1.5 s against 1.7 s (two threads).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmark.errors import StageUnavailable

#: the module layout this encoder computes (``modules.json``: the class of each module, in order)
LAYOUT = ("sentence_transformers.models.Transformer", "sentence_transformers.models.Pooling",
          "sentence_transformers.models.Normalize")


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StageUnavailable(f"cannot read {path}: {exc}") from None


class MiniLM:
    """A BERT sentence encoder with mean pooling and L2 normalisation, loaded from ``folder``."""

    def __init__(self, folder: Path | str) -> None:
        import torch
        from safetensors.torch import load_file
        from tokenizers import Tokenizer

        folder = Path(folder)
        layout = tuple(m.get("type") for m in _read_json(folder / "modules.json"))
        if layout != LAYOUT:
            raise StageUnavailable(f"{folder}: modules {', '.join(map(str, layout))} are not the "
                                   f"BERT + mean pooling + normalisation this encoder computes")
        pooling = _read_json(folder / "1_Pooling" / "config.json")
        if not pooling.get("pooling_mode_mean_tokens") or any(
                v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"):
            raise StageUnavailable(f"{folder / '1_Pooling' / 'config.json'}: only mean pooling is computed here")
        cfg = _read_json(folder / "config.json")
        if cfg.get("model_type") != "bert" or cfg.get("hidden_act") != "gelu" or \
                cfg.get("position_embedding_type", "absolute") != "absolute":
            raise StageUnavailable(f"{folder / 'config.json'}: not a BERT encoder with GELU and absolute positions")
        self.max_seq_length = int(_read_json(folder / "sentence_bert_config.json").get("max_seq_length", 512))
        self.hidden = int(cfg["hidden_size"])
        self.heads = int(cfg["num_attention_heads"])
        self.layers = int(cfg["num_hidden_layers"])
        self.eps = float(cfg["layer_norm_eps"])
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.enable_truncation(self.max_seq_length)
        self.tokenizer.no_padding()
        weights = load_file(str(folder / "model.safetensors"))
        self.w = {k.removeprefix("bert."): v for k, v in weights.items()}
        self._torch = torch

    def _forward(self, ids: Any, mask: Any) -> Any:
        """Token embeddings ``(B, T, hidden)`` of a padded batch (``mask`` 1 on tokens, 0 on padding)."""
        torch = self._torch
        F = torch.nn.functional
        w, hidden, heads = self.w, self.hidden, self.heads
        size = hidden // heads
        b, t = ids.shape
        x = F.embedding(ids, w["embeddings.word_embeddings.weight"])
        x = x + w["embeddings.token_type_embeddings.weight"][0]
        x = x + w["embeddings.position_embeddings.weight"][:t]
        x = F.layer_norm(x, (hidden,), w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        # padding is masked out of attention; a batch without padding needs no mask
        attn_mask = None if bool(mask.all()) else mask.bool()[:, None, None, :].expand(b, 1, t, t)
        for i in range(self.layers):
            p = f"encoder.layer.{i}."

            def heads_of(name: str) -> Any:
                y = F.linear(x, w[p + f"attention.self.{name}.weight"], w[p + f"attention.self.{name}.bias"])
                return y.view(b, t, -1, size).transpose(1, 2)

            a = F.scaled_dot_product_attention(heads_of("query"), heads_of("key"), heads_of("value"),
                                               attn_mask=attn_mask, dropout_p=0.0, scale=size ** -0.5)
            a = a.transpose(1, 2).contiguous().reshape(b, t, -1)
            a = F.linear(a, w[p + "attention.output.dense.weight"], w[p + "attention.output.dense.bias"])
            x = F.layer_norm(a + x, (hidden,), w[p + "attention.output.LayerNorm.weight"],
                             w[p + "attention.output.LayerNorm.bias"], self.eps)
            h = F.gelu(F.linear(x, w[p + "intermediate.dense.weight"], w[p + "intermediate.dense.bias"]))
            h = F.linear(h, w[p + "output.dense.weight"], w[p + "output.dense.bias"])
            x = F.layer_norm(h + x, (hidden,), w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"],
                             self.eps)
        return x

    def encode(self, texts: Sequence[str], batch_size: int = 64, batch_tokens: int = 1024) -> np.ndarray:
        """L2-normalised ``float32`` embeddings of ``texts``, one row each, in their order.

        The texts are tokenized first and batched by their number of tokens, longest first, so that a
        batch pads little: sorting by characters (as sentence-transformers does) puts a Cyrillic text,
        three times as many tokens per character, among Latin ones several times shorter. A batch holds
        at most ``batch_size`` texts and ``batch_tokens`` tokens (its longest text's times its count).
        """
        torch = self._torch
        F = torch.nn.functional
        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        if not len(texts):
            return out
        tokens = [e.ids for e in self.tokenizer.encode_batch([str(t).strip() for t in texts])]
        order = sorted(range(len(texts)), key=lambda i: -len(tokens[i]))
        with torch.inference_mode():
            start = 0
            while start < len(order):
                t = len(tokens[order[start]])
                rows = order[start:start + max(1, min(batch_size, batch_tokens // max(t, 1)))]
                start += len(rows)
                ids = torch.zeros((len(rows), t), dtype=torch.long)
                mask = torch.zeros((len(rows), t), dtype=torch.long)
                for j, i in enumerate(rows):
                    ids[j, :len(tokens[i])] = torch.tensor(tokens[i], dtype=torch.long)
                    mask[j, :len(tokens[i])] = 1
                x = self._forward(ids, mask)
                m = mask.unsqueeze(-1).to(x.dtype)
                mean = (x * m).sum(dim=1, dtype=x.dtype) / torch.clamp(m.sum(dim=1, dtype=x.dtype), min=1e-9)
                # normalised twice, as sentence-transformers does (its Normalize module, then encode's
                # normalize_embeddings): the second pass changes last bits, and keeps the vectors equal
                vec = F.normalize(F.normalize(mean, p=2, dim=-1), p=2, dim=1)
                out[rows] = vec.numpy()
        return out
