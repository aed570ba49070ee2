"""Image input for vision models: tile plans, real tiles of real PNGs, label heights measured by d2."""
from __future__ import annotations

import io
import random

import pytest
from PIL import Image

from benchmark import image_input
from benchmark.dataset import DEFAULT_ROOT
from benchmark.image_input import LONG_SIDE, MAX_ASPECT, MAX_PIXELS, MIN_LABEL_PX, plan_tiles, tile_pngs

DIAGRAMS = DEFAULT_ROOT / "diagrams"


def _covered(plan):
    """Every source pixel row and column lies in some tile (tiles overlap or touch)."""
    for axis in (0, 1):
        spans = sorted({(b[axis], b[axis + 2]) for b in plan.boxes})
        if spans[0][0] != 0 or spans[-1][1] != (plan.width, plan.height)[axis]:
            return False
        if any(a[1] < b[0] for a, b in zip(spans, spans[1:])):
            return False
    return True


@pytest.mark.parametrize("seed", range(3))
def test_plans_fit_the_budget_cover_the_image_and_keep_labels_legible(seed):
    rng = random.Random(seed)
    for _ in range(400):
        w, h = rng.randint(40, 30000), rng.choice([rng.randint(40, 30000), rng.randint(40, 2500)])
        label = rng.choice([None, 16.0, 32.0, 56.0])
        plan = plan_tiles(w, h, label)
        sizes = plan.tile_sizes()
        assert all(a * b <= MAX_PIXELS and max(a, b) <= LONG_SIDE for a, b in sizes), (w, h, label, sizes)
        assert _covered(plan), (w, h, label, plan.boxes)
        assert plan.scale <= 1.0
        if plan.tiles > 1:   # a one-tile image needs no scaling by the model, whatever its shape
            assert all(max(a, b) <= MAX_ASPECT * min(a, b) + 1 for a, b in sizes), (w, h, label, sizes)
        if label is not None and not plan.notes:
            assert plan.label_px_input >= MIN_LABEL_PX - 1e-6, (w, h, label, plan.label_px_input)
        assert plan.tiles <= image_input.MAX_TILES or any("aspect" in n for n in plan.notes)


def test_a_wide_diagram_is_tiled_instead_of_shrunk():
    w, h = image_input.png_size(DIAGRAMS / "state_order.png")
    assert w / h > 4
    whole = image_input.fit_scale(w, h)
    plan = plan_tiles(w, h, label_px=32.0)
    assert 32.0 * whole < 8                     # one scaled image leaves labels under 8 px
    assert plan.tiles > 1 and plan.label_px_input >= MIN_LABEL_PX
    tiles = tile_pngs(DIAGRAMS / "state_order.png", plan)
    assert tiles == tile_pngs(DIAGRAMS / "state_order.png", plan)   # deterministic, byte for byte
    got = [Image.open(io.BytesIO(t)).size for t in tiles]
    assert got == plan.tile_sizes()
    assert all(max(a, b) / min(a, b) <= MAX_ASPECT + 0.02 for a, b in got)


def test_a_small_diagram_is_sent_as_it_is():
    data = (DIAGRAMS / "algo_binary_search.png").read_bytes()
    w, h = image_input.png_size(data)
    plan = plan_tiles(w, h, label_px=32.0, long_side=4000, max_pixels=10_000_000)
    assert plan.tiles == 1 and plan.scale == 1.0
    assert tile_pngs(data, plan) == [data]


def test_label_height_is_measured_from_d2s_svg(tmp_path):
    # the dataset's default: 16 px labels in d2's layout, PNG drawn at twice the layout size
    assert image_input.label_height_px(DIAGRAMS / "algo_binary_search.d2", DIAGRAMS / "algo_binary_search.png") == 32.0
    from benchmark.render import render_file

    d2 = tmp_path / "small.d2"
    d2.write_text("a: Alpha\nb: Beta\na -> b: tiny {style.font-size: 9}\n", encoding="utf-8")
    png = tmp_path / "small.png"
    render_file(d2, png)
    ratio = image_input.png_size(png)[0] / image_input.svg_label_sizes(_svg(d2, tmp_path))[0]
    assert image_input.label_height_px(d2, png) == pytest.approx(9 * ratio)


def _svg(d2, tmp_path):
    from benchmark.render import render_file

    out = tmp_path / "check.svg"
    render_file(d2, out)
    return out.read_text(encoding="utf-8")


def test_plan_for_without_a_d2_file_applies_only_the_budget(tmp_path):
    png = DIAGRAMS / "state_order.png"
    plan = image_input.plan_for(png, None)
    assert plan.label_px is None and plan.scale == pytest.approx(image_input.fit_scale(*image_input.png_size(png)))
    measured = image_input.plan_for(png, DIAGRAMS / "state_order.d2")
    assert measured.label_px == 32.0 and measured.label_px_input >= MIN_LABEL_PX


def test_not_a_png_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="not a PNG"):
        image_input.png_size(b"GIF89a....................")
