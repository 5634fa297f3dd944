from __future__ import annotations

import pathlib
import subprocess
import sys
import warnings

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from fontTools.ttLib import TTFont

import attnbook

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_font_is_bundled_with_licence_and_renamed():
    path = attnbook.font_path()
    assert path.exists() and path.stat().st_size < 3_000_000
    assert (path.parent / "OFL.txt").read_text(encoding="utf-8").count("SIL OPEN FONT LICENSE") == 1
    names = TTFont(path)["name"]
    family = names.getDebugName(1)
    assert family == attnbook.FONT_FAMILY
    # the OFL's Reserved Font Name of Noto CJK is "Source"; "Noto" is a trademark
    for name_id in (1, 4, 6, 16):
        value = names.getDebugName(name_id) or ""
        assert "Source" not in value and "Noto" not in value


def test_font_covers_common_hanzi_and_the_book():
    cmap = TTFont(attnbook.font_path()).getBestCmap()
    hanzi = [c for c in cmap if 0x4E00 <= c <= 0x9FFF]
    assert len(hanzi) >= 3500
    used = set()
    for path in list(ROOT.glob("chapters/*.ipynb")) + list(ROOT.glob("appendix/*")) + list(ROOT.glob("*.md")):
        if path.is_file():
            used |= {ord(ch) for ch in path.read_text(encoding="utf-8") if 0x4E00 <= ord(ch) <= 0x9FFF}
    missing = sorted(chr(c) for c in used - set(cmap))
    assert not missing, f"字体子集缺少这些字（运行 tools/make_font_subset.py 重新生成）：{''.join(missing)}"


def test_chinese_plot_has_no_missing_glyph():
    attnbook.setup()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ax = attnbook.heatmap(np.full((3, 3), 1 / 3), row_labels="猫吃鱼", col_labels="猫吃鱼",
                              title="注意力权重（每行和为 1）")
        ax.set_xlabel("键：被看的词，√d_k ≈ 1.414")
        ax.figure.canvas.draw()
    plt.close(ax.figure)


def test_without_setup_chinese_glyphs_are_missing():
    """The check above can fail: matplotlib's default font has no hanzi."""
    code = (
        "import warnings, matplotlib; matplotlib.use('Agg'); import matplotlib.pyplot as plt\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    fig, ax = plt.subplots(); ax.set_title('注意力'); fig.canvas.draw()\n"
        "print(sum('Glyph' in str(x.message) for x in w))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PATH": "/usr/bin", "MPLBACKEND": "Agg"}, check=True)
    assert int(out.stdout.strip()) > 0


def test_heatmap_returns_axes_and_annotates():
    attnbook.setup()
    fig, ax = plt.subplots()
    result = attnbook.heatmap([[0.25, 0.75], [1.0, 0.0]], ax=ax, annotate=True, row_labels=["a", "b"])
    assert result is ax
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["0.25", "0.75", "1.00", "0.00"]
    assert ax.images[0].get_cmap().name == "cividis"
    plt.close(fig)


def test_heatmap_marks_nan_rows():
    attnbook.setup()
    ax = attnbook.heatmap([[np.nan, np.nan], [0.5, 0.5]], annotate=True)
    assert [t.get_text() for t in ax.texts][:2] == ["NaN", "NaN"]
    plt.close(ax.figure)


def test_heatmap_grid_shape():
    attnbook.setup()
    fig = attnbook.heatmap_grid(np.random.rand(6, 4, 4), labels="我爱你们", ncols=4)
    assert len(fig.axes) == 8 and sum(ax.axison for ax in fig.axes) == 6
    plt.close(fig)


def test_split_heads_diagram_draws_the_tensors_own_numbers():
    attnbook.setup()
    t = torch.arange(3 * 8).view(3, 8)  # [seq_len, d_model]
    viewed = t.view(3, 4, 2)  # [seq_len, num_heads, d_k]
    heads = viewed.transpose(0, 1)  # [num_heads, seq_len, d_k]
    ax = attnbook.split_heads_diagram(t, viewed, heads, tokens="猫吃鱼")
    numbers = [int(x.get_text()) for x in ax.texts if x.get_text().isdigit()]
    assert numbers == t.flatten().tolist() * 2 + heads.flatten().tolist()  # three stages, cell by cell
    assert [x.get_text() for x in ax.texts if x.get_text().startswith("头")] == ["头 1", "头 2", "头 3", "头 4"]
    assert "num_heads = 4，d_k = 2" in ax.get_title()
    plt.close(ax.figure)


@pytest.mark.parametrize("bad, arg", [
    (lambda t, v, h: (t[None], v, h), "projected"),           # batch dimension left in
    (lambda t, v, h: (t, v.reshape(3, 8, 1)[:, :3], h), "viewed"),  # num_heads × d_k ≠ d_model
    (lambda t, v, h: (t, v.flip(0), h), "viewed"),            # not a view of projected
    (lambda t, v, h: (t, v, v), "heads"),                     # not transposed
])
def test_split_heads_diagram_rejects_tensors_that_are_not_one_split(bad, arg):
    t = torch.arange(3 * 8).view(3, 8)
    v = t.view(3, 4, 2)
    with pytest.raises(attnbook.AttnBookError, match=arg):
        attnbook.split_heads_diagram(*bad(t, v, v.transpose(0, 1)), tokens="猫吃鱼")


def test_import_changes_nothing():
    code = (
        "import matplotlib, random\n"
        "before = dict(matplotlib.rcParams); state = random.getstate()\n"
        "import attnbook\n"
        "after = dict(matplotlib.rcParams)\n"
        "changed = [k for k in before if before[k] != after[k]]\n"
        "print(changed, random.getstate() == state)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] True"


def test_setup_seeds_and_styles():
    import torch

    attnbook.setup(seed=3)
    a = torch.rand(3)
    attnbook.setup(seed=3)
    assert torch.equal(a, torch.rand(3))
    assert matplotlib.rcParams["font.sans-serif"][0] == attnbook.FONT_FAMILY
    assert matplotlib.rcParams["image.cmap"] == "cividis"


def test_saved_figures_record_their_smallest_drawn_font():
    """Every PNG attnbook saves (inline figures, slider frames) carries the smallest font size of the
    text it draws (tests/site/test_layout.py reads it) and its dpi; text that is never drawn (an Axes
    with axis("off")) does not count."""
    import base64
    import io

    from PIL import Image

    from attnbook.infra.plots import MIN_FONT_KEY, figure_png_with_alt
    from attnbook.infra.sliders import figure_to_png

    attnbook.setup()
    fig, (a, b) = plt.subplots(1, 2, figsize=(4, 2))
    a.plot([1, 2])
    a.tick_params(labelsize=7)
    b.tick_params(labelsize=4)
    b.axis("off")  # its 4 pt tick labels are not drawn
    inline = Image.open(io.BytesIO(base64.b64decode(figure_png_with_alt(fig))))
    frame = Image.open(io.BytesIO(figure_to_png(fig, dpi=100)))
    plt.close(fig)
    for image in (inline, frame):
        assert image.info[MIN_FONT_KEY] == "7"
        assert round(image.info["dpi"][0]) == 100
        image.load()  # the chunk keeps the PNG valid
