"""Sliders that work everywhere.

* In a live kernel (JupyterLab, Notebook, Colab; ipywidgets 7.7 or 8.x) the controls are
  ipywidgets and the figure is redrawn on every change.
* In the static site (and whenever ``ATTNBOOK_STATIC=1``, which the book's build, ``make execute``
  and the tests set) every frame is precomputed and the controls are plain HTML driven by a few
  lines of inline JavaScript: no kernel, no external script, no random ids.
"""
from __future__ import annotations

import base64
import html as _html
import io
import itertools
import json
import os
from typing import Any, Callable, Mapping, Sequence

from .errors import AttnBookError, fail

MAX_FRAMES = 120
_JS = (
    "(function(){var root=document.currentScript.parentElement;"
    "var inputs=root.querySelectorAll('[data-key]');"
    "function show(){var idx=[];inputs.forEach(function(el){idx.push(el.value);"
    "var out=root.querySelector('output[data-for=\"'+el.dataset.key+'\"]');"
    "if(out){out.textContent=JSON.parse(el.dataset.labels)[el.value];}});"
    "var key=idx.join(',');root.querySelectorAll('img[data-frame]').forEach(function(im){"
    "im.style.display=(im.dataset.frame===key)?'block':'none';});}"
    "inputs.forEach(function(el){el.addEventListener('input',show);el.addEventListener('change',show);});"
    "show();})();"
)


def static_mode() -> bool:
    """True when sliders should be precomputed HTML rather than live widgets."""
    if os.environ.get("ATTNBOOK_STATIC", "").lower() in ("1", "true", "yes"):
        return True
    try:
        import ipywidgets  # noqa: F401
        from IPython import get_ipython
    except ImportError:
        return True
    ip = get_ipython()
    return ip is None or getattr(ip, "kernel", None) is None


def _format(value: Any) -> str:
    if isinstance(value, bool):
        return "是" if value else "否"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def figure_to_png(fig, *, dpi: int = 100, compact: bool = True) -> bytes:
    """Render a matplotlib Figure to PNG bytes (no timestamp, optionally palette-compressed).

    The transparency of the figure's background is kept, so the frame sits on the page's own
    background in the site's light and dark modes. The PNG keeps its dpi (pHYs) and records the
    figure's smallest font size (``plots.MIN_FONT_KEY``)."""
    from .plots import recording_font_sizes, with_min_font

    buffer = io.BytesIO()
    with recording_font_sizes() as sizes:
        fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    data = buffer.getvalue()
    if compact:
        from PIL import Image

        image = Image.open(io.BytesIO(data)).convert("RGBA")
        small = io.BytesIO()
        image.quantize(colors=256, method=Image.Quantize.FASTOCTREE, dither=Image.Dither.NONE).save(
            small, format="png", optimize=True, dpi=(dpi, dpi))
        if small.tell() < len(data):
            data = small.getvalue()
    return with_min_font(data, sizes)


class Slider:
    """A figure function plus a grid of values for each of its parameters.

    Args:
        fig_fn: ``fig_fn(**params) -> matplotlib Figure`` (an ``Axes`` is accepted too). It must
            be pure: same parameters, same figure.
        controls: ``{"d_k": [1, 2, 4, ...], "scaled": [True, False]}``: the values each
            parameter may take. Lists of ≥ 3 numbers become sliders; other lists become menus.
        initial: the starting value of some parameters (default: the middle of each list).
        labels: text shown before each control (default: the parameter name).
        dpi: resolution of the frames (100, as the book's other figures: its 10 pt text is then
            ≥ 13.3 CSS px on the page, the size tests/site/test_layout.py requires).
        alt: what the figure shows, in Chinese (default: derived from the figure's titles and
            axis labels); each frame's alt text adds the values of the controls.
    """

    def __init__(
        self,
        fig_fn: Callable[..., Any],
        controls: Mapping[str, Sequence[Any]],
        *,
        initial: Mapping[str, Any] | None = None,
        labels: Mapping[str, str] | None = None,
        dpi: int = 100,
        alt: str = "",
    ) -> None:
        if not callable(fig_fn):
            raise fail("fig_fn", fig_fn, "一个函数：fig_fn(**参数) 返回 matplotlib 的 Figure")
        if not isinstance(controls, Mapping) or not controls:
            raise fail("controls", controls, '非空字典，例如 {"d_k": [1, 2, 4, 8]}')
        self.fig_fn = fig_fn
        self.controls: dict[str, list[Any]] = {}
        for key, values in controls.items():
            if not isinstance(key, str) or not key.isidentifier():
                raise fail("controls", key, "合法的参数名（字符串键）")
            if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) and not hasattr(values, "__iter__"):
                raise fail(f"controls['{key}']", values, "一串取值（列表）")
            values = list(values)
            if not values:
                raise fail(f"controls['{key}']", values, "至少包含一个取值的列表")
            self.controls[key] = values
        n_frames = 1
        for values in self.controls.values():
            n_frames *= len(values)
        if n_frames > MAX_FRAMES:
            raise fail("controls", {k: len(v) for k, v in self.controls.items()},
                       f"总帧数不超过 {MAX_FRAMES} 的网格（现在是 {n_frames} 帧，请减少取值）")
        self.initial: dict[str, Any] = {k: v[(len(v) - 1) // 2] for k, v in self.controls.items()}
        for key, value in dict(initial or {}).items():
            if key not in self.controls:
                raise fail("initial", key, f"controls 中的参数名之一：{list(self.controls)}")
            if value not in self.controls[key]:
                raise fail(f"initial['{key}']", value, f"controls['{key}'] 里的取值之一：{self.controls[key]}")
            self.initial[key] = value
        labels = dict(labels or {})
        for key in labels:
            if key not in self.controls:
                raise fail("labels", key, f"controls 中的参数名之一：{list(self.controls)}")
        self.labels = {k: labels.get(k, k) for k in self.controls}
        if not isinstance(dpi, int) or not 20 <= dpi <= 300:
            raise fail("dpi", dpi, "20 到 300 之间的整数")
        self.dpi = dpi
        self.alt = alt
        self._cache: dict[tuple, bytes] = {}
        self._alts: dict[tuple[int, ...], str] = {}

    # -- frames ---------------------------------------------------------------------------
    def _figure(self, params: Mapping[str, Any]):
        result = self.fig_fn(**params)
        fig = getattr(result, "figure", result) if not hasattr(result, "savefig") else result
        if not hasattr(fig, "savefig"):
            raise AttnBookError(
                f"fig_fn 应返回 matplotlib 的 Figure（或 Axes），但对参数 {dict(params)} 返回了 "
                f"{type(result).__name__}。")
        return fig

    def render(self, params: Mapping[str, Any] | None = None, *, compact: bool = True) -> bytes:
        """PNG bytes of the figure for ``params`` (defaults: ``initial``). Cached."""
        import matplotlib.pyplot as plt

        full = dict(self.initial)
        full.update(params or {})
        key = (tuple(self.controls[k].index(full[k]) for k in self.controls), compact)
        if key not in self._cache:
            fig = self._figure(full)
            try:
                from .plots import figure_alt

                self._alts[key[0]] = figure_alt(fig)
                self._cache[key] = figure_to_png(fig, dpi=self.dpi, compact=compact)
            finally:
                plt.close(fig)
        return self._cache[key]

    def frames(self) -> dict[tuple[int, ...], bytes]:
        """Every frame, keyed by the index of each parameter's value."""
        out = {}
        for index in itertools.product(*(range(len(v)) for v in self.controls.values())):
            params = {k: self.controls[k][i] for k, i in zip(self.controls, index)}
            out[index] = self.render(params)
        return out

    # -- static HTML ------------------------------------------------------------------------
    def html(self) -> str:
        """Self-contained HTML: controls, precomputed frames, inline JS. Deterministic."""
        esc = _html.escape
        parts = ['<div class="attnbook-slider" style="margin:0.5em 0">',
                 '<div class="attnbook-controls" style="display:flex;flex-wrap:wrap;gap:1.2em;'
                 'align-items:center;font-size:0.9em">']
        for key, values in self.controls.items():
            start = values.index(self.initial[key])
            shown = [_format(v) for v in values]
            data = f'data-key="{esc(key)}" data-labels="{esc(json.dumps(shown, ensure_ascii=False))}"'
            label = esc(self.labels[key])
            if _is_slider(values):
                parts.append(
                    f'<label>{label} <input type="range" min="0" max="{len(values) - 1}" step="1" '
                    f'value="{start}" {data} aria-label="{label}" style="vertical-align:middle"> '
                    f'<output data-for="{esc(key)}">{esc(shown[start])}</output></label>')
            else:
                options = "".join(
                    f'<option value="{i}"{" selected" if i == start else ""}>{esc(s)}</option>'
                    for i, s in enumerate(shown))
                parts.append(f'<label>{label} <select {data} aria-label="{label}">{options}</select></label>')
        parts.append("</div><div class=\"attnbook-frames\">")
        start_index = tuple(self.controls[k].index(self.initial[k]) for k in self.controls)
        frames = self.frames()
        keys = key_frames(list(frames), start_index)
        for index, png in frames.items():
            params = "，".join(f"{self.labels[k]} = {_format(self.controls[k][i])}"
                              for k, i in zip(self.controls, index))
            base = self.alt or self._alts.get(index, "图")
            alt = esc(f"{base}（滑块取值：{params}）")
            display = "block" if index == start_index else "none"
            src = base64.b64encode(png).decode("ascii")
            img = (f'<img data-frame="{",".join(map(str, index))}" alt="{alt}" '
                   f'style="display:{display};max-width:100%;height:auto" '
                   f'src="data:image/png;base64,{src}">')
            if index in keys:  # printed as a grid of labelled key frames (see _PRINT_CSS)
                img = (f'<figure class="attnbook-key" style="margin:0">{img}'
                       f'<figcaption class="attnbook-caption">{esc(params)}</figcaption></figure>')
            parts.append(img)
        parts.append(f"</div><style>{_PRINT_CSS}</style><script>{_JS}</script></div>")
        return "".join(parts)

    # -- live widgets --------------------------------------------------------------------------
    def widget(self):
        """An ipywidgets box (ipywidgets 7.7 or 8.x) whose image redraws on every change."""
        import ipywidgets as W

        controls = {}
        for key, values in self.controls.items():
            options = [(_format(v), i) for i, v in enumerate(values)]
            start = values.index(self.initial[key])
            common = dict(options=options, value=start, description=self.labels[key],
                          style={"description_width": "initial"})
            if _is_slider(values):
                controls[key] = W.SelectionSlider(continuous_update=True, **common)
            else:
                controls[key] = W.Dropdown(**common)
        image = W.Image(value=self.render(compact=False), format="png")

        def redraw(_change=None):
            params = {k: self.controls[k][c.value] for k, c in controls.items()}
            image.value = self.render(params, compact=False)

        for control in controls.values():
            control.observe(redraw, names="value")
        box = W.VBox([W.HBox(list(controls.values())), image])
        box.attnbook_controls = controls  # for tests and the benchmark
        box.attnbook_image = image
        return box

    # -- display -------------------------------------------------------------------------------
    def __repr__(self) -> str:
        grid = " × ".join(f"{k}({len(v)})" for k, v in self.controls.items())
        return f"<attnbook 滑块：{grid}>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        if static_mode():
            display({"text/html": self.html(), "text/plain": repr(self)}, raw=True)
        else:
            display(self.widget())


#: On screen: the key frames' captions are hidden. In print (the book's PDF, a browser's print):
#: the controls are hidden and the slider becomes a grid of its 3–6 labelled key frames.
_PRINT_CSS = (
    ".attnbook-caption{display:none}"
    "@media print{.attnbook-slider .attnbook-controls{display:none!important}"
    ".attnbook-slider .attnbook-frames{display:grid;grid-template-columns:repeat(3,1fr);gap:0.4em;"
    "break-inside:avoid}"
    ".attnbook-slider .attnbook-frames>img{display:none!important}"
    ".attnbook-slider .attnbook-key img{display:inline-block!important;width:100%;height:auto}"
    ".attnbook-slider .attnbook-caption{display:inline-block;width:100%;font-size:0.75em;text-align:center}}"
)


def key_frames(indices: Sequence[tuple[int, ...]], start: tuple[int, ...], most: int = 6) -> list[tuple[int, ...]]:
    """The frames a printed slider shows: all of them if there are at most ``most``, else
    ``most`` spread evenly over the grid (the first, the last, and the starting frame among them)."""
    indices = list(indices)
    if len(indices) <= most:
        return indices
    n = len(indices)
    picks = {round(i * (n - 1) / (most - 1)) for i in range(most)}
    chosen = [indices[i] for i in sorted(picks)]
    if start not in chosen:
        middle = min(range(1, len(chosen) - 1), key=lambda j: abs(indices.index(chosen[j]) - indices.index(start)))
        chosen[middle] = start
    return sorted(chosen, key=indices.index)


def _is_slider(values: Sequence[Any]) -> bool:
    return len(values) >= 3 and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def slider(fig_fn: Callable[..., Any], controls: Mapping[str, Sequence[Any]], **options: Any) -> Slider:
    """Make a :class:`Slider`; put it last in a cell to show it. See :class:`Slider`."""
    return Slider(fig_fn, controls, **options)
