"""Words grouped into lines and label blocks, and blocks given to shapes.

Words on one baseline with small gaps form a line; lines stacked closely form a block (a
multi-line label). Dark blocks inside a leaf shape are its label; dark blocks just above or at
the top of a container, or just below a person, label those; grey blocks are edge labels.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import cv2
import numpy as np

from benchmark.extract.components import nonzero
from benchmark.extract.ocr import Word
from benchmark.extract.raster import Raster
from benchmark.extract.shapes import Shape, innermost


def words_box(words: list[Word]) -> tuple[int, int, int, int]:
    """The box (x, y, w, h) round ``words``."""
    x0, y0 = min(w.x for w in words), min(w.y for w in words)
    x1, y1 = max(w.x + w.w for w in words), max(w.y + w.h for w in words)
    return x0, y0, x1 - x0, y1 - y0


@dataclass
class Block:
    """A label: one or more lines of words, with its box and ink class."""

    lines: list[list[Word]] = field(default_factory=list)
    grey: bool = False

    @property
    def words(self) -> list[Word]:
        return [w for line in self.lines for w in line]

    @property
    def box(self) -> tuple[int, int, int, int]:
        return words_box(self.words)

    @property
    def line_height(self) -> float:
        return max(w.h for w in self.words)

    @property
    def centre(self) -> tuple[float, float]:
        x, y, w, h = self.box
        return x + w / 2, y + h / 2

    @property
    def text(self) -> str:
        return "\n".join(" ".join(w.text for w in sorted(line, key=lambda w: w.x)) for line in self.lines)


def group_lines(words: list[Word]) -> list[list[Word]]:
    """Words on one baseline, close together and of one ink class, as lines (top to bottom).

    >>> ws = [Word("Orders", 10, 10, 60, 20, 90, 10), Word("DB", 78, 11, 20, 19, 90, 10),
    ...       Word("reads", 300, 10, 50, 20, 90, 110)]
    >>> [[w.text for w in line] for line in group_lines(ws)]
    [['Orders', 'DB'], ['reads']]
    """
    lines: list[list[Word]] = []
    for w in sorted(words, key=lambda w: (w.x, w.y)):
        best = None
        for line in lines:
            last = line[-1]
            if last.grey != w.grey:
                continue
            top, bottom = max(last.y, w.y), min(last.y + last.h, w.y + w.h)
            overlap = (bottom - top) / max(1, min(last.h, w.h))
            gap = w.x - (last.x + last.w)
            if overlap >= 0.4 and -0.5 * w.h <= gap <= 1.1 * max(last.h, w.h):
                best = line
                break
        if best is None:
            lines.append([w])
        else:
            best.append(w)
    lines.sort(key=lambda ln: (min(w.y for w in ln), min(w.x for w in ln)))
    return lines


def group_blocks(lines: list[list[Word]], apart: list[list[Word]] = ()) -> list[Block]:
    """Lines stacked under each other (centred, small leading, same ink) as blocks. Two lines that
    hold words of one group of ``apart`` are never one block (the lines of two labels set one on the
    other: :func:`reread_stacked_words`).

    >>> ws = [Word("candidates", 10, 10, 100, 16, 96, 109), Word("no", 50, 28, 20, 11, 96, 109)]
    >>> [b.text for b in group_blocks(group_lines(ws))], [b.text for b in group_blocks(group_lines(ws), [ws])]
    (['candidates\\nno'], ['candidates', 'no'])
    """
    group_of = {w: k for k, group in enumerate(apart) for w in group}
    blocks: list[Block] = []
    for line in lines:
        lb = Block([line], line[0].grey)
        lx, ly, lw_, lh = lb.box
        placed = False
        groups = {group_of[w] for w in line if w in group_of}
        for b in blocks:
            if b.grey != lb.grey:
                continue
            if groups and any(group_of.get(w) in groups for w in b.words):
                continue
            bx, by, bw, bh = b.box
            last = Block([b.lines[-1]], b.grey)
            _, ly0, _, lh0 = last.box
            gap = ly - (ly0 + lh0)
            h = max(lh, lh0)
            # d2 centres the lines of a label on each other
            horizontal = abs((bx + bw / 2) - (lx + lw_ / 2)) < max(h, 0.15 * max(bw, lw_))
            if -0.3 * h <= gap <= 0.8 * h and horizontal and abs(lh - lh0) < 0.5 * h:
                b.lines.append(line)
                placed = True
                break
        if not placed:
            blocks.append(lb)
    return blocks


def _line_boxes(blocks: list[Block], factor: int) -> list[tuple[int, int, int, int]]:
    """The blocks' boxes in the full image, ``factor`` times larger than the blocks' coordinates."""
    return [tuple(int(v * factor) for v in b.box) for b in blocks]


def _reread_line(old: list[Word], got: list[tuple[str, float]]) -> list[list[Word]]:
    """A one-line block's words (``old``, in reading order) with the texts and confidences of a new
    reading of as many words, each word keeping its box and ink."""
    return [[Word(text, w.x, w.y, w.w, w.h, conf, w.ink) for w, (text, conf) in zip(old, got)]]


def reread_foreign_labels(blocks: list[Block], rgb, factor: int, lang: str) -> None:
    """Edge labels (grey one-line blocks) with a word written only in letters of the other script
    than the image's own (:func:`.ocr.dominant_script` of all its words) are read again in the
    own script's language alone (:func:`.ocr.reread_in_script`; ``rgb`` is the full image,
    ``factor`` how much larger it is than the blocks' coordinates). The new reading replaces the
    block's words when it has as many words, those written in the own script are unchanged, and
    each changed word is all in the own script and read surely (:data:`.ocr.REREAD_MIN_CONF`, and
    not more than 10 below the first reading's confidence): ``no`` read as Cyrillic ``по`` in an
    English diagram, ``да`` read as ``4a`` in a Russian one. A word of the other language that
    belongs there (``hotfix`` in a Russian label) reads as nothing sure in the own language and stays.
    """
    from benchmark.extract.ocr import REREAD_MIN_CONF, dominant_script, letter_scripts, reread_in_script

    script = dominant_script([w.text for b in blocks for w in b.words])
    if script is None:
        return
    own = 0 if script == "latin" else 1

    def foreign(text: str) -> bool:
        counts = letter_scripts(text)
        return bool(counts[1 - own]) and not counts[own]

    todo = [b for b in blocks if b.grey and len(b.lines) == 1 and any(foreign(w.text) for w in b.words)]
    if not todo:
        return
    for b, got in zip(todo, reread_in_script(rgb, _line_boxes(todo, factor), script, lang)):
        old = sorted(b.lines[0], key=lambda w: w.x)
        if len(got) != len(old):
            continue
        ok = True
        for w, (text, conf) in zip(old, got):
            if text == w.text:
                continue
            counts = letter_scripts(text)
            if not foreign(w.text) or counts[1 - own] or not counts[own] or conf < max(REREAD_MIN_CONF, w.conf - 10):
                ok = False
                break
        if ok:
            b.lines = _reread_line(old, got)


#: an edge label one of whose words tesseract read less surely than this in the image's text
#: mosaic is read again alone (clean words read 95-96 there)
UNSURE_CONF = 93
#: the line read alone replaces the first reading when its words' mean confidence is higher by more
#: than this
REREAD_GAIN = 2.0


def _end_marks(word: str) -> tuple[set[str], set[str]]:
    """The characters other than letters and digits at the start and at the end of ``word``."""
    lead = re.match(r"^[\W_]*", word).group()
    trail = re.search(r"[\W_]*$", word[len(lead):]).group()
    return set(lead), set(trail)


def surer_reading(old: list[tuple[str, float]], new: list[tuple[str, float]]) -> bool:
    """Is ``new`` (a line's words and confidences, read alone) a better reading than ``old`` (the
    same line as the mosaic read it)? It must have as many words, a mean confidence higher by more
    than :data:`REREAD_GAIN`, and no changed word may gain marks at its ends (a connector's stub
    beside a label reads as a quote or a bar).

    >>> surer_reading([("lerts", 92), ("for", 93)], [("alerts", 96), ("for", 95)])
    True
    >>> surer_reading([("poisk", 76)], [("„poisk", 81)]), surer_reading([("da", 90)], [("aa", 91)])
    (False, False)
    >>> surer_reading([("dose", 96), ("limits", 40)], [("dose", 96), ("1", 71), ("limits", 96)])
    False
    """
    if not old or len(new) != len(old):
        return False
    if sum(c for _, c in new) / len(new) <= sum(c for _, c in old) / len(old) + REREAD_GAIN:
        return False
    for (was, _), (now, _) in zip(old, new):
        if now != was:
            (lead, trail), (lead0, trail0) = _end_marks(now), _end_marks(was)
            if not (lead <= lead0 and trail <= trail0):
                return False
    return True


def reread_unsure_labels(blocks: list[Block], rgb, factor: int, lang: str) -> None:
    """Edge labels (grey one-line blocks) with a word tesseract read less surely than
    :data:`UNSURE_CONF` are read again alone (:func:`.ocr.read_lines`; ``rgb`` is the full image,
    ``factor`` how much larger it is than the blocks' coordinates), and the new reading replaces
    the first when it is surer (:func:`surer_reading`). In the mosaic of all the image's text
    tesseract sometimes drops a word's first letter or misreads one (``lerts for investigation``,
    ``site-to-site [Р5ес``); read alone, the line reads right and more surely.
    """
    from benchmark.extract.ocr import fix_script, read_lines

    todo = [b for b in blocks if b.grey and len(b.lines) == 1 and min(w.conf for w in b.words) < UNSURE_CONF]
    if not todo:
        return
    for b, got in zip(todo, read_lines(rgb, _line_boxes(todo, factor), lang)):
        old = sorted(b.lines[0], key=lambda w: w.x)
        got = [(fix_script(t), c) for t, c in got]
        if surer_reading([(w.text, w.conf) for w in old], got):
            b.lines = _reread_line(old, got)


#: a grey word at least this many times as tall as the image's tall grey words (the
#: :data:`STACKED_QUANTILE` percentile of their heights: words with ascenders and descenders)
#: holds two lines of text
STACKED_HEIGHT, STACKED_QUANTILE = 1.3, 90
#: a reading of such a word holds two lines when the middles of two of its words are this many tall
#: words' heights apart up and down
STACKED_ROWS = 0.4
#: tesseract's page segmentation modes a stacked region is read again in: a block of lines, and
#: sparse text
STACKED_MODES = (6, 11)


def tall_height(words: list[Word]) -> float:
    """The height of ``words``' tall words: the :data:`STACKED_QUANTILE` percentile of the heights of
    those holding a letter or digit (words with ascenders and descenders; 0 without any).

    >>> tall_height([Word(t, 0, 0, 10, h, 90, 109) for t, h in [("no", 11), ("yes", 15), ("pull", 16), ("|", 40)]])
    15.8
    """
    hs = [w.h for w in words if any(c.isalnum() for c in w.text)]
    return float(np.percentile(hs, STACKED_QUANTILE)) if hs else 0.0


def _sure_letters(words: list[Word]) -> int:
    """Letters and digits in the words read at least :data:`.ocr.REREAD_MIN_CONF` sure."""
    from benchmark.extract.ocr import REREAD_MIN_CONF

    return sum(sum(c.isalnum() for c in w.text) for w in words if w.conf >= REREAD_MIN_CONF)


def stacked_regions(words: list[Word]) -> tuple[list[list[int]], float]:
    """Groups of ``words`` (their indexes) round each grey word that holds two lines of text
    (:data:`STACKED_HEIGHT`), and the tall words' height. A group grows from its tall word by the
    grey words whose rows meet its box and that lie within half a tall word's height of it beside it;
    groups that share a word are one.

    >>> ws = [Word("open", 100, 10, 40, 22, 96, 109), Word("assive", 48, 4, 50, 46, 82, 109),
    ...       Word("timeo", 0, 28, 45, 22, 92, 109), Word("far", 300, 10, 30, 30, 96, 109),
    ...       Word("send", 0, 200, 40, 30, 96, 109), Word("yes", 0, 300, 30, 22, 96, 109),
    ...       Word("no", 0, 400, 20, 22, 96, 109), Word("by", 0, 500, 20, 30, 96, 109),
    ...       Word("Shape", 0, 600, 60, 60, 96, 16)]
    >>> stacked_regions(ws)
    ([[0, 1, 2]], 34.8)
    """
    grey = [i for i, w in enumerate(words) if w.grey and any(c.isalnum() for c in w.text)]
    if not grey:
        return [], 0.0
    full = tall_height([words[i] for i in grey])
    regions: list[set[int]] = []
    for i in grey:
        if words[i].h < STACKED_HEIGHT * full:
            continue
        region = {i}
        grown = True
        while grown:
            x0, y0, w, h = words_box([words[j] for j in region])
            near = {j for j in grey if j not in region and words[j].y < y0 + h and words[j].y + words[j].h > y0
                    and words[j].x < x0 + w + full / 2 and words[j].x + words[j].w > x0 - full / 2}
            region |= near
            grown = bool(near)
        for other in [r for r in regions if r & region]:
            regions.remove(other)
            region |= other
        regions.append(region)
    return sorted(sorted(r) for r in regions), full


def reread_stacked_words(words: list[Word], rgb, factor: int, lang: str) -> tuple[list[Word], list[list[Word]]]:
    """``words`` with each group of :func:`stacked_regions` read again alone when that reads it
    better, and the words of each group read again (its lines are labels apart: :func:`group_blocks`).

    d2 puts a connector's label at its middle without moving it off other labels, so two labels
    are sometimes set one just above the other, or overlapping (``candidates`` over ``no``,
    ``passive open`` over ``timeout``, ``pull`` beside a raised ``/api``). In the mosaic of all the
    image's text tesseract reads such a pair as one word two lines tall and loses the other label.
    Each group (its box in the full image, ``rgb``; ``factor`` times the words' coordinates) is read
    again in each of :data:`STACKED_MODES`, all groups in one tesseract call per mode. A reading
    replaces the group's words when it holds two lines (:data:`STACKED_ROWS`), none of its words is
    two lines tall, and it has more letters read surely (:func:`_sure_letters`) than the group had;
    of two such readings, the one with more. (A word whose box alone is too tall, ``о`` in
    ``отчёт о тестировании``, reads again as one line and is left to :func:`reread_unsure_labels`.)
    """
    from benchmark.extract.ocr import fix_script, read_crops

    regions, full = stacked_regions(words)
    if not regions:
        return words, []
    boxes = [tuple(v * factor for v in words_box([words[j] for j in region])) for region in regions]
    readings = [read_crops(rgb, boxes, lang, psm, pad=max(4, int(full * factor / 2))) for psm in STACKED_MODES]
    drop: set[int] = set()
    added: list[list[Word]] = []
    for k, region in enumerate(regions):
        had = _sure_letters([words[j] for j in region])
        best, best_score = None, None
        for reading in readings:
            new = [Word(fix_script(w.text), w.x, w.y, w.w, w.h, w.conf, w.ink).scaled(1 / factor)
                   for w in reading[k] if any(c.isalnum() for c in w.text)]
            if not new or any(w.h >= STACKED_HEIGHT * full for w in new):
                continue   # still a word two lines tall
            if max(w.cy for w in new) - min(w.cy for w in new) < STACKED_ROWS * full:
                continue   # one line: no label was hidden under another here
            score = (_sure_letters(new), sum(w.conf for w in new) / len(new))
            if score[0] > had and (best_score is None or score > best_score):
                best, best_score = new, score
        if best is not None:
            drop |= set(region)
            added.append(best)
    kept = [w for i, w in enumerate(words) if i not in drop]
    return sorted(kept + [w for group in added for w in group], key=lambda w: (w.y, w.x)), added


#: d2 writes edge labels in italics leaning about this much (x shift per pixel of height)
ITALIC_SLANT = 0.2
#: a blank column run inside a word at least this share of its height, and at least
#: :data:`SPACE_OVER_GAP` times the largest of its other gaps, is a space tesseract missed
SPACE_MIN_SHARE, SPACE_OVER_GAP = 0.25, 1.8


def ink_gaps(ink) -> list[tuple[int, int]]:
    """(start, length) of the blank column runs between the first and last inked column.

    >>> import numpy as np
    >>> m = np.zeros((3, 12), bool); m[:, [1, 2, 4, 9, 10]] = True
    >>> ink_gaps(m)
    [(3, 1), (5, 4)]
    """
    import numpy as np

    cols = np.asarray(ink).any(axis=0)
    xs = np.nonzero(cols)[0]
    if len(xs) == 0:
        return []
    out, start = [], None
    for x in range(int(xs[0]), int(xs[-1]) + 1):
        if not cols[x] and start is None:
            start = x
        elif cols[x] and start is not None:
            out.append((start, x - start))
            start = None
    return out


def split_run_together(blocks: list[Block], rgb, factor: int) -> None:
    """Edge-label words tesseract ran together over a space (``багв`` for ``баг в``,
    ``срешением`` for ``с решением``: single-letter words in italics) are split where the
    word's ink, straightened (:data:`ITALIC_SLANT`), has one blank run much wider than its gaps
    between letters (:data:`SPACE_MIN_SHARE` of the line's height, :data:`SPACE_OVER_GAP`); the
    space goes in at the
    letter that far along the word. ``rgb`` is the full image, ``factor`` how much larger it is
    than the words' coordinates.
    """
    import numpy as np

    from benchmark.extract.ocr import fix_script
    from benchmark.extract.raster import make_raster

    for b in blocks:
        if not b.grey:
            continue
        changed = False
        lines = []
        for line in b.lines:
            new_line = []
            for w in sorted(line, key=lambda w: w.x):
                letters = sum(c.isalpha() for c in w.text)
                parts = None
                if letters >= 3 and letters == len(w.text):
                    x0, y0, ww, hh = (int(round(v * factor)) for v in (w.x, w.y, w.w, w.h))
                    crop = rgb[y0:y0 + hh, x0:x0 + ww]
                    if crop.size:
                        ink = make_raster(crop, measure=False).ink.astype(np.uint8)
                        parts = _split_at_space(w.text, ink, factor * max(v.h for v in line))
                if parts is None:
                    new_line.append(w)
                    continue
                changed = True
                k = len(parts[0]) / len(w.text)
                cut = int(round(w.w * k))
                # each part is a word of its own, its script made one as every word read is
                new_line.append(Word(fix_script(parts[0]), w.x, w.y, max(1, cut), w.h, w.conf, w.ink))
                new_line.append(Word(fix_script(parts[1]), w.x + cut, w.y, max(1, w.w - cut), w.h, w.conf, w.ink))
            lines.append(new_line)
        if changed:
            b.lines = lines


def _split_at_space(text: str, ink, height: float) -> tuple[str, str] | None:
    """``text`` cut in two at the one wide blank run of its ink, or None. The ink is straightened
    at slants around :data:`ITALIC_SLANT`; the run must be wide at each of them (a gap between
    two letters only looks wide at the wrong slant), and much wider than the other gaps at the
    font's slant and those next to it. ``height`` is the text line's height.

    >>> import numpy as np
    >>> m = np.zeros((16, 40), np.uint8)
    >>> for x in (0, 5, 10, 26): m[6:10, x:x + 3] = 1     # letters, then a space, a letter
    >>> _split_at_space("багв", m, 16)
    ('баг', 'в')
    >>> m[:, 26:29] = 0; m[6:10, 16:19] = 1
    >>> _split_at_space("багв", m, 16) is None
    True
    """
    import cv2
    import numpy as np

    hh, ww = ink.shape
    found = []
    for slant in (ITALIC_SLANT - 0.1, ITALIC_SLANT - 0.05, ITALIC_SLANT, ITALIC_SLANT + 0.05, ITALIC_SLANT + 0.1):
        shear = np.float32([[1, slant, -slant * hh / 2], [0, 1, 0]])
        straight = cv2.warpAffine(ink, shear, (ww, hh), flags=cv2.INTER_NEAREST) > 0
        gaps = ink_gaps(straight)
        if len(gaps) < 2:
            return None
        widest = max(gaps, key=lambda g: g[1])
        others = max(g[1] for g in gaps if g is not widest)
        if widest[1] < SPACE_MIN_SHARE * height:
            return None
        # far from the font's slant the gaps between letters widen too (``в груди`` at 0.3)
        if abs(slant - ITALIC_SLANT) < 0.075 and widest[1] < SPACE_OVER_GAP * max(1, others):
            return None
        cols = straight.any(axis=0).nonzero()[0]
        found.append((widest[0] + widest[1] / 2 - cols[0]) / max(1, cols[-1] - cols[0]))
    k = int(round(float(np.median(found)) * len(text)))
    if not 0 < k < len(text):
        return None
    return text[:k], text[k:]


#: a grey block whose ink lies this close to one straight line (standard deviation across it,
#: in line heights) over at least :data:`DASH_MIN_LENGTH` line heights is a dashed connector
#: tesseract read as text (``eee``, ``---7``, a column of ``1``), not a label
DASH_MAX_SPREAD, DASH_MIN_LENGTH = 0.12, 3.0


def is_dashed_stroke(block: Block, ink) -> bool:
    """Is the block's ink (``ink``: the image's text-ink mask, in the blocks' coordinates) one
    thin straight line (d2 draws data-flow connectors dashed in grey, the colour of edge labels)?

    >>> import numpy as np
    >>> from benchmark.extract.ocr import Word
    >>> ink = np.zeros((40, 120), bool); ink[20, 10:100:6] = ink[20, 11:100:6] = ink[20, 12:100:6] = True
    >>> dash = Block([[Word("eee", 10, 15, 90, 10, 20, 110)]], grey=True)
    >>> ink2 = np.zeros((40, 120), bool); ink2[14:24, 10:100] = np.random.default_rng(0).random((10, 90)) > 0.6
    >>> text = Block([[Word("cache miss", 10, 14, 90, 10, 90, 110)]], grey=True)
    >>> is_dashed_stroke(dash, ink), is_dashed_stroke(text, ink2)
    (True, False)
    """
    import numpy as np

    x, y, w, h = block.box
    lh = block.line_height
    ys, xs = nonzero(ink[max(0, y):y + h, max(0, x):x + w])
    if len(xs) < 8:
        return False
    pts = np.stack([xs, ys], axis=1).astype(float)
    pts -= pts.mean(axis=0)
    vals, vecs = np.linalg.eigh(np.cov(pts.T))
    spread, length = float(np.sqrt(max(vals[0], 0.0))), float(np.ptp(pts @ vecs[:, 1]))
    return spread <= DASH_MAX_SPREAD * lh and length >= DASH_MIN_LENGTH * lh


def split_across_shapes(blocks: list[Block], shapes: list[Shape]) -> list[Block]:
    """``blocks`` with each dark block whose words lie in different shapes split into one block per
    shape: the labels of boxes side by side in a row, set on one baseline with gaps no wider than a
    word's, run together into one line (a handwritten font's wide spacing). A block with a word
    outside every shape is kept whole (a label drawn outside its shape).

    >>> from types import SimpleNamespace as NS
    >>> box = lambda i, x0, x1: NS(index=i, area=(x1 - x0) * 40, is_container=False,
    ...                            contains=lambda x, y: x0 <= x <= x1 and 0 <= y <= 40)
    >>> ws = [Word(t, x, 15, 30, 10, 90, 10) for t, x in [("Rate", 10, ), ("limit", 45), ("Audit", 85), ("log", 120)]]
    >>> [b.text for b in split_across_shapes([Block([ws])], [box(0, 0, 78), box(1, 80, 160)])]
    ['Rate limit', 'Audit log']
    >>> [b.text for b in split_across_shapes([Block([ws])], [box(0, 0, 160)])]
    ['Rate limit Audit log']
    """
    leaves = [s for s in shapes if not s.is_container]
    out: list[Block] = []
    for b in blocks:
        if b.grey:
            out.append(b)
            continue
        owners = {id(w): innermost(leaves, (w.x + w.w / 2, w.y + w.h / 2)) for w in b.words}
        found = list(dict.fromkeys(owners.values()))
        if len(found) < 2 or None in found:
            out.append(b)
            continue
        for o in found:
            lines = [[w for w in line if owners[id(w)] == o] for line in b.lines]
            out.append(Block([line for line in lines if line], b.grey))
    return out


def assign_node_labels(blocks: list[Block], shapes: list[Shape],
                       outside: dict[int, list[tuple[int, int, int, int]]] | None = None,
                       used: set[int] | None = None, persons_below: bool = False) -> dict[int, str]:
    """Label text per shape index, from the dark blocks (grey ones are left for edges). With
    ``persons_below`` (d2's renders, where only a person's label goes below it), a shape left without
    a label takes a block just below it that no shape took, and becomes a ``person``.

    Boxes of labels drawn outside their shape (below a person, above a container) are added to
    ``outside`` when given: connectors may end at them. ``used`` collects the indices of the
    blocks that became node labels. A container takes one block, the one nearest the place of its
    title (above it or at its top); other blocks there are edge labels.
    """
    by_shape: dict[int, list[Block]] = {}
    leaves = [s for s in shapes if not s.is_container]
    titles: dict[int, tuple[float, int, Shape]] = {}   # container -> the block nearest its title's place

    def take(owner: Shape, bi: int) -> None:
        b = blocks[bi]
        by_shape.setdefault(owner.index, []).append(b)
        if used is not None:
            used.add(bi)
        if outside is not None and not owner.contains(*b.centre):
            outside.setdefault(owner.index, []).append(b.box)

    for bi, b in enumerate(blocks):
        if b.grey:
            continue
        cx, cy = b.centre
        inside = [s for s in leaves if s.contains(cx, cy)]
        if inside:
            take(min(inside, key=lambda s: s.area), bi)
            continue
        found = _outside_owner(b, shapes)
        if found is None:
            continue
        score, owner = found
        if not owner.is_container:
            take(owner, bi)
        elif owner.index not in titles or score < titles[owner.index][0]:
            # a container has one title: of the blocks at its top, the nearest; the others (edge
            # labels near its outline) are left for the edges
            titles[owner.index] = (score, bi, owner)
    for _, bi, owner in titles.values():
        take(owner, bi)
    # a person a grid layout stretched to its column's width no longer looks like one (a flat head
    # over a flat body): a shape left without a label takes a block no shape took, just below it,
    # where d2 puts a person's label, and is a person
    taken = {id(b) for bs in by_shape.values() for b in bs}
    for bi, b in enumerate(blocks if persons_below else ()):
        if b.grey or id(b) in taken or any(s.contains(*b.centre) for s in leaves):
            continue
        found = _below_owner(b, [s for s in leaves if s.index not in by_shape])
        if found is not None:
            take(found, bi)
            found.kind = "person"
    labels: dict[int, str] = {}
    for idx, bs in by_shape.items():
        bs.sort(key=lambda b: (b.box[1], b.box[0]))
        labels[idx] = "\n".join(b.text for b in bs)
    return labels


#: darkest a pixel of a node label is (d2 writes them near-black; edge labels are grey)
LABEL_LUM_MAX = 100
#: unread label ink in a shape, in line widths squared, that makes it worth reading again
UNREAD_INK_MIN = 4
#: least confidence of a word read again in a shape with no label
READ_AGAIN_MIN_CONF = 60


def read_unlabelled(labels: dict[int, str], shapes: list[Shape], r: Raster, words: list[Word], rgb: np.ndarray,
                    factor: int, lang: str) -> None:
    """Labels for the shapes left without one that hold dark text no word was read from: tesseract's
    sparse-text reading of the whole image skips some short labels (``КТ`` alone in a box). Each
    such shape's unread ink is read again as one line (:func:`.ocr.read_lines`, one call for all;
    ``rgb`` is the full image, ``factor`` how much larger than ``r``); what it reads is its label."""
    from benchmark.extract.ocr import fix_script, read_lines

    lw = r.line_width
    todo, boxes = [], []
    for s in shapes:
        if s.is_container or labels.get(s.index):
            continue
        x, y, w, h = s.box
        inner = np.zeros((h, w), np.uint8)
        cv2.drawContours(inner, [s.contour - np.array([x, y], np.int32)], -1, 1, thickness=cv2.FILLED)
        inner = cv2.erode(inner, np.ones((4 * lw + 1, 4 * lw + 1), np.uint8))
        dark = (r.ink[y:y + h, x:x + w] & (r.lum[y:y + h, x:x + w] <= LABEL_LUM_MAX) & (inner > 0)).astype(np.uint8)
        for wd in words:   # ink OCR read already (the rest of a label cut by a connector)
            dark[max(0, wd.y - y - lw):max(0, wd.y + wd.h - y + lw), max(0, wd.x - x - lw):max(0, wd.x + wd.w - x + lw)] = 0
        if cv2.countNonZero(dark) < UNREAD_INK_MIN * lw * lw:
            continue
        bx, by, bw, bh = cv2.boundingRect(dark)
        todo.append(s.index)
        boxes.append(tuple(int(v * factor) for v in (x + bx, y + by, bw, bh)))
    for i, got in zip(todo, read_lines(rgb, boxes, lang)):
        text = " ".join(fix_script(t) for t, c in got if c >= READ_AGAIN_MIN_CONF and any(ch.isalnum() for ch in t))
        if text:
            labels[i] = text



def _below(b: Block, s: Shape) -> float | None:
    """How far below shape ``s``'s bottom block ``b`` lies, when it lies where d2 puts a person's
    label (under the shape, within two and a half of its lines); else None."""
    x, y, w, h = b.box
    lh = b.line_height
    sx, sy, sw, sh = s.box
    d = y - (sy + sh)
    return abs(d) if sx - lh <= x + w / 2 <= sx + sw + lh and -0.5 * lh <= d <= 2.5 * lh else None


def _below_owner(b: Block, shapes: list[Shape]) -> Shape | None:
    """Of ``shapes``, the one the block lies just below (:func:`_below`; the nearest, None when none)."""
    near = [(d, s.index, s) for s in shapes if (d := _below(b, s)) is not None]
    return min(near)[2] if near else None


def _outside_owner(b: Block, shapes: list[Shape]) -> tuple[float, Shape] | None:
    """The person (label below it) or container (label above or at its top) a block belongs to, with
    how far the block lies from where that label goes (in pixels)."""
    x, y, w, h = b.box
    cx = x + w / 2
    lh = b.line_height
    best: tuple[float, Shape] | None = None
    for s in shapes:
        sx, sy, sw, sh = s.box
        if not (sx - lh <= cx <= sx + sw + lh):
            continue
        if s.kind == "person" and not s.is_container:
            below = _below(b, s)
            if below is None:
                continue
            score = below
        elif s.is_container:
            below = sy - (y + h)               # label above the container (dagre)
            inside = y - sy                    # label inside, at the top (elk, nested)
            if -0.5 * lh <= below <= 2.5 * lh:
                score = abs(below)
            elif 0 <= inside <= 2.5 * lh and not any(
                    shapes[c].contains(cx, y + h / 2, margin=lh / 2) for c in s.children):
                score = inside
            else:
                continue
        else:
            continue
        if best is None or score < best[0]:
            best = (score, s)
    return best


#: marks a connector's stub beside an edge label is read as, where it touches the label's first or
#: last letter: a comma, low quotes, an underscore, a bar. No label starts or ends with one
STUB_MARKS = ",‚„_|"


def without_stub_marks(text: str) -> str:
    """An edge label without the marks (``STUB_MARKS``) at its start and end that a connector's stub
    beside it is read as.

    >>> without_stub_marks("trigger,"), without_stub_marks("‚стенд готов"), without_stub_marks("yes, retry")
    ('trigger', 'стенд готов', 'yes, retry')
    """
    return text.strip().strip(STUB_MARKS).strip()


def slug(text: str) -> str:
    """An id from a label: lower case, words joined by '-', letters of any script kept.

    >>> slug("Orders DB")
    'orders-db'
    >>> slug("Is user\\nauthenticated?")
    'is-user-authenticated'
    >>> slug("Сервис заказов")
    'сервис-заказов'
    """
    t = unicodedata.normalize("NFKC", text).lower()
    t = re.sub(r"[^\w]+", "-", t, flags=re.UNICODE).strip("-_")
    return t or "node"
