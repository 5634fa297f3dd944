"""The page's layout at a 1280 × 800 window: nothing in a chapter's or appendix page's content column
scrolls sideways (code, outputs, tables, formulas), and the text in every figure is at least 10 pt at the
size the page shows the figure (issue 23, item 5).

10 pt is 10/72 inch; a CSS pixel is 1/96 inch, so figure text must be drawn at ≥ 13.3 CSS px. A figure's
smallest text, in CSS px, is ``min_font_pt × dpi / 72 × scale``: the PNG holds ``min_font_pt × dpi / 72``
pixels of it, and the page shows the PNG at ``scale`` = displayed width / natural width.

Where ``min_font_pt`` comes from, best first:

1. the PNG's own record, the tEXt key ``attnbook:min-font-pt`` (the smallest font size of any visible
   text of the figure, written by attnbook when it saves a figure; see MIN_FONT_KEY);
2. otherwise the smallest text size attnbook's plot style sets (its rcParams: tick labels, legend, axis
   labels, titles, read from attnbook's source, not typed here), lowered by every explicit
   ``fontsize=`` / ``labelsize=`` the figure's cell can be traced to: the cell's own code and the
   attnbook functions it names, followed through the attnbook functions they name in turn.

The dpi: the PNG's pHYs chunk (matplotlib writes the figure's dpi there), else a ``dpi=`` the cell passes
to a Slider, else the default dpi of attnbook's Slider (slider frames) or the style's figure.dpi (plain
figures).
"""
from __future__ import annotations

import ast
import base64
import functools
import hashlib
import io
import json
import pathlib
import re

import pytest

from conftest import ROOT  # tests/site/conftest.py

#: 10 pt in CSS px (CSS: 96 px per inch; a point is 1/72 inch).
MIN_TEXT_PX = 10 / 72 * 96
#: The PNG tEXt key in which attnbook records a saved figure's smallest font size, in points.
MIN_FONT_KEY = "attnbook:min-font-pt"


# -- 1. nothing scrolls sideways ------------------------------------------------------------------------




@pytest.fixture(scope="module")
def layout_visit(tour) -> dict[str, tuple[dict, list]]:
    """What OVERFLOW_JS and FIGURES_JS (tests/site/layout_js.py) found on each chapter and appendix page,
    measured at 1280 × 800 during conftest's tour (each page is loaded once for all browser tests)."""
    return {rel: seen["layout"] for rel, seen in tour.items() if "layout" in seen}


@pytest.fixture(scope="module")
def overflow(layout_visit) -> dict[str, dict]:
    return {rel: seen for rel, (seen, _) in layout_visit.items()}


def test_nothing_in_the_content_column_scrolls_sideways(overflow):
    """At 1280 × 800 no code block, output, table (or its wrapper) or formula of a chapter or appendix
    page is wider than the box that shows it, and the page itself does not scroll sideways."""
    assert overflow, "没有章节或附录页面"
    problems = []
    for rel, found in overflow.items():
        if not found["column"]:
            problems.append(f"{rel}：找不到正文栏（article.bd-article）")
            continue
        if found["page"][0] > found["page"][1] + 1:
            problems.append(f"{rel} | 整页 | 可横向滚动 | {found['page'][0]}/{found['page'][1]}")
        for item in found["items"]:
            if item["exempt"]:
                continue
            extra = f"（最长一行 {item['longest']} 个字符）" if item["longest"] else ""
            problems.append(f"{rel} | {item['kind']} | {item['text']!r} | {item['scroll']}/{item['client']}{extra}")
    assert not problems, f"{len(problems)} 处在 1280 px 下横向滚动（页面 | 元素 | 开头 60 字 | scrollWidth/clientWidth）：\n" \
        + "\n".join(problems)


def test_every_checked_element_was_laid_out(overflow):
    """Opening every `details` must leave nothing unmeasured: an element with no box (a hidden tab, a
    closed box of another kind) would pass the overflow test unseen."""
    unseen = [f"{rel} | {what}" for rel, found in overflow.items() for what in found["unseen"]]
    assert not unseen, "这些元素没有显示出来，无法检查是否横向滚动：\n" + "\n".join(unseen)


# -- 2. figure text ≥ 10 pt as shown --------------------------------------------------------------------

FONT_SCALINGS = {"xx-small": 0.579, "x-small": 0.694, "small": 0.833, "medium": 1.0, "large": 1.2,
                 "x-large": 1.44, "xx-large": 1.728, "larger": 1.2, "smaller": 0.833}
#: The rcParams that size the text matplotlib draws by itself in the book's figures.
TEXT_SIZE_KEYS = ("axes.titlesize", "axes.labelsize", "xtick.labelsize", "ytick.labelsize", "legend.fontsize",
                  "figure.titlesize")
#: Keyword arguments that set a text's size in the plotting code.
SIZE_KWARGS = ("fontsize", "labelsize", "titlesize")


@functools.lru_cache(maxsize=None)
def _attnbook_sources() -> dict[pathlib.Path, ast.Module]:
    """Every module of attnbook/, parsed (read from the source: attnbook is not imported)."""
    return {path: ast.parse(path.read_text(encoding="utf-8"))
            for path in sorted((ROOT / "attnbook").rglob("*.py"))}


@functools.lru_cache(maxsize=None)
def plot_style() -> dict:
    """attnbook's plot style: the module-level dict that sets savefig.dpi, found in attnbook's source
    wherever it lives, and the Slider's default dpi."""
    import matplotlib

    style, slider_dpi = None, None
    for path, tree in _attnbook_sources().items():
        for node in tree.body:
            value = node.value if isinstance(node, (ast.Assign, ast.AnnAssign)) else None
            if isinstance(value, ast.Dict) and any(isinstance(k, ast.Constant) and k.value == "savefig.dpi"
                                                   for k in value.keys):
                style = (path, ast.literal_eval(value))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == "Slider":
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        args = item.args
                        for arg, default in zip(args.kwonlyargs, args.kw_defaults):
                            if arg.arg == "dpi" and default is not None:
                                slider_dpi = ast.literal_eval(default)
    assert style, "在 attnbook/ 的源码里找不到设置 savefig.dpi 的绘图样式字典"
    assert slider_dpi, "在 attnbook/ 的源码里找不到 Slider 的默认 dpi"
    rc = {k: matplotlib.rcParamsDefault[k] for k in ("font.size", "figure.dpi", *TEXT_SIZE_KEYS)}
    rc.update({k: v for k, v in style[1].items() if k in rc})
    base = float(rc["font.size"])
    sizes = {k: base * FONT_SCALINGS[v] if isinstance(v, str) else float(v) for k, v in rc.items()
             if k in TEXT_SIZE_KEYS}
    smallest = min(sizes, key=sizes.get)
    return {"where": style[0].relative_to(ROOT).as_posix(), "font_size": base, "dpi": float(rc["figure.dpi"]),
            "slider_dpi": float(slider_dpi), "min_pt": sizes[smallest], "min_key": smallest}


def _size_value(node: ast.AST) -> float | None:
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError):  # not a literal: a size computed at run time is not traced
        return None
    if isinstance(value, str):
        scale = FONT_SCALINGS.get(value)
        return None if scale is None else scale * plot_style()["font_size"]
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _explicit_sizes(node: ast.AST) -> list[tuple[float, int]]:
    """(size in pt, line) of every literal fontsize= / labelsize= / prop={"size": …} under ``node``."""
    found = []
    for call in ast.walk(node):
        if not isinstance(call, ast.Call):
            continue
        for kw in call.keywords:
            if kw.arg in SIZE_KWARGS:
                size = _size_value(kw.value)
            elif kw.arg in ("prop", "fontdict", "title_fontproperties") and isinstance(kw.value, ast.Dict):
                sizes = [_size_value(v) for k, v in zip(kw.value.keys, kw.value.values)
                         if isinstance(k, ast.Constant) and k.value in ("size", "fontsize")]
                size = min([v for v in sizes if v is not None], default=None)
            else:
                continue
            if size is not None:
                found.append((size, kw.lineno))
    return found


class Scope:
    """What the names of a piece of code mean: its own functions, the modules it imported (by alias) and
    the names it imported from modules. Built for each attnbook module and for each notebook."""

    def __init__(self, module: str, tree: ast.AST, where: str):
        self.module, self.where = module, where
        self.functions: dict[str, ast.AST] = {}
        self.modules: dict[str, str] = {}  # alias -> dotted module
        self.imported: dict[str, tuple[str, str]] = {}  # name -> (dotted module, name there)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions.setdefault(node.name, node)
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.modules[a.asname] = a.name
                    else:
                        self.modules[a.name.split(".")[0]] = a.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative: from the package of this module
                    package = module.split(".")[: -node.level] if not where.endswith("__init__.py") \
                        else module.split(".")[: len(module.split(".")) - node.level + 1]
                    base = ".".join(package + ([base] if base else []))
                for a in node.names:
                    full = f"{base}.{a.name}"
                    if full in _module_files():
                        self.modules[a.asname or a.name] = full
                    else:
                        self.imported[a.asname or a.name] = (base, a.name)

    def resolve(self, name: str, depth: int = 0) -> list[tuple["Scope", ast.AST]]:
        """The definition(s) a bare name refers to."""
        if name in self.functions:
            return [(self, self.functions[name])]
        if name in self.imported and depth < 8:
            module, there = self.imported[name]
            if module in _module_scopes():
                return _module_scopes()[module].resolve(there, depth + 1)
        return []

    def references(self, node: ast.AST) -> list[tuple["Scope", ast.AST]]:
        """The attnbook (or notebook) functions the code under ``node`` names: called, or passed along
        (a figure function given to a Slider, a functools.partial)."""
        out = []
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                out += self.resolve(n.id)
            elif isinstance(n, ast.Attribute):
                chain, base = [n.attr], n.value
                while isinstance(base, ast.Attribute):
                    chain.append(base.attr)
                    base = base.value
                if isinstance(base, ast.Name) and base.id in self.modules:
                    dotted = ".".join([self.modules[base.id], *reversed(chain[1:])])
                    if dotted in _module_scopes():
                        out += _module_scopes()[dotted].resolve(n.attr)
        return out


@functools.lru_cache(maxsize=None)
def _module_files() -> dict[str, tuple[str, ast.Module]]:
    """Every attnbook module by dotted name: (its file, its syntax tree)."""
    out = {}
    for path, tree in _attnbook_sources().items():
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = (path.relative_to(ROOT).as_posix(), tree)
    return out


@functools.lru_cache(maxsize=None)
def _module_scopes() -> dict[str, Scope]:
    return {name: Scope(name, tree, where) for name, (where, tree) in _module_files().items()}


def traced_fonts(notebook: str, cells: list[str], n: int) -> list[tuple[float, str]]:
    """The explicit font sizes the figure of cell ``n`` can be traced to: (pt, "file:line (function)"),
    from the cell's own code and every function it names, followed through the functions they name."""
    def parse(source: str) -> ast.AST:
        lines = [l for l in source.splitlines() if not l.lstrip().startswith(("%", "!"))]  # IPython magics
        try:
            return ast.parse("\n".join(lines))
        except SyntaxError:
            return ast.Module(body=[], type_ignores=[])

    book = Scope("__notebook__", ast.Module(body=[s for c in cells for s in parse(c).body], type_ignores=[]),
                 notebook)
    cell = parse(cells[n])
    found = [(size, f"{notebook} 单元格 {n} 第 {line} 行") for size, line in _explicit_sizes(cell)]
    todo, done = book.references(cell), set()
    while todo:
        scope, node = todo.pop()
        if id(node) in done:
            continue
        done.add(id(node))
        where = scope.where if scope is not book else f"{notebook}（笔记本里定义）"
        found += [(size, f"{where}:{line}（{node.name}）") for size, line in _explicit_sizes(node)]
        todo += scope.references(node)
    return found


def _slider_dpi(source: str) -> float | None:
    """The dpi= a cell passes to attnbook's Slider (or slider()), if any."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for n in ast.walk(tree):
        if isinstance(n, ast.Call) and (getattr(n.func, "id", None) or getattr(n.func, "attr", "")) in ("Slider", "slider"):
            for kw in n.keywords:
                if kw.arg == "dpi":
                    return _size_value(kw.value)
    return None


@functools.lru_cache(maxsize=None)
def figure_cells() -> dict[str, dict]:
    """sha256 of every PNG in the notebooks' outputs (plain figures and slider frames) -> the notebook,
    the cell and its source: how a figure on the page is traced to the code that drew it."""
    import runpy

    out = {}
    for path in runpy.run_path(str(ROOT / "tools" / "book.py"))["NOTEBOOKS"]:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        sources = tuple("".join(c["source"]) if c["cell_type"] == "code" else "" for c in cells)
        for n, cell in enumerate(cells):
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                pngs, slider = [], False
                if "image/png" in data:
                    pngs.append(base64.b64decode("".join(data["image/png"])))
                html = "".join(data.get("text/html", ""))
                for payload in re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html):
                    pngs.append(base64.b64decode(payload))
                    slider = True
                for png in pngs:
                    out[hashlib.sha256(png).hexdigest()] = {
                        "notebook": path.relative_to(ROOT).as_posix(), "cell": n, "source": source,
                        "sources": sources, "slider": slider}
    return out


def png_facts(png: bytes) -> dict:
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    dpi = image.info.get("dpi")
    recorded = getattr(image, "text", {}).get(MIN_FONT_KEY)  # tEXt chunks before or after the pixels
    return {"size": image.size, "dpi": round(float(dpi[0]), 1) if dpi else None,  # pHYs: px per metre
            "recorded": float(recorded) if recorded else None}




@pytest.fixture(scope="module")
def figures(layout_visit, server, site) -> list[dict]:
    """Every figure shown on a chapter or appendix page, measured."""
    style, cells, out = plot_style(), figure_cells(), []
    for rel, (_, shown) in layout_visit.items():
        for seen in shown:
            def read(src: str) -> bytes:
                if src.startswith("data:"):
                    return base64.b64decode(src.split(",", 1)[1])
                return (site / src.removeprefix(server + "/").split("?")[0]).read_bytes()

            png = read(seen["src"])
            facts, cell = png_facts(png), cells.get(hashlib.sha256(png).hexdigest())
            traced = traced_fonts(cell["notebook"], cell["sources"], cell["cell"]) if cell else []
            recorded = [png_facts(read(src))["recorded"] for src in seen.pop("frames")] or [facts["recorded"]]
            if None not in recorded:
                min_pt, why = min(recorded), "PNG 记录" + (f"，{len(recorded)} 帧中最小" if seen["slider"] else "")
            else:
                min_pt, why = style["min_pt"], f"样式 {style['min_key']}"
                for size, where in traced:
                    if size < min_pt:
                        min_pt, why = size, where
            dpi = facts["dpi"] or (cell and _slider_dpi(cell["source"])) or (
                style["slider_dpi"] if seen["slider"] else style["dpi"])
            scale = seen["shown"] / seen["natural"] if seen["natural"] else 0.0  # 0: did not decode
            out.append({**seen, "page": rel, "cell": cell and f"{cell['notebook']} 单元格 {cell['cell']}",
                        "min_pt": min_pt, "why": why, "dpi": dpi, "scale": scale,
                        "px": min_pt * dpi / 72 * scale, "png_dpi": facts["dpi"],
                        "need_pt": MIN_TEXT_PX * 72 / (dpi * scale)})  # at this dpi and scale
    return out


def test_figure_text_is_at_least_10_pt_as_shown(figures):
    """Every figure of a chapter or appendix page, at 1280 × 800, shows its smallest text at 10 pt
    (13.3 CSS px) or more."""
    assert figures, "章节页面上没有图"
    small = [f for f in figures if f["px"] < MIN_TEXT_PX - 0.05]
    lines = [f"{f['page']} | {f['section']} | {'滑块' if f['slider'] else '图'} {f['alt']!r} | "
             f"最小字 {f['min_pt']:g} pt（{f['why']}）× {f['dpi']:g} dpi / 72 × 缩放 {f['scale']:.2f}"
             f"（{f['shown']:.0f}/{f['natural']} px）= {f['px']:.1f} px，要 ≥ {f['need_pt']:.1f} pt"
             for f in small]
    assert not small, (f"{len(small)}/{len(figures)} 张图的最小字小于 10 pt（{MIN_TEXT_PX:.1f} CSS px）：\n"
                       + "\n".join(lines))


def test_every_figure_is_traced_to_its_cell(figures):
    """A figure whose PNG does not record its smallest font is measured through the cell that drew it
    (its explicit font sizes, its dpi): every such figure on the site is one of the notebooks' outputs
    (else the site is older than the notebooks)."""
    lost = [f"{f['page']} | {f['alt']!r}" for f in figures if not f["cell"] and not f["why"].startswith("PNG")]
    assert not lost, "这些图在笔记本的输出里找不到（网站比笔记本旧？重新生成网站）：\n" + "\n".join(lost)
