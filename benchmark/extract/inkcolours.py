"""Text and lines told apart by colour, where a drawing gives them different colours.

The structure reader (:mod:`.generic`) sorts ink into letters and lines by the size of its connected
pieces. Where a line runs through a label (d2's dark theme draws long straight connectors across
shapes and their labels), the letters it touches join the line's piece and are lost to the text, and
a dashed connector's dashes, the size of letters, are lost to the lines. Many tools draw text and
lines in the same colour (Graphviz, Mermaid), but some do not; there the two colours are learned from
the pieces whose kind is plain (a letter clear of any line, a line clear of any letter) and every
doubtful pixel is sorted by them:

- a letter-sized part of a line's piece in the text's colour is a letter;
- a letter-sized piece in the lines' colour is a line (a dash, an arrowhead).

Nothing changes where the colours do not tell the two apart (:data:`SEPARATION_MIN`).
"""
from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from benchmark.extract.components import components, nonzero, pixels_of

#: the two colours tell text from lines when their means lie at least this many standard deviations
#: apart (the Mahalanobis distance under the pooled covariance). Measured on the renders of one
#: diagram: d2's dark theme 3.7, d2's default 3.5; PlantUML 1.3, Mermaid 1.4, Graphviz 0.3.
SEPARATION_MIN = 2.5
#: at most this many pixels of each kind are used to learn the colours (evenly spaced)
SAMPLE = 20000
#: a letter found on a line covers at least this share of the letter height squared
LETTER_AREA_MIN = 0.05


@dataclass(frozen=True)
class ColourRule:
    """Fisher's linear discriminant between text and line pixels: a pixel whose colour projects above
    ``cut`` on ``weights`` is text-coloured."""

    weights: np.ndarray
    cut: float
    separation: float

    def text_coloured(self, rgb_pixels: np.ndarray) -> np.ndarray:
        return rgb_pixels.astype(np.float32) @ self.weights > self.cut


def _spaced(a: np.ndarray, n: int) -> np.ndarray:
    return a if len(a) <= n else a[np.linspace(0, len(a) - 1, n).astype(np.int64)]


def learn_rule(text_pixels: np.ndarray, line_pixels: np.ndarray) -> ColourRule | None:
    """The discriminant between two sets of RGB pixels (rows of 3), or None when either set has fewer
    than 100 pixels.

    >>> rng = np.random.default_rng(0)
    >>> text = rng.normal((200, 210, 240), 8, (500, 3)); line = rng.normal((200, 165, 245), 8, (500, 3))
    >>> rule = learn_rule(text, line)
    >>> bool(rule.separation > SEPARATION_MIN), rule.text_coloured(np.array([[201, 212, 238], [199, 160, 250]])).tolist()
    (True, [True, False])
    >>> grey = learn_rule(rng.normal(60, 8, (500, 3)), rng.normal(62, 8, (500, 3)))
    >>> bool(grey.separation < SEPARATION_MIN)
    True
    """
    if min(len(text_pixels), len(line_pixels)) < 100:
        return None
    t = _spaced(text_pixels, SAMPLE).astype(np.float64)
    ln = _spaced(line_pixels, SAMPLE).astype(np.float64)
    mt, ml = t.mean(0), ln.mean(0)
    pooled = (np.cov(t.T) + np.cov(ln.T)) / 2 + np.eye(3)
    w = np.linalg.solve(pooled, mt - ml)
    separation = float(np.sqrt(max((mt - ml) @ w, 0.0)))
    return ColourRule(w.astype(np.float32), float((mt + ml) @ w / 2), separation)


def sort_by_colour(rgb: np.ndarray, text: np.ndarray, lines: np.ndarray, th: int,
                   lw: int) -> tuple[np.ndarray, np.ndarray, bool]:
    """(text, lines, sorted) with letters taken off the lines they touch and dashes given back to the
    lines, where the drawing's text and lines differ in colour (``sorted`` True); the masks as given
    otherwise. ``text`` is the uint8 letter mask and ``lines`` the bool rest of the ink
    (:func:`.generic.text_layer`), ``th`` the letter height, ``lw`` the line width.

    >>> rgb = np.full((60, 200, 3), 30, np.uint8)
    >>> text = np.zeros((60, 200), np.uint8); lines = np.zeros((60, 200), bool)
    >>> T, L = (205, 214, 244), (200, 165, 245)              # d2's dark theme: text, lines
    >>> for x in range(10, 90, 15): rgb[10:18, x:x + 7] = T; text[10:18, x:x + 7] = 1
    >>> rgb[30:32, :] = L; lines[30:32, :] = True
    >>> rgb[23:30, 100:107] = T; lines[23:30, 100:107] = True   # a letter touching the line
    >>> rgb[45:47, 150:158] = L; text[45:47, 150:158] = 1       # a dash, letter-sized
    >>> noise = np.random.default_rng(0).integers(-6, 7, rgb.shape)
    >>> rgb = np.clip(rgb.astype(int) + noise, 0, 255).astype(np.uint8)
    >>> t, l, by_colour = sort_by_colour(rgb, text, lines, 8, 2)
    >>> int(t[26, 103]), bool(l[31, 103]), bool(l[46, 154]), int(t[46, 154]), by_colour
    (1, True, True, 0, True)
    >>> t, l, by_colour = sort_by_colour(np.full_like(rgb, 200), text, lines, 8, 2)   # one colour: as given
    >>> bool((t == text).all() and (l == lines).all()), by_colour
    (True, False)
    """
    if th <= 0:
        return text, lines, False
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * lw + 1,) * 2)
    near_text = cv2.dilate(text, k) > 0
    near_lines = cv2.dilate(lines.view(np.uint8), k) > 0
    rule = learn_rule(rgb[(text > 0) & ~near_lines], rgb[lines & ~near_text])
    if rule is None or rule.separation < SEPARATION_MIN:
        return text, lines, False
    # letters on lines: text-coloured parts of the line layer, letter-sized, thicker than a line's fringe
    ys, xs = nonzero(lines)
    on = rule.text_coloured(rgb[ys, xs])
    coloured = np.zeros(lines.shape, np.uint8)
    coloured[ys[on], xs[on]] = 1
    core = cv2.morphologyEx(coloured, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, _ = components(coloured)
    w, h, area = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT], stats[:, cv2.CC_STAT_AREA]
    thick = np.zeros(n, bool)
    thick[labels[core > 0]] = True
    letter = thick & (h <= 2.5 * th) & (w <= 4 * th) & (area >= LETTER_AREA_MIN * th * th)
    letter[0] = False
    found = np.zeros(lines.shape, bool)
    fy, fx, _ = pixels_of(coloured, labels, letter)
    found[fy, fx] = True
    # dashes: letter-sized pieces most of whose pixels are in the lines' colour
    n, labels, stats, _ = components(text)
    ys, xs = nonzero(text)
    lab = labels[ys, xs]
    text_votes = np.bincount(lab, weights=rule.text_coloured(rgb[ys, xs]), minlength=n)
    dash = text_votes < stats[:, cv2.CC_STAT_AREA] / 2
    dash[0] = False
    dashes = np.zeros(lines.shape, bool)
    dy, dx, _ = pixels_of(text, labels, dash)
    dashes[dy, dx] = True
    new_text = ((text > 0) & ~dashes) | found
    return new_text.view(np.uint8), (lines & ~found) | dashes, True
