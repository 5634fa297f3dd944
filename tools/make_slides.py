"""Turn each chapter into a reveal.js deck: _build/html/slides/NN_name.slides.html (``make slides``),
plus the two decks of the teacher's 2 × 45 minute plan: slides/session1.slides.html, session2.

    python tools/make_slides.py                                  # every deck, after `make html`
    python tools/make_slides.py chapters/04_cat_eats_fish.ipynb  # one chapter
    python tools/make_slides.py session1                         # one curated deck
    python tools/make_slides.py --reveal-tarball reveal.js-4.6.1.tgz   # offline: a tarball you have

* The decks come from nbconvert's slides exporter (what ``jupyter nbconvert --to slides`` runs),
  with a small template on top that loads nothing from another host: reveal.js is served from
  ``slides/revealjs/`` and MathJax 3 from the site's own ``_static/mathjax`` (so build the site
  first); nbconvert's jQuery, require.js, mermaid and MathJax 2 CDN scripts are left out.
* reveal.js is not committed. It is taken from the npm package reveal.js@4.6.1 (MIT), fetched
  once with ``npm pack`` and checked against the registry's sha512 integrity, then cached in
  _build/.cache/. Only dist/reveal.{js,css}, the white theme with its font, the notes plugin and
  the licence are copied next to the decks.
* The MyST of the chapters is rendered by the book's one renderer, tools/myst_render.py (numbers
  from the glue records, terms as text, {ref}/{doc} and page links pointing at the site,
  admonitions as quotes, ``{dropdown}`` hints and solutions as speaker notes). Anything it cannot
  render fails the build (RenderError): no raw MyST reaches a slide.
* Made for a projector: the deck is 1100 × 760 with 32 px body text; reveal.js scales it by 0.91 on a
  1280 × 720 screen and by 0.89 on 1024 × 768, so body text is drawn at 29.1 / 28.6 px. Code and
  tables are smaller (17.5 and 26 px at 1280 × 720). Figures and slider frames grow into the room
  left on their slide (CSS flex + object-fit), up to 3 × their pixel size.
* Slide structure: a notebook whose cells carry ``slideshow.slide_type`` metadata is used as its
  author marked it. Otherwise (the default for this book) the copy that is exported -- never the
  notebook on disk -- is laid out here: the title and every ``##`` section -> new slide; ``###``
  -> sub-slide (down arrow). Every cell is cut into blocks (paragraphs, lists, tables, formulas;
  code in chunks of at most CODE_CHUNK lines; long outputs and tables in chunks of rows, the table
  header repeated), each with an estimate of its height on the slide (from the fonts' metrics); a
  sub-slide that would overflow continues on a new sub-slide headed "<section>（续）". A heading
  stays with what follows it, a sentence ending in "：" with the block it introduces, a short
  output with its code, and a ``动手试试`` text with its slider: code between them (and the
  slider's own code, if shown) follows the slider on the next sub-slide, and so does text after the
  sentence that says what to drag when text and slider do not fit together. One figure per
  sub-slide. The output of a code cell whose code is shown is a fragment: it appears on the next
  key press. tests/site/test_slides.py checks in Chromium that no slide of any deck overflows.
* Jupyter Book conventions are honoured: the setup and import cells and ``remove-cell`` cells are
  skipped; ``hide-cell`` cells (reference solutions) become speaker notes, code and output, so
  the teacher has the numbers and the students do not; ``hide-input`` shows only the output;
  myst-nb's glue records and one-line ``glue(...)`` bookkeeping calls are left out of the slides.
* Deep dives (选读: runs of cells tagged ``deep-dive``, tools/book_text.py) stay in the chapter decks,
  where every slide that holds one of their cells carries a “选读” label and a stripe (CSS on
  nbconvert's ``celltag_deep-dive`` class); the session decks leave them out.
* Curated decks (SESSIONS, the teacher's 2 × 45 minute plan in appendix/teaching.md): the cells of
  the chapter notebooks tagged ``slides-s1`` / ``slides-s2`` (``slides-s1-reveal``: a second pass
  over a notebook, e.g. the answers after an exercise), or listed by cell id in SESSION_CELLS, in
  the order of the plan; the headings of the sections they stand in come along, and every
  chapter's slides say which chapter they are from. A tag (or id) may end in ``:output`` (only
  the output of a code cell), ``:3`` (the first 3 blocks of a Markdown cell) or ``:练习`` (the
  section of the cell whose title starts with 练习).
"""
from __future__ import annotations

import argparse
import base64
import copy
import dataclasses
import functools
import hashlib
import html
import io
import json
import math
import os
import pathlib
import posixpath
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import unicodedata

import nbformat

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import book_text  # noqa: E402  (tools/book_text.py: deep dives)
import myst_render  # noqa: E402  (tools/myst_render.py: the book's one MyST renderer)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
CACHE = ROOT / "_build" / ".cache"

REVEAL_VERSION = "4.6.1"
REVEAL_INTEGRITY = ("sha512-1CW0auaXNPmwmvQ7TwpszwVxMi2Xr5cTS3J3EBC/HHgbPF32Dn7aiu/LKWDOGjMbaDwKQiGmfqc"
                    "oGQ74HUHCMw==")
REVEAL_FILES = ["LICENSE", "dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js"]
REVEAL_DIR = "revealjs"  # under slides/; also the reveal_url_prefix

SKIP_TAGS = {"remove-cell"}
SOLUTION_TAGS = {"hide-cell"}
NO_INPUT_TAGS = {"hide-input", "remove-input"}
NO_OUTPUT_TAGS = {"hide-output", "remove-output"}
GLUE_MIME = myst_render.GLUE_MIME  # myst-nb's glue output (nbconvert cannot display it)

# -- the slide and what fits on it (all sizes in slide pixels; reveal.js scales the slide) -------
WIDTH, HEIGHT = 1100, 760
FONT = 32  # body text: × reveal's scale (0.91 at 1280 × 720, 0.89 at 1024 × 768) ≥ 28 px on screen
PAD_Y, PAD_X = 14, 26  # padding of a slide
INNER_W = WIDTH - 2 * PAD_X
BUDGET = HEIGHT - 2 * PAD_Y - 110  # estimated content height a sub-slide may take (110 px to spare: the
# estimate once fell 54 px short on a slide of code, output and text)
LINE = FONT * 1.35  # one line of body text
LINE_EM = INNER_W / FONT * 0.97  # a line of body text, in em (a little is lost to line breaking)
CODE_FONT = 19.2  # 0.6 em
CODE_LINE = CODE_FONT * 1.3
CODE_COLS = 86  # columns of a code line before it wraps (a CJK character takes 1.7)
CODE_CHUNK = 22  # at most this many lines of one code cell on a sub-slide
FIGURE_MIN = 520  # a figure gets at least this much height (less if its full width is lower) ...
FIGURE_FLOOR = 300  # ... or this much, when it must share its slide with its instruction
MAX_ZOOM = 3.0  # figures are drawn at most 3 × their pixel size

TEMPLATE = r"""
{%- extends 'index.html.j2' -%}
{%- block html_head_js -%}{%- endblock html_head_js -%}
{%- block jupyter_widgets -%}{%- endblock jupyter_widgets -%}
{%- block html_head_js_mathjax -%}
<script>
window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\(', '\\)']], displayMath: [['$$', '$$'], ['\\[', '\\]']],
        processEscapes: true},
  options: {skipHtmlTags: ['script', 'noscript', 'style', 'textarea', 'pre', 'code']}
};
</script>
<script defer src="{{ resources.attnbook.mathjax_url }}"></script>
{%- endblock html_head_js_mathjax -%}
{%- block html_head_css -%}
<style>
@font-face {
  font-family: "AttnBook Sans SC";
  src: url("{{ resources.attnbook.font_url }}") format("opentype");
  font-display: block;
}
/* sizes are in slide pixels (the deck is {{ resources.reveal.width }} × {{ resources.reveal.height }});
   tools/make_slides.py estimates heights with the same numbers */
html:root { --r-main-font-size: 32px; --r-heading-text-transform: none; --r-block-margin: 0;
  --r-main-font: "Source Sans Pro", "AttnBook Sans SC", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
                 "Noto Sans CJK SC", sans-serif;
  --r-heading-font: var(--r-main-font); }
.reveal { font-size: 32px; }
.reveal .slides { text-align: left; }
.reveal .slides section:not(.stack) { box-sizing: border-box; height: 100%; padding: 14px 26px;
          overflow: hidden; flex-direction: column; line-height: 1.35; }
.reveal .slides section:not(.stack) > * { flex: 0 0 auto; }
.reveal .slides .jp-RenderedHTMLCommon { font-size: 32px; line-height: 1.35; padding: 0; color: #222;
          font-family: inherit; overflow: visible; }
.reveal .slides .jp-RenderedHTMLCommon p { margin: 0 0 14px 0; line-height: 1.35; font-size: 1em; }
.reveal .slides .jp-RenderedHTMLCommon :is(ul, ol) { display: block; margin: 0 0 14px 1.3em; padding: 0; }
.reveal .slides .jp-RenderedHTMLCommon li { margin: 0 0 4px 0; line-height: 1.35; font-size: 1em; }
.reveal .slides .jp-RenderedHTMLCommon li > p { margin: 0; }
.reveal .slides .jp-RenderedHTMLCommon li > :is(ul, ol) { margin: 4px 0 0 1.3em; }
.reveal .slides :is(h1, h2, h3, h4) { text-transform: none; font-weight: 600; line-height: 1.2; }
.reveal .slides .jp-RenderedHTMLCommon h1 { font-size: 1.55em; margin: 6px 0 18px 0; }
.reveal .slides .jp-RenderedHTMLCommon h2 { font-size: 1.25em; margin: 0 0 12px 0; color: #1a4f8b; }
.reveal .slides .jp-RenderedHTMLCommon h3 { font-size: 1.1em; margin: 0 0 10px 0; color: #1a4f8b; }
.reveal .slides .jp-RenderedHTMLCommon :is(h1, h2, h3, h4):last-child { margin-bottom: 8px; }
.reveal .slides .jp-RenderedHTMLCommon code { font-size: 0.8em; padding: 0 0.15em; background: #f3f3f3;
          color: #222; font-family: "DejaVu Sans Mono", Menlo, Consolas, "AttnBook Sans SC", monospace; }
.reveal .slides .jp-RenderedHTMLCommon blockquote { width: auto; margin: 0 0 14px 0; padding: 8px 14px;
          font-style: normal; text-align: left; border-left: 6px solid #8aa9cc; box-shadow: none;
          background: #f4f7fb; }
.reveal .slides .jp-RenderedHTMLCommon blockquote p { display: block; margin: 0 0 8px 0; }
.reveal .slides .jp-RenderedHTMLCommon blockquote > :last-child { margin-bottom: 0; }
.reveal .slides table { font-size: 0.9em; margin: 0 0 14px 0; border-collapse: collapse; }
.reveal .slides table :is(th, td) { padding: 5px 12px; line-height: 1.25; border-bottom: 1px solid #bbb;
          text-align: right; vertical-align: top; }
.reveal .slides .jp-RenderedMarkdown table :is(th, td) { text-align: left; }
.reveal .slides table.attnbook-small { font-size: 0.75em; }
.reveal .slides table.attnbook-small :is(th, td) { padding: 3px 8px; overflow-wrap: anywhere; text-align: left; }
.reveal .slides table thead th { border-bottom: 2px solid #555; }
.reveal .slides .jp-RenderedHTMLCommon table tbody tr:nth-child(odd) { background: #f6f6f6; }
.reveal .jp-InputPrompt, .reveal .jp-OutputPrompt, .reveal .jp-Collapser { display: none; }
.reveal .slides .jp-Cell { padding: 0; margin: 0 0 10px 0; }
.reveal .slides .jp-OutputArea-output { padding: 0; }
.reveal .slides .jp-InputArea-editor { border: none; background: #f5f5f5; }
.reveal .slides .highlight { margin: 0; background: #f5f5f5; }
.reveal .slides :is(.highlight pre, .jp-OutputArea-output pre) {
          font-family: "DejaVu Sans Mono", Menlo, Consolas, "AttnBook Sans SC", monospace; font-size: 19.2px;
          line-height: 1.3; padding: 4px 8px; margin: 0; white-space: pre-wrap; overflow-wrap: anywhere;
          box-shadow: none; width: auto; }
.reveal .slides .jp-OutputArea-output pre { background: #fff; border-left: 4px solid #c8d6e5; }
.reveal .slides .jp-RenderedHTMLCommon :is(mjx-container[display="true"]) { margin: 6px 0; }
.reveal .slides img { margin: 0; max-width: 100%; max-height: none; }
/* figures and slider frames take the room left on their slide (tools/make_slides.py, GROW_JS) */
.reveal .slides .attnbook-grow { display: flex !important; flex-direction: column; flex: 1 1 0;
          min-height: 0; }
.reveal .slides .attnbook-grow > * { flex: 0 0 auto; }
.reveal .slides .attnbook-grow > .attnbook-grow,
.reveal .slides section:not(.stack) > .attnbook-grow { flex: 1 1 0; }
.reveal .slides .attnbook-grow > img, .reveal .slides .attnbook-frames img { flex: 1 1 0; min-height: 0;
          width: 100%; height: auto; object-fit: contain; object-position: center top; }
.reveal .slides .attnbook-frames figure.attnbook-key { display: contents; }
.reveal .slides .attnbook-slider { margin: 0 !important; }
.reveal .slides .attnbook-controls { font-size: 1em !important; gap: 0.6em 1.5em !important;
          margin-bottom: 6px; }
.reveal .slides .attnbook-controls input[type=range] { width: 14em; height: 1.1em; }
.reveal .slides .attnbook-controls select { font-size: 0.9em; }
.reveal .slides .attnbook-cont { color: #555; font-size: 0.9em; font-weight: 600; margin: 0 0 10px 0; }
.reveal .slides .attnbook-kicker { color: #555; font-size: 0.9em; margin: 0 0 6px 0; }
.reveal .slides .attnbook-code-note { color: #555; font-size: 0.9em; margin: 0 0 8px 0; }
/* a slide of a deep dive (选读): a stripe down its left edge and a label in its top right corner,
   neither of which takes room from the content */
.reveal .slides section:not(.stack):has(.celltag_deep-dive) {
          box-shadow: inset 8px 0 0 #6b4fb0; }
.reveal .slides section:not(.stack):has(.celltag_deep-dive)::after {
          content: "选读"; position: absolute; top: 4px; right: 4px; padding: 0 10px; font-size: 20px;
          line-height: 1.5; font-weight: 600; color: #fff; background: #6b4fb0; border-radius: 4px; }
.reveal .attnbook-deck-links { font-size: 0.9em; }
/* accessibility (axe-core, WCAG 2.1 AA): links inside text are underlined, the slide number has contrast */
.reveal .slides a { text-decoration: underline; }
.reveal .slide-number { background-color: rgba(0, 0, 0, 0.8); color: #fff; font-size: 20px; }
.reveal .slide-number a { color: #fff; }
</style>
{%- endblock html_head_css -%}
{% block footer_js %}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"></script>
<script>
/* A figure (or a slider's frames) and the boxes around it grow into the room left on the slide. */
document.querySelectorAll('.reveal .slides .jp-RenderedImage > img, .reveal .slides .attnbook-frames')
  .forEach(function (el) {
    var node = el.tagName === 'IMG' ? el.parentElement : el;
    while (node && node.tagName !== 'SECTION') { node.classList.add('attnbook-grow'); node = node.parentElement; }
  });
Reveal.initialize({
  controls: true, progress: true, history: true, center: false, hash: true, navigationMode: "linear",
  slideNumber: "c/t", transition: "{{ resources.reveal.transition }}", display: "flex",
  width: {{ resources.reveal.width }}, height: {{ resources.reveal.height }}, margin: 0.04,
  plugins: [RevealNotes]
});
</script>
{% endblock footer_js %}
"""


# -- reveal.js ----------------------------------------------------------------------------------
def _integrity(path: pathlib.Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def reveal_tarball(given: pathlib.Path | None = None) -> pathlib.Path:
    """The pinned reveal.js tarball: given, cached, or fetched with `npm pack`; integrity-checked."""
    cached = CACHE / f"reveal.js-{REVEAL_VERSION}.tgz"
    if given is None and not cached.exists():
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("需要 npm 来取得 reveal.js（或用 --reveal-tarball 指定已下载的 reveal.js-"
                             f"{REVEAL_VERSION}.tgz）")
        CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([npm, "pack", f"reveal.js@{REVEAL_VERSION}", "--silent", "--pack-destination", tmp],
                           check=True, stdout=subprocess.DEVNULL, cwd=tmp)
            shutil.move(str(pathlib.Path(tmp) / f"reveal.js-{REVEAL_VERSION}.tgz"), cached)
    path = given or cached
    if _integrity(path) != REVEAL_INTEGRITY:
        if path == cached:
            cached.unlink()
        raise SystemExit(f"{path} 不是 reveal.js {REVEAL_VERSION}（sha512 校验不符）")
    return path


def install_reveal(tarball: pathlib.Path, out: pathlib.Path) -> None:
    """Copy the needed part of reveal.js to out/revealjs/."""
    target = out / REVEAL_DIR
    if target.exists():
        shutil.rmtree(target)
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("package/")
            if member.isfile() and any(name == f or name.startswith(f + "/") for f in REVEAL_FILES):
                dest = target / name
                dest.parent.mkdir(parents=True, exist_ok=True)
                with tar.extractfile(member) as src:
                    dest.write_bytes(src.read())


# -- the book: labels and links, for myst_render ------------------------------------------------
def _toc_pages() -> list[pathlib.Path]:
    """Every page of _toc.yml (.ipynb and .md), for the labels {ref} may point at."""
    entries = re.findall(r"^\s*-?\s*(?:file|root):\s*(\S+)\s*$", (ROOT / "_toc.yml").read_text(encoding="utf-8"), re.M)
    pages = []
    for entry in entries:
        for suffix in (".ipynb", ".md"):
            if (ROOT / f"{entry}{suffix}").exists():
                pages.append(ROOT / f"{entry}{suffix}")
    return pages


def _markdown_sources(path: pathlib.Path) -> list[str]:
    if path.suffix == ".md":
        return [path.read_text(encoding="utf-8")]
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "markdown"]


@functools.lru_cache(maxsize=None)
def labels() -> dict[str, tuple[str, str]]:
    """``(label)=`` targets of the whole book -> (page, title)."""
    return myst_render.collect_labels({p.relative_to(ROOT).as_posix(): _markdown_sources(p) for p in _toc_pages()})


def site_link(here: str, page: str, anchor: str) -> str:
    """A link from a deck (in slides/) to a page of the site: ../chapters/NN_name.html#anchor."""
    url = posixpath.relpath(posixpath.splitext(page)[0] + ".html", "slides")
    return url + (f"#{anchor}" if anchor else "")


def slides_book() -> myst_render.Book:
    return myst_render.Book(labels=labels(), link=site_link, rewrite_links=True)


# -- Markdown: blocks and their heights -----------------------------------------------------------
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
LIST_ITEM = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+")


#: Advance widths of the printable ASCII characters (32-126) in Source Sans Pro, the deck's Latin
#: font (reveal.js's white theme serves it), in hundredths of an em; CJK characters take 1 em in the
#: book's own font (AttnBook Sans SC, served with the site).
SOURCE_SANS = [int(w) for w in (
    "20,29,42,50,50,82,61,25,30,30,42,50,25,31,25,35,50,50,50,50,50,50,50,50,50,50,25,25,50,50,50,42,85,54,"
    "59,57,61,53,49,62,65,26,48,58,49,73,65,66,58,66,58,53,54,64,51,79,51,48,54,30,35,30,50,50,54,51,55,46,"
    "55,50,29,50,54,25,25,49,25,83,55,54,55,55,35,42,34,54,47,72,45,47,42,30,24,30,50").split(",")]


def _char_em(ch: str) -> float:
    if " " <= ch <= "~":
        return SOURCE_SANS[ord(ch) - 32] / 100
    if unicodedata.east_asian_width(ch) in "WF":
        return 1.0
    return 0.6


def _math_em(tex: str) -> float:
    tex = re.sub(r"\\(?:operatorname|mathrm|text|texttt|mathbb|mathbf|boldsymbol)\{([^{}]*)\}", r"\1", tex)
    tex = re.sub(r"\\(?:left|right|big|Big|bigg|,|;|!|quad|qquad)", " ", tex)
    tex = re.sub(r"\\[A-Za-z]+", "x", tex)  # a command is about one glyph wide
    tex = re.sub(r"[{}^_]", "", tex)
    return sum(0.62 if " " <= ch <= "~" else 1.0 for ch in tex if ch != " ") + 0.15 * tex.count(" ")


def _plain(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links: their text
    return re.sub(r"<[^>]+>", "", text)  # inline HTML tags


def text_em(text: str) -> float:
    """Width of one line of rendered Markdown text, in em of the body font."""
    width = 0.0
    for part in re.split(r"(\$[^$]+\$|`[^`]+`)", _plain(text)):
        if part.startswith("$") and part.endswith("$") and len(part) > 1:
            width += _math_em(part[1:-1])
        elif part.startswith("`") and part.endswith("`") and len(part) > 1:
            width += 0.3 + sum(0.48 * (1.7 if unicodedata.east_asian_width(c) in "WF" else 1) for c in part[1:-1])
        else:
            for n, piece in enumerate(part.split("**")):  # bold text is a little wider
                width += sum(_char_em(ch) for ch in piece.replace("*", "").replace("\\", "")) * (1.06 if n % 2 else 1)
    return width


def longest_word_em(text: str) -> float:
    """The widest piece of a text that cannot be broken (a Latin word, a formula, inline code)."""
    words = re.findall(r"\$[^$]+\$|`[^`]+`|[!-~]+", _plain(text))
    return max((text_em(w) for w in words), default=0.0)


def text_lines(text: str, width_em: float = LINE_EM) -> int:
    """Lines a paragraph takes (its source line breaks are soft: they join). A line loses on average
    half of the widest unbreakable word, and the last characters before a full line are uncertain."""
    joined = " ".join(l.strip() for l in text.splitlines())
    usable = width_em - 0.5 * min(longest_word_em(joined), width_em / 2)
    return max(1, math.ceil(text_em(joined) / usable + 0.06))


def code_cols(line: str) -> float:
    return sum(1.7 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in line.expandtabs(4))


def code_lines(text: str) -> int:
    """Lines a code listing takes on a slide (long lines wrap)."""
    return sum(max(1, math.ceil(code_cols(line) / CODE_COLS)) for line in text.rstrip("\n").split("\n"))


def split_blocks(text: str) -> list[str]:
    """Markdown -> blocks: headings, paragraphs, lists, tables, formulas, quotes, code fences, HTML."""
    lines = text.split("\n")
    blocks: list[list[str]] = []
    current: list[str] = []
    kind = None

    def flush():
        nonlocal current, kind
        if any(l.strip() for l in current):
            blocks.append(current)
        current, kind = [], None

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        fence = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence:  # a code fence: up to its closing fence
            flush()
            block = [line]
            i += 1
            while i < len(lines):
                block.append(lines[i])
                if lines[i].strip() == fence.group(1):
                    break
                i += 1
            blocks.append(block)
            i += 1
            continue
        if stripped.startswith("$$") and kind != "math":
            flush()
            block = [line]
            if not (stripped.endswith("$$") and len(stripped) > 2):
                i += 1
                while i < len(lines):
                    block.append(lines[i])
                    if lines[i].strip().endswith("$$"):
                        break
                    i += 1
            blocks.append(block)
            i += 1
            continue
        if not stripped:
            if kind == "list":  # a blank line inside a list: the list goes on if the next line is indented
                nxt = next((l for l in lines[i + 1:] if l.strip()), "")
                if LIST_ITEM.match(nxt) or nxt.startswith(("  ", "\t")):
                    current.append(line)
                    i += 1
                    continue
            flush()
            i += 1
            continue
        if HEADING.match(line):
            flush()
            blocks.append([line])
            i += 1
            continue
        this = ("table" if stripped.startswith("|") else "quote" if stripped.startswith(">")
                else "list" if LIST_ITEM.match(line) else "html" if stripped.startswith("<") and kind is None
                else None)
        if kind == "list" and this is None and (line.startswith((" ", "\t"))):
            this = "list"  # a continuation line of a list item
        if kind == "list" and this is None:
            this = "list"  # a lazy continuation line
        if this != kind and (current and (this in ("table", "quote", "list") or kind in ("table", "quote", "html"))):
            flush()
        kind = kind or this or "para"
        if this in ("table", "quote", "list", "html"):
            kind = this
        current.append(line)
        i += 1
    flush()
    return ["\n".join(b).strip("\n") for b in blocks]


def _table_rows(block: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in block.splitlines() if not re.fullmatch(r"\s*\|?[\s:|-]+\|?\s*", line)]


SMALL_TABLE = 0.75  # the font of a table too wide for the slide at 0.9 em (its cells may break words)


def _column_widths(rows: list[list[str]], font_em: float) -> tuple[list[float], list[float], float, float]:
    """(widest, narrowest possible, available, padding) width of each column, in em of the table font."""
    ncols = max(len(r) for r in rows)
    small = font_em < 0.9
    pad = (16 if small else 24) / (FONT * font_em)
    most, least = [0.0] * ncols, [0.0] * ncols
    for row in rows:
        for j, cell in enumerate(row):
            most[j] = max(most[j], text_em(cell) + pad)
            word = min(longest_word_em(cell), text_em(cell))
            least[j] = max(least[j], min(word, 4.0) if small else word, 1.0)
    least = [l + pad for l in least]
    return most, least, INNER_W / (FONT * font_em), pad


def table_too_wide(rows: list[list[str]]) -> bool:
    """Whether a table's unbreakable words alone are wider than the slide at the normal table font."""
    if not rows:
        return False
    _, least, avail, _ = _column_widths(rows, 0.9)
    return sum(least) > 0.8 * avail  # a margin: the estimate once fell 97 px short on a table of numbers


def table_height(rows: list[list[str]], font_em: float = 0.9) -> float:
    """Height of a table whose rows are lists of cell texts. Column widths follow the browser's
    automatic table layout: every column gets its widest unbreakable word, and what is left is
    shared in proportion to how much more each column would like; cells then wrap."""
    if not rows:
        return 0
    most, least, avail, pad = _column_widths(rows, font_em)
    if sum(most) <= avail:
        widths = most
    else:
        extra = max(avail - sum(least), 0.0)
        want = sum(m - l for m, l in zip(most, least)) or 1.0
        widths = [l + (m - l) * extra / want for m, l in zip(most, least)]
    row_height = FONT * font_em * 1.25 + (6 if font_em < 0.9 else 10)
    height = 16.0
    for row in rows:
        lines = 1
        for j, cell in enumerate(row):
            usable = max(widths[j] - pad, 1.0)
            if text_em(cell) > usable + 0.05:
                lines = max(lines, math.ceil(text_em(cell) / (usable * 0.92) + 0.08))
        height += row_height + (lines - 1) * FONT * font_em * 1.25
    return height


def _display_math_height(tex: str) -> float:
    """A display formula: its tallest piece (fractions, sums with limits, braces, matrices) per row."""
    body = re.sub(r"\\begin\{([pbv]?matrix|cases|aligned|array)\}.*?\\end\{\1\}",
                  lambda m: "M" * (m.group(0).count("\\\\") + 1), tex, flags=re.S)
    rows = body.count("\\\\") + 1
    matrix_rows = max((len(m) for m in re.findall(r"M+", body)), default=0)
    tall = 1.3
    if re.search(r"\\(?:frac|dfrac|binom)", tex):
        tall = 3.0
    if re.search(r"\\(?:sum|prod|int)(?![A-Za-z])\s*[_^]", tex):
        tall = max(tall, 3.0 if re.search(r"\\(?:sum|prod|int)(?![A-Za-z])\s*(?:_\{[^{}]*\}|_\S)\s*\^", tex) else 2.4)
    if re.search(r"\\(?:underbrace|overbrace)", tex):
        tall += 1.5
    if matrix_rows:
        tall = max(tall, 1.35 * matrix_rows + 0.8)
    if re.search(r"\\frac\{[^{}]*\\frac", tex):
        tall += 1.0  # a fraction inside a fraction
    return 40 + (rows - 1) * 10 + rows * tall * FONT


def block_height(block: str, width_em: float = LINE_EM) -> float:
    """Estimated height of one Markdown block on a slide, with its bottom margin. width_em: the width
    of a line of body text where the block stands (less inside a quote or a list)."""
    first = block.lstrip().split("\n", 1)[0]
    heading = HEADING.match(first)
    if heading:
        level = len(heading.group(1))
        size = {1: 1.55, 2: 1.25, 3: 1.1}.get(level, 1.0)
        lines = text_lines(heading.group(2), width_em / size)
        return lines * size * FONT * 1.2 + {1: 24, 2: 12, 3: 10}.get(level, 8)
    if first.startswith(("```", "~~~")):
        return code_lines("\n".join(block.split("\n")[1:-1])) * CODE_LINE + 22
    if first.startswith("$$"):
        return _display_math_height(block)
    if first.startswith("|"):
        return table_height(_table_rows(block))
    if first.startswith(">"):
        inner = "\n".join(re.sub(r"^\s*>\s?", "", l) for l in block.splitlines())
        return 16 + 14 + sum(block_height(b, width_em - 1.3) for b in split_blocks(inner)) - 6
    if first.startswith("<div") or first.startswith("<p"):
        return text_lines(block, width_em) * LINE * 0.9 + 12
    if LIST_ITEM.match(first):
        height = 14.0
        for item in _list_items(block):
            indent = len(LIST_ITEM.match(item).group(1)) if LIST_ITEM.match(item) else 0
            body = LIST_ITEM.sub("", item, count=1)
            lines = text_lines(body, width_em - 1.3 * (1 + indent // 2))
            # long list items full of inline math wrap worse than the estimate (ch12: 30 % short)
            lines = math.ceil(lines * (1.2 if lines > 6 else 1.0))
            height += lines * LINE + 4 + _math_lift(body, lines)
        return height
    lines = text_lines(block, width_em)
    return lines * LINE + 14 + _math_lift(block, lines)


def _math_lift(text: str, lines: int) -> float:
    """Inline formulas make their lines a little taller (about 4 px each)."""
    return 4.0 * min(lines, len(re.findall(r"\$[^$]+\$", text)))


def _list_items(block: str) -> list[str]:
    items: list[list[str]] = []
    for line in block.split("\n"):
        if LIST_ITEM.match(line) or not items:
            items.append([line])
        else:
            items[-1].append(line)
    return ["\n".join(i) for i in items]


def split_tall_block(block: str, budget: float) -> list[str]:
    """A list, table or paragraph taller than a sub-slide, cut into pieces that fit."""
    first = block.lstrip().split("\n", 1)[0]
    if LIST_ITEM.match(first):
        parts = _list_items(block)
        top_level = [p for p in parts]
        pieces, current = [], []
        for part in top_level:
            if current and block_height("\n".join(current + [part])) > budget:
                pieces.append("\n".join(current))
                current = []
            current.append(part)
        pieces.append("\n".join(current))
        return pieces
    if first.startswith("|"):
        lines = block.split("\n")
        head, body = lines[:2], lines[2:]
        pieces, current = [], []
        for row in body:
            if current and block_height("\n".join(head + current + [row])) > budget:
                pieces.append("\n".join(head + current))
                current = []
            current.append(row)
        pieces.append("\n".join(head + current))
        return pieces
    if first.startswith(">"):  # a quote (an admonition): its blocks in pieces, each piece quoted
        inner = split_blocks("\n".join(re.sub(r"^\s*>\s?", "", l) for l in block.splitlines()))
        quote = lambda blocks: "\n>\n".join("\n".join("> " + l if l else ">" for l in b.split("\n")) for b in blocks)
        pieces, current = [], []
        for part in inner:
            for piece in (split_tall_block(part, budget - 60) if block_height(part) > budget - 60 else [part]):
                if current and block_height(quote(current + [piece])) > budget:
                    pieces.append(quote(current))
                    current = []
                current.append(piece)
        pieces.append(quote(current))
        return pieces
    if not first.startswith(("```", "$$", ">", "<")):  # a paragraph: cut after a sentence
        sentences = re.findall(r".+?(?:[。！？；]|$)", " ".join(block.split("\n")))
        pieces, current = [], ""
        for sentence in sentences:
            if current and block_height(current + sentence) > budget:
                pieces.append(current)
                current = ""
            current += sentence
        pieces.append(current)
        return [p for p in pieces if p.strip()]
    return [block]


# -- code cells -----------------------------------------------------------------------------------
GLUE_LINE = re.compile(r"^\s*glue\(.*\)\s*(#.*)?$")


def slide_source(source: str) -> str:
    """The code shown on a slide: without myst-nb's one-line ``glue(...)`` bookkeeping calls (and a
    loop or ``if`` whose body was nothing else)."""
    lines = source.split("\n")
    keep = [not GLUE_LINE.match(line) for line in lines]
    for i, line in enumerate(lines):
        if re.match(r"^\s*(for|if|with|while)\b.*:\s*(#.*)?$", line):
            indent = len(line) - len(line.lstrip())
            j, body = i + 1, []
            while j < len(lines) and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) > indent):
                if lines[j].strip():
                    body.append(j)
                j += 1
            if body and not any(keep[k] for k in body):
                keep[i] = False
    text = "\n".join(line for line, k in zip(lines, keep) if k)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def chunk_code(source: str, limit: int = CODE_CHUNK) -> list[str]:
    """Code in pieces of at most `limit` slide lines, cut at blank lines or top-level statements."""
    lines = source.split("\n")
    if code_lines(source) <= limit:
        return [source]
    pieces, start = [], 0
    while start < len(lines):
        end, used, best = start, 0, None
        while end < len(lines):
            used += max(1, math.ceil(code_cols(lines[end]) / CODE_COLS))
            if used > limit:
                break
            end += 1
            if end < len(lines) and (not lines[end].strip() or not lines[end].startswith((" ", "\t", ")", "]", "}"))):
                best = end  # a good place to cut: before a blank line or a new top-level statement
        if end >= len(lines):
            pieces.append("\n".join(lines[start:]))
            break
        cut = best if best and best - start >= limit // 2 else max(end, start + 1)
        pieces.append("\n".join(lines[start:cut]).strip("\n"))
        start = cut
        while start < len(lines) and not lines[start].strip():
            start += 1
    return [p for p in pieces if p.strip()]


def _png_size(data: str) -> tuple[int, int]:
    raw = base64.b64decode(data[:64] + "=" * (-len(data[:64]) % 4))
    return struct.unpack(">II", raw[16:24])


def _text(value) -> str:
    return "".join(value) if isinstance(value, list) else (value or "")


def _html_table_rows(table_html: str) -> list[list[str]]:
    rows = []
    for tr in re.findall(r"<tr\b.*?</tr>", table_html, flags=re.S):
        cells = re.findall(r"<t[hd]\b[^>]*>(.*?)</t[hd]>", tr, flags=re.S)
        rows.append([html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in cells])
    return rows


def output_items(output: dict) -> list["Item"]:
    """One output of a code cell -> items (long text and tables cut into chunks)."""
    kind = output.get("output_type")
    if kind == "stream":
        return _text_items(output, _text(output.get("text")), lambda o, t: {**o, "text": t})
    if kind == "error":
        text = "\n".join(output.get("traceback", []))
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        return [Item("output", output=output, height=code_lines(text) * CODE_LINE + 18)]
    data = output.get("data", {})
    if "text/html" in data:
        page = _text(data["text/html"])
        if "attnbook-slider" in page:
            frames = re.findall(r'<img data-frame[^>]*src="data:image/png;base64,([^"]+)"', page)
            w, h = _png_size(frames[0]) if frames else (800, 400)
            controls = max(1, len(re.findall(r"<label>", page)) // 2 + 1) * 1.3 * FONT + 10
            return [Item("slider", output=output, height=controls + _figure_min(w, h),
                         natural=controls + _figure_natural(w, h), figure=True)]
        if "<table" in page:
            return _table_items(output, page)
        return [Item("output", output=output, height=text_lines(re.sub(r"<[^>]+>", " ", page)) * LINE + 20)]
    for mime in ("image/png", "image/jpeg"):
        if mime in data:
            w, h = _png_size(_text(data[mime])) if mime == "image/png" else (800, 500)
            return [Item("figure", output=output, height=_figure_min(w, h), natural=_figure_natural(w, h),
                         figure=True)]
    if "image/svg+xml" in data:
        return [Item("figure", output=output, height=FIGURE_MIN, natural=FIGURE_MIN, figure=True)]
    if "text/markdown" in data:
        text = _text(data["text/markdown"])
        return [Item("output", output=output, height=sum(block_height(b) for b in split_blocks(text)) + 10)]
    if "text/latex" in data:
        return [Item("output", output=output, height=_display_math_height(_text(data["text/latex"])))]
    if "text/plain" in data:
        return _text_items(output, _text(data["text/plain"]),
                           lambda o, t: {**o, "data": {**o["data"], "text/plain": t}})
    return []


def _figure_natural(w: int, h: int) -> float:
    return min(h * INNER_W / w, h * MAX_ZOOM, BUDGET) + 10


def _figure_min(w: int, h: int) -> float:
    return min(_figure_natural(w, h), FIGURE_MIN)


def _text_items(output: dict, text: str, rebuild) -> list["Item"]:
    limit = int((BUDGET - 120) // CODE_LINE)  # a chunk leaves room for a heading and a line of text
    lines = text.rstrip("\n").split("\n")
    if code_lines(text) <= limit:
        return [Item("output", output=output, height=code_lines(text) * CODE_LINE + 18)]
    items, current = [], []
    for line in lines:
        if current and code_lines("\n".join(current + [line])) > limit:
            chunk = "\n".join(current) + "\n"
            items.append(Item("output", output=rebuild(output, chunk), height=code_lines(chunk) * CODE_LINE + 18))
            current = []
        current.append(line)
    chunk = "\n".join(current) + "\n"
    items.append(Item("output", output=rebuild(output, chunk), height=code_lines(chunk) * CODE_LINE + 18))
    return items


def _table_items(output: dict, page: str) -> list["Item"]:
    """A DataFrame's HTML table; a long one is cut into chunks of rows, each with the header. A table
    too wide for the slide is drawn smaller (class attnbook-small)."""
    rows = _html_table_rows(page)
    font_em = 0.9
    if table_too_wide(rows):
        font_em = SMALL_TABLE
        page = re.sub(r"<table\b([^>]*?)\bclass=\"([^\"]*)\"", r'<table\1class="\2 attnbook-small"', page, count=1) \
            if re.search(r"<table\b[^>]*\bclass=", page) else page.replace("<table", '<table class="attnbook-small"', 1)
        output = copy.deepcopy(output)
        output["data"] = {**output["data"], "text/html": page}
    height = table_height(rows, font_em) + 24
    if height <= BUDGET - 60:
        return [Item("output", output=output, height=height)]
    body = re.search(r"(<tbody>)(.*?)(</tbody>)", page, flags=re.S)
    if not body:
        return [Item("output", output=output, height=height)]
    trs = re.findall(r"<tr\b.*?</tr>", body.group(2), flags=re.S)
    head_rows = rows[: len(rows) - len(trs)]
    items, current = [], []

    def chunk_height(chunk):
        return table_height(head_rows + _html_table_rows("".join(chunk)), font_em) + 24

    def emit(chunk):
        out = copy.deepcopy(output)
        out["data"] = {"text/html": page[: body.start(2)] + "\n".join(chunk) + page[body.end(2):]}
        items.append(Item("output", output=out, height=chunk_height(chunk)))

    for tr in trs:
        if current and chunk_height(current + [tr]) > BUDGET - 60:
            emit(current)
            current = []
        current.append(tr)
    emit(current)
    return items


# -- items and layout -----------------------------------------------------------------------------
@dataclasses.dataclass
class Item:
    """A piece of a slide: one Markdown block, a piece of code, an output, or speaker notes."""
    kind: str  # heading | md | code | output | figure | slider | notes
    text: str = ""
    output: dict | None = None
    height: float = 0.0
    natural: float = 0.0  # figures: the height they would like (they shrink to `height`)
    figure: bool = False
    level: int = 0  # headings
    source_id: str = ""  # the notebook cell it comes from
    fragment: bool = False  # an output whose code is shown: it appears on the next key press
    keep_with_next: bool = False
    group: str = ""  # "after:<cell>": the code of a slider, on the sub-slide after it
    outputs: list = dataclasses.field(default_factory=list)  # outputs of one cell merged into one item
    deep_dive: bool = False  # from a 选读 cell: its slide gets the 选读 label


def mistune_safe(text: str) -> str:
    """What CommonMark (the site) and nbconvert's mistune read differently: mistune takes "#537" at
    the start of a line for a heading; escape a # that is not followed by a space."""
    out, fence = [], None
    for line in text.split("\n"):
        marker = re.match(r"^\s*(`{3,}|~{3,})", line)
        if fence is None and marker:
            fence = marker.group(1)
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is None:
            line = re.sub(r"^(\s*(?:>\s*)*)#(?=[^#\s])", r"\1\\#", line)
        out.append(line)
    return "\n".join(out)


def markdown_items(text: str, notes: list[str], source_id: str) -> list[Item]:
    items = []
    for block in split_blocks(mistune_safe(text)):
        heading = HEADING.match(block.split("\n", 1)[0])
        if heading:
            items.append(Item("heading", text=block, height=block_height(block), level=len(heading.group(1)),
                              source_id=source_id, keep_with_next=True))
            continue
        height = block_height(block)
        pieces = split_tall_block(block, BUDGET - 140) if height > BUDGET - 140 else [block]
        for piece in pieces:
            ends_with_colon = re.search(r"[：:]\s*$", piece) is not None and not piece.lstrip().startswith(("|", "$$"))
            items.append(Item("md", text=piece, height=block_height(piece), source_id=source_id,
                              keep_with_next=ends_with_colon))
    for note in notes:
        items.append(Item("notes", text=note, source_id=source_id))
    return items


def code_items(cell, source_id: str, show_input: bool) -> list[Item]:
    items: list[Item] = []
    outputs = [o for o in cell.get("outputs", [])
               if not (o.get("data") and all(k.startswith(GLUE_MIME) for k in o["data"]))]
    out_items = [item for o in outputs for item in output_items(o)]
    source = slide_source(cell.source) if show_input else ""
    is_slider = any(i.kind == "slider" for i in out_items)
    for item in out_items:
        item.source_id = source_id
        item.fragment = bool(source) and not is_slider
    chunks = [Item("code", text=chunk, height=code_lines(chunk) * CODE_LINE + 18, source_id=source_id)
              for chunk in chunk_code(source)] if source.strip() else []
    if chunks and out_items and not any(i.figure for i in out_items) and \
            sum(i.height for i in out_items) <= 240:
        chunks[-1].keep_with_next = True  # a short output stays with its code
        for item in out_items[:-1]:
            item.keep_with_next = True
    if is_slider and chunks:
        # the slider stays with its instruction; the code that made it follows on the next sub-slide
        note = Item("md", text='<div class="attnbook-code-note">上面滑块的代码：</div>', height=LINE + 8,
                    source_id=source_id, keep_with_next=True)
        for chunk in chunks:
            chunk.group = f"after:{source_id}"
        return out_items + [note] + chunks
    return chunks + out_items


def solution_notes(cell) -> str:
    """A reference-solution cell (hide-cell) as speaker notes: its code and what it printed."""
    printed = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            printed.append(_text(output.get("text")))
        elif output.get("data", {}).get("text/plain") and not any(k.startswith(GLUE_MIME) for k in output["data"]):
            printed.append(_text(output["data"]["text/plain"]))
    text = f"**参考解答（代码单元）**\n\n```python\n{slide_source(cell.source)}\n```"
    if printed:
        text += "\n\n输出：\n\n```text\n" + "".join(printed).rstrip("\n") + "\n```"
    return text


def layout(items: list[Item]) -> list[list[Item]]:
    """Items -> sub-slides: [[items of sub-slide 1], ...]; each list starts with its slide kind."""
    # units: runs of items that must share a sub-slide
    units: list[list[Item]] = []
    pending: list[Item] = []
    for item in items:
        pending.append(item)
        if item.kind == "notes" or item.keep_with_next:
            continue
        units.append(pending)
        pending = []
    if pending:
        units.append(pending)
    # a 动手试试 section: its heading and text stay with its slider. Code between the text and the
    # slider (the frames it shows) moves after the slider.
    merged: list[list[Item]] = []
    textual = ("md", "notes", "heading", "kicker")
    for unit in units:
        if any(i.kind == "slider" for i in unit) and merged:
            j = len(merged) - 1
            while j >= 0 and not any(i.kind == "heading" for i in merged[j]):
                j -= 1
            if j >= 0:
                span = merged[j:]
                text = [u for u in span if all(i.kind in textual for i in u)]
                rest = [u for u in span if not all(i.kind in textual for i in u)]
                if text and all(i.kind in textual for i in span[0]):
                    del merged[j:]
                    words = [i for u in text for i in u]
                    moved: list[Item] = []
                    # text too long to share the slide with the slider, even drawn small: its last
                    # paragraphs follow the slider
                    while _floor_height(words + unit) > BUDGET and sum(i.kind == "md" for i in words) > 1:
                        last = max(n for n, i in enumerate(words) if i.kind == "md")
                        moved.insert(0, words.pop(last))
                    if _floor_height(words + unit) > BUDGET:  # one long paragraph: keep up to its instruction
                        last = max((n for n, i in enumerate(words) if i.kind == "md"), default=None)
                        if last is not None:
                            keep, rest_text = _instruction_part(words[last].text,
                                                                BUDGET - _floor_height(words + unit) + words[last].height)
                            if rest_text:
                                words[last] = dataclasses.replace(words[last], text=keep, height=block_height(keep))
                                moved.insert(0, dataclasses.replace(words[last], text=rest_text,
                                                                    height=block_height(rest_text), source_id=""))
                    merged.append(words + unit)
                    if moved:
                        merged.append(moved)
                    merged.extend(rest)
                    continue
        merged.append(unit)

    slides: list[list[Item]] = []
    section = ""  # title of the section we are in, for "（续）"
    used, has_figure = 0.0, False
    for unit in merged:
        height = sum(i.height for i in unit if i.kind != "notes")
        if len(unit) > 1 and height > BUDGET and any(i.figure for i in unit):
            # a figure shrinks (down to FIGURE_FLOOR) to stay on one slide with its text
            floor = height - sum(max(i.height - FIGURE_FLOOR, 0) for i in unit if i.figure)
            if floor <= BUDGET:
                squeeze = height - BUDGET
                for item in unit:
                    if item.figure:
                        give = min(squeeze, max(item.height - FIGURE_FLOOR, 0))
                        item.height -= give
                        squeeze -= give
                height = sum(i.height for i in unit if i.kind != "notes")
        head = next((i for i in unit if i.kind not in ("notes", "kicker")), None)
        starts = head is not None and head.kind == "heading"
        if starts and any(i.kind == "kicker" for i in unit):
            head = dataclasses.replace(head, level=min(head.level, 2))
        figure = any(i.figure for i in unit)
        if starts and head.level <= 2:
            slides.append(["slide"])
            used, has_figure = 0.0, False
        elif starts:
            slides.append(["subslide"])
            used, has_figure = 0.0, False
        elif not slides:
            slides.append(["slide"])
        elif used > 0 and (used + height > BUDGET or (figure and has_figure)
                           or (unit[0].group.startswith("after:"))):
            slides.append(["subslide", _continued(section)])
            used, has_figure = slides[-1][1].height, False
        if starts:
            section = re.sub(r"^#+\s*", "", head.text).strip()
        if height > BUDGET - used and len(unit) > 1:  # too tall to keep together: place its items one by one
            for item in unit:
                if item.kind != "notes" and used > 0 and used + item.height > BUDGET:
                    slides.append(["subslide", _continued(section)])
                    used, has_figure = slides[-1][1].height, False
                slides[-1].append(item)
                used += item.height if item.kind != "notes" else 0
                has_figure = has_figure or item.figure
            continue
        slides[-1].extend(unit)
        used += height
        has_figure = has_figure or figure
    return slides


INSTRUCTION = re.compile(r"拖|滑块|切换|选一|选择|菜单|下拉")


def _instruction_part(text: str, room: float) -> tuple[str, str]:
    """A paragraph cut after the sentence that says what to do with the slider (or after as many
    sentences as fit in `room`): (what stays with the slider, what follows it)."""
    if not re.match(r"^[^\s|>$<#`-]", text):
        return text, ""
    sentences = re.findall(r".+?(?:[。！？]|$)", " ".join(text.split("\n")))
    said = [n for n, sentence in enumerate(sentences) if INSTRUCTION.search(sentence)]
    cut = said[-1] + 1 if said else 1
    while cut > 1 and block_height("".join(sentences[:cut])) > room and not said:
        cut -= 1
    keep, rest = "".join(sentences[:cut]).strip(), "".join(sentences[cut:]).strip()
    return (keep, rest) if keep and rest else (text, "")


def _floor_height(unit: list[Item]) -> float:
    """The height of a unit with its figures drawn as small as they may be."""
    return sum(min(i.height, FIGURE_FLOOR) if i.figure else i.height for i in unit if i.kind != "notes")


def _continued(section: str) -> Item:
    title = html.escape(re.sub(r"[*`]", "", section), quote=False) if section else ""
    text = f'<div class="attnbook-cont">{title}（续）</div>' if title else '<div class="attnbook-cont">（续）</div>'
    return Item("md", text=text, height=0.9 * FONT * 1.35 + 10)


def to_cells(slides: list[list]) -> list:
    """Sub-slides of items -> notebook cells with slideshow metadata for nbconvert."""
    cells = []
    for slide in slides:
        kind, items = slide[0], slide[1:]
        notes = [i for i in items if i.kind == "notes"]
        body = [i for i in items if i.kind != "notes"]
        first = True
        merged: list[Item] = []
        for item in body:  # consecutive Markdown blocks of one cell, and outputs of one cell, make one cell
            prev = merged[-1] if merged else None
            if prev and prev.kind in ("md", "heading", "kicker") and item.kind in ("md", "heading", "kicker") and \
                    prev.source_id == item.source_id and item.source_id:
                merged[-1] = dataclasses.replace(prev, kind="md", text=prev.text + "\n\n" + item.text)
            elif prev and prev.output is not None and item.output is not None and \
                    prev.source_id == item.source_id and prev.fragment == item.fragment:
                merged[-1] = dataclasses.replace(prev, outputs=(prev.outputs or [prev.output]) + [item.output],
                                                 figure=prev.figure or item.figure)
            else:
                merged.append(item)
        for item in merged:
            if item.kind in ("md", "heading", "kicker"):
                cell = nbformat.v4.new_markdown_cell(item.text)
            elif item.kind == "code":
                cell = nbformat.v4.new_code_cell(item.text)
            else:
                outputs = item.outputs or [item.output]
                cell = nbformat.v4.new_code_cell("", outputs=[nbformat.from_dict(o) for o in outputs])
                cell.metadata["transient"] = {"remove_source": True}
            slide_type = kind if first else ("fragment" if item.fragment else "-")
            cell.metadata["slideshow"] = {"slide_type": slide_type}
            if item.deep_dive:  # nbconvert gives the cell the class celltag_deep-dive (the label's CSS)
                cell.metadata["tags"] = [book_text.DEEP_DIVE]
            cells.append(cell)
            if first:  # the notes go right after the first cell, outside any fragment
                for note in notes:
                    cells.append(nbformat.v4.new_markdown_cell(
                        note.text, metadata={"slideshow": {"slide_type": "notes"}}))
                first = False
    return cells


# -- a notebook -> items ----------------------------------------------------------------------------
@dataclasses.dataclass
class Selection:
    """Which cells of a notebook a curated deck takes: those tagged `tag` (``slides-s1``), or listed by
    cell id in `ids` (for notebooks whose tags this script must not touch). A tag or an id may carry an
    option after a colon: ``:output`` (a code cell's output only), ``:3`` (the first 3 Markdown blocks
    of the cell: headings, paragraphs, lists, tables, formulas) or ``:练习`` (the ``##``/``###``
    section of the cell whose title starts with 练习)."""
    tag: str
    ids: tuple[str, ...] = ()

    def pick(self, cell) -> tuple[bool, str]:
        for tag in cell.metadata.get("tags", []):
            if tag == self.tag:
                return True, ""
            if tag.startswith(self.tag + ":"):
                return True, tag[len(self.tag) + 1:]
        for entry in self.ids:
            cell_id, _, option = entry.partition(":")
            if cell.get("id") == cell_id:
                return True, option
        return False, ""


def _only_section(text: str, title: str) -> str:
    """The part of rendered Markdown under the heading whose title starts with `title`."""
    out, keep, level = [], False, 0
    for line in text.split("\n"):
        heading = HEADING.match(line)
        if heading:
            if heading.group(2).startswith(title):
                keep, level = True, len(heading.group(1))
            elif keep and len(heading.group(1)) <= level:
                keep = False
        if keep:
            out.append(line)
    if not out:
        raise myst_render.RenderError(f"没有标题以 {title!r} 开头的小节")
    return "\n".join(out)


def notebook_items(nb, page: str, select: Selection | None = None, kicker: str = "") -> list[Item]:
    """The cells of a notebook as slide items (MyST rendered; what a slide does not show left out)."""
    glue = myst_render.glue_values(nb)
    book = slides_book()
    items: list[Item] = []
    code_seen = 0
    heading_now: dict[int, str] = {}  # level -> the heading we are under (curated decks add it)
    heading_done: dict[int, str] = {}
    deep = book_text.deep_dive_cells(nb.cells)
    for index, cell in enumerate(nb.cells):
        tags = set(cell.metadata.get("tags", []))
        cell_id = cell.get("id", str(index))
        where = f"{page}，第 {index} 个单元"
        if cell.cell_type == "code":
            code_seen += 1
        if tags & SKIP_TAGS or cell.cell_type not in ("markdown", "code"):
            continue
        if index in deep and select is not None:  # the session decks leave the deep dives (选读) out
            continue
        first_item = len(items)
        if cell.cell_type == "code" and code_seen <= 2:  # the setup and import cells
            continue
        rendered = None
        if cell.cell_type == "markdown":
            try:
                rendered = myst_render.render_markdown(cell.source, medium="slides", page=page, glue=glue,
                                                       book=book, where=where)
            except myst_render.RenderError:
                if select is None or select.pick(cell)[0]:
                    raise
                # a cell a curated deck does not take: only its headings matter (its own deck fails)
                rendered = myst_render.Rendered("\n".join(l for l in cell.source.split("\n") if HEADING.match(l)),
                                                [])
            for line in rendered.text.split("\n"):
                heading = HEADING.match(line)
                if heading and len(heading.group(1)) in (2, 3):
                    level = len(heading.group(1))
                    heading_now[level] = line
                    if level == 2:
                        heading_now.pop(3, None)
        if select is not None:
            chosen, section = select.pick(cell)
            if not chosen:
                continue
            if rendered is not None and section.isdigit():
                rendered = myst_render.Rendered("\n\n".join(split_blocks(rendered.text)[: int(section)]),
                                                rendered.notes)
            elif rendered is not None and section:
                try:
                    rendered = myst_render.Rendered(_only_section(rendered.text, section), rendered.notes)
                except myst_render.RenderError as error:
                    raise myst_render.RenderError(f"{where}：{error}") from None
            elif section == "output" and cell.cell_type == "code":
                tags = tags | {"hide-input"}
            visible = (rendered.text.strip() if rendered is not None else not tags & SOLUTION_TAGS)
            own = [l for l in (rendered.text.split("\n") if rendered else []) if HEADING.match(l)]
            need = {level: heading_now[level] for level in (2, 3)
                    if visible and heading_now.get(level) and heading_done.get(level) != heading_now[level]
                    and heading_now[level] not in own}
            if 2 in need and heading_done.get(2) == need[2]:
                need.pop(2)
            if 2 not in need and 3 in need and heading_done.get(2) != heading_now.get(2):
                need.pop(3)
            opens_h3 = rendered is not None and bool(own) and rendered.text.lstrip().startswith("### ") \
                and len(HEADING.match(own[0]).group(1)) == 3
            if 2 in need and (3 in need or opens_h3):
                # a ### section picked from a ## section that is not: one slide headed by the ###
                # title, the ## title goes into the line above it
                section_title = HEADING.match(need[2]).group(2)
                items += _kicker_items(f"{kicker} › {section_title}" if kicker else section_title, cell_id)
                if 3 in need:
                    items.append(_heading_item("## " + HEADING.match(need[3]).group(2), cell_id + ":h"))
                else:
                    rendered = myst_render.Rendered(re.sub(r"^(\s*)### ", r"\1## ", rendered.text, count=1),
                                                    rendered.notes)
            elif 2 in need:
                items += _kicker_items(kicker, cell_id) if kicker else []
                items.append(_heading_item(need[2], cell_id + ":h"))
            elif 3 in need:
                items.append(_heading_item(need[3], cell_id + ":h"))
            for level, line in need.items():
                heading_done[level] = line
            if 2 in need:
                heading_done[3] = need.get(3)
            for line in own:
                level = len(HEADING.match(line).group(1))
                heading_done[level] = line
                if level == 2:
                    heading_done.pop(3, None)
        if cell.cell_type == "markdown":
            new = markdown_items(rendered.text, rendered.notes, cell_id)
            if kicker and not (items and items[-1].kind == "kicker"):
                for n, item in enumerate(new):
                    if item.kind == "heading" and item.level <= 2:
                        new[n:n] = _kicker_items(kicker, cell_id)
                        break
            items += new
            _mark_deep_dive(items, first_item, index in deep)
            continue
        if tags & SOLUTION_TAGS:
            items.append(Item("notes", text=solution_notes(cell), source_id=cell_id))
            continue
        if tags & NO_OUTPUT_TAGS:
            cell = copy.deepcopy(cell)
            cell.outputs = []
        items += code_items(cell, cell_id, show_input=not tags & NO_INPUT_TAGS)
        _mark_deep_dive(items, first_item, index in deep)
    return items


def _mark_deep_dive(items: list[Item], start: int, deep: bool) -> None:
    if deep:
        for item in items[start:]:
            item.deep_dive = True


def _heading_item(line: str, source_id: str) -> Item:
    level = len(HEADING.match(line).group(1))
    return Item("heading", text=line, height=block_height(line), level=level, source_id=source_id,
                keep_with_next=True)


def _kicker_items(kicker: str, source_id: str) -> list[Item]:
    """The line above a curated deck's ## heading: which chapter (and section) the slide comes from."""
    return [Item("kicker", text=f'<div class="attnbook-kicker">{html.escape(kicker, quote=False)}</div>',
                 height=0.9 * FONT * 1.35 + 6, source_id=source_id + ":k", keep_with_next=True)]


def prepare(nb, page: str):
    """A copy of the notebook ready for the slides exporter (the notebook on disk is not touched)."""
    authored = any(c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells)
    out = copy.deepcopy(nb)
    if authored:  # the author's own slide structure: only render the MyST
        glue, book = myst_render.glue_values(nb), slides_book()
        cells = []
        for index, cell in enumerate(out.cells):
            if cell.cell_type == "markdown":
                rendered = myst_render.render_markdown(cell.source, medium="slides", page=page, glue=glue,
                                                       book=book, where=f"{page}，第 {index} 个单元")
                cell.source = rendered.text
                cells.append(cell)
                cells += [nbformat.v4.new_markdown_cell(n, metadata={"slideshow": {"slide_type": "notes"}})
                          for n in rendered.notes]
            elif cell.cell_type == "code":
                cell.outputs = [o for o in cell.outputs
                                if not (o.get("data") and all(k.startswith(GLUE_MIME) for k in o["data"]))]
                cells.append(cell)
        out.cells = cells
        return out
    items = notebook_items(nb, page)
    title, rest = items[0], items[1:]
    links = _title_links(page)
    out.cells = to_cells(layout([title, links] + rest))
    return out


def _title_links(page: str) -> Item:
    html_page = site_link("", page, "")
    return Item("md", text=(f'<p class="attnbook-deck-links"><a href="{html_page}">在网页中阅读本章</a> · '
                            f'<a href="index.html">全部幻灯片</a> · 方向键翻页，S 键打开讲者备注'
                            f'（练习的提示与解答）</p>'), height=2 * LINE + 14, source_id="links")


# -- curated decks: the teacher's 2 × 45 minute plan (appendix/teaching.md) -------------------------
@dataclasses.dataclass
class Session:
    name: str  # slides/<name>.slides.html
    title: str
    intro: str  # Markdown on the title slide
    parts: tuple[tuple[str, str], ...]  # (notebook, tag), in the order of the plan
    outro: str = ""  # Markdown of the last slide


SESSIONS = {
    "session1": Session(
        "session1", "第 1 课时：从直觉到公式",
        "词义取决于上下文 → 软检索与温度 → Q、K、V 从哪来 → 手算“猫吃鱼” → 缩放预告\n\n"
        "教师指南“两课时方案”的第 1 课时，45 分钟。练习 04-1 的答案（“吃”那一行的权重）在练习之后才出现；"
        "参考解答在讲者备注里（S 键）。",
        (("chapters/01_context.ipynb", "slides-s1"),
         ("chapters/02_attention_lookup.ipynb", "slides-s1"),
         ("chapters/02_attention_lookup.ipynb", "slides-s1-reveal"),  # after the vote on 02-1: the slider
         ("chapters/03_self_attention_qkv.ipynb", "slides-s1"),
         ("chapters/04_cat_eats_fish.ipynb", "slides-s1"),
         ("chapters/04_cat_eats_fish.ipynb", "slides-s1-reveal"),  # after the exercise: the answers
         ("chapters/05_scaling.ipynb", "slides-s1")),
        "## 出门检查\n\n每人一张纸条，答完再走：\n\n"
        "- 注意力权重的一行为什么和为 1？\n- 输出落在哪里？"),
    "session2": Session(
        "session2", "第 2 课时：实现与避坑",
        "四步走 → 切头 → 填充、因果与两种 PyTorch 约定 → 掩码写错的模型 → 打乱词序\n\n"
        "教师指南“两课时方案”的第 2 课时，45 分钟。练习的参考解答在讲者备注里（S 键）。",
        (("chapters/07_single_head.ipynb", "slides-s2"),
         ("chapters/08_multi_head.ipynb", "slides-s2"),
         ("chapters/09_masks.ipynb", "slides-s2"),
         ("chapters/13_mask_bugs.ipynb", "slides-s2"),
         ("chapters/10_positional_encoding.ipynb", "slides-s2")),
        "## 出门检查\n\n每人一张纸条，答完再走：\n\n"
        "- 怎样用一次“改未来、看过去”检查因果掩码有没有写对？"),
}
#: Cells taken by id, for notebooks whose tags are not edited by this script's author (other work on
#: them was under way): (session, notebook) -> "id" or "id:option" (see Selection). Cell ids are
#: stable: editing or moving a cell keeps its id.
SESSION_CELLS: dict[tuple[str, str], tuple[str, ...]] = {
    ("session2", "chapters/09_masks.ipynb"): (
        "7a20e6ff:1",  # 填充掩码：两句话，长度 3 和 5，打印成 0/1 表格
        "be1d82d2:output",  # 0/1 表格与核对
        "33030a41:5",  # 因果掩码：直觉、公式、diagonal=1
        "9bd8e27a:output",  # 下三角
        "0a978abf",  # 两种掩码合用 + 动手试试
        "169dfd3b:output",  # 掩码类型 滑块
        "8d9cf0de:3",  # PyTorch 的掩码约定：三种读法（真值表在选读里，课上不放）
    ),
}


def _chapter_label(nb, page: str) -> str:
    title = next((l[2:].strip() for l in nb.cells[0].source.splitlines() if l.startswith("# ")), page)
    number = re.match(r"(\d\d)_", posixpath.basename(page))
    return f"第 {int(number.group(1))} 章 · {title}" if number else title


def session_notebook(session: Session):
    """The notebook a curated deck is exported from (cells picked from the chapters)."""
    items = [Item("heading", text=f"# {session.title}", height=block_height(f"# {session.title}"), level=1,
                  source_id="title", keep_with_next=True)]
    items += markdown_items(session.intro, [], "intro")
    items.append(Item("md", text=('<p class="attnbook-deck-links"><a href="../appendix/teaching.html">教师指南</a> · '
                                  '<a href="index.html">全部幻灯片</a> · 方向键翻页，S 键打开讲者备注'
                                  '（练习的提示与解答）</p>'), height=2 * LINE + 14, source_id="links"))
    for page, tag in session.parts:
        nb = nbformat.read(ROOT / page, as_version=4)
        ids = SESSION_CELLS.get((session.name, page), ()) if tag == _main_tag(session) else ()
        select = Selection(tag, ids)
        chosen = notebook_items(nb, page, select, kicker=_chapter_label(nb, page))
        if not chosen:
            raise SystemExit(f"{session.name}：{page} 里没有选中的单元（标签 {tag}）")
        items += chosen
    if session.outro:
        items += markdown_items(session.outro, [], "outro")
    nb = nbformat.v4.new_notebook()
    nb.metadata["title"] = session.title
    nb.cells = to_cells(layout(items))
    return nb


def _main_tag(session: Session) -> str:
    return session.parts[0][1]


# -- export -------------------------------------------------------------------------------------
def exporter():
    from jinja2 import DictLoader
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    config = Config()
    config.SlidesExporter.reveal_url_prefix = REVEAL_DIR
    config.SlidesExporter.reveal_theme = "white"
    config.SlidesExporter.reveal_transition = "none"
    config.SlidesExporter.reveal_width = str(WIDTH)
    config.SlidesExporter.reveal_height = str(HEIGHT)
    config.SlidesExporter.language_code = "zh"
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    return SlidesExporter(config=config, template_file="attnbook_slides.html.j2",
                          extra_loaders=[DictLoader({"attnbook_slides.html.j2": TEMPLATE})])


def _inputs_digest(digest) -> None:
    from importlib.metadata import version

    digest.update(pathlib.Path(__file__).read_bytes())
    digest.update((pathlib.Path(__file__).parent / "myst_render.py").read_bytes())
    digest.update((pathlib.Path(__file__).parent / "book_text.py").read_bytes())
    digest.update(json.dumps(labels(), sort_keys=True, ensure_ascii=False).encode())
    digest.update(version("nbconvert").encode())


def deck_key(path: pathlib.Path | str) -> str:
    """What a deck is made from: the notebook(s), this script (its template and rules), the MyST
    renderer, the book's labels and nbconvert's version. A rebuild with the same key reuses the deck
    (a warm `make html` rebuilds no deck). `path`: a chapter notebook, or a SESSIONS name."""
    digest = hashlib.sha256()
    if isinstance(path, str) and path in SESSIONS:
        for page in dict.fromkeys(page for page, _ in SESSIONS[path].parts):
            digest.update(page.encode())
            digest.update((ROOT / page).read_bytes())
    else:
        digest.update(pathlib.Path(path).read_bytes())
    _inputs_digest(digest)
    return digest.hexdigest()


def _export(nb, name: str, out: pathlib.Path, export) -> pathlib.Path:
    resources = {"attnbook": {"mathjax_url": posixpath.relpath("_static/mathjax/tex-chtml.js", "slides"),
                              "font_url": posixpath.relpath("_static/fonts/AttnBookSansSC-Regular.otf", "slides")},
                 "metadata": {"name": name}}
    body, _ = export.from_notebook_node(nb, resources=resources)
    target = out / f"{name}.slides.html"
    target.write_text(figure_sizes(figure_alts(body)), encoding="utf-8")
    return target


def build_deck(path: pathlib.Path, out: pathlib.Path, export=None) -> pathlib.Path:
    page = path.resolve().relative_to(ROOT).as_posix()
    source = nbformat.read(path, as_version=4)
    nb = prepare(source, page)
    nb.metadata["title"] = next((l[2:].strip() for l in source.cells[0].source.splitlines() if l.startswith("# ")),
                                path.stem)
    return _export(nb, path.stem, out, export or exporter())


def build_session(name: str, out: pathlib.Path, export=None) -> pathlib.Path:
    return _export(session_notebook(SESSIONS[name]), name, out, export or exporter())


NBCONVERT_ALT = "No description has been provided for this image"


def figure_alts(body: str) -> str:
    """Give each embedded figure the Chinese description attnbook stored in its PNG (as the site does)."""
    from PIL import Image

    def fix(match: re.Match) -> str:
        tag = match.group(0)
        data = re.search(r'src="data:image/png;base64,([^"]+)"', tag)
        if NBCONVERT_ALT not in tag or data is None:
            return tag
        with Image.open(io.BytesIO(base64.b64decode(data.group(1)))) as image:
            description = getattr(image, "text", {}).get("Description", "") or "图：代码单元画出的图"
        return tag.replace(NBCONVERT_ALT, html.escape(description, quote=True))

    return re.sub(r"<img\b[^>]*>", fix, body)


def figure_sizes(body: str) -> str:
    """A figure grows into the room left on its slide, but to at most MAX_ZOOM × its pixel size and
    never taller than it is at the full width of the slide (no empty band under a wide figure)."""
    def fix(match: re.Match) -> str:
        tag = match.group(0)
        data = re.search(r'src="data:image/png;base64,([^"]+)"', tag)
        if data is None:
            return tag
        w, h = _png_size(data.group(1))
        limit = f"max-height:{min(h * MAX_ZOOM, h * INNER_W / w):.0f}px;max-width:{w * MAX_ZOOM:.0f}px"
        if 'style="' in tag:
            return tag.replace('style="', f'style="{limit};', 1)
        return tag.replace("<img", f'<img style="{limit}"', 1)

    return re.sub(r"<img\b[^>]*>", fix, body)


def write_index(out: pathlib.Path) -> None:
    def title(deck: pathlib.Path) -> str:
        found = re.search(r"<title>(.*?) slides</title>", deck.read_text(encoding="utf-8"))
        return found.group(1) if found else deck.stem

    chapters = [d for d in sorted(out.glob("*.slides.html")) if d.name.split(".")[0] not in SESSIONS]
    sessions = [out / f"{name}.slides.html" for name in SESSIONS if (out / f"{name}.slides.html").exists()]
    items = "".join(f'<li><a href="{d.name}">{title(d)}</a></li>' for d in chapters)
    plan = "".join(f'<li><a href="{d.name}">{title(d)}</a></li>' for d in sessions)
    (out / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8"><title>幻灯片</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<style>body{font-family:sans-serif;max-width:40em;margin:2em auto;line-height:1.8}</style>'
        '</head><body><h1>《自注意力机制详解》幻灯片</h1>'
        '<p>每章一套，由章节笔记本生成。方向键翻页，S 键打开讲者备注，Esc 看全部幻灯片。'
        '<a href="../intro.html">回到本书</a></p>'
        + ('<h2>两课时方案（2 × 45 分钟）</h2><p>按<a href="../appendix/teaching.html">教师指南</a>'
           '的两课时方案，从各章选出的单元：</p><ul>' + plan + "</ul>" if plan else "")
        + "<h2>各章</h2><ol>" + items + "</ol></body></html>\n",
        encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("decks", nargs="*", help="chapter notebooks and/or " + ", ".join(SESSIONS))
    parser.add_argument("--site", type=pathlib.Path, default=SITE, help="the built site (default _build/html)")
    parser.add_argument("--reveal-tarball", type=pathlib.Path, default=None)
    args = parser.parse_args()
    if not (args.site / "_static" / "mathjax" / "tex-chtml.js").exists():
        print(f"{args.site} 里没有 MathJax：先建站（make html），再生成幻灯片", file=sys.stderr)
        return 1
    out = args.site / "slides"
    out.mkdir(parents=True, exist_ok=True)
    install_reveal(reveal_tarball(args.reveal_tarball), out)
    os.environ.setdefault("ATTNBOOK_STATIC", "1")
    export = None  # nbconvert is imported only when a deck has to be (re)built
    keys = args.site.parent / ".cache" / "slides"  # what each deck was built from (kept out of the site)
    keys.mkdir(parents=True, exist_ok=True)
    wanted = args.decks or [p.relative_to(ROOT).as_posix() for p in sorted(ROOT.glob("chapters/[0-9][0-9]_*.ipynb"))] \
        + list(SESSIONS)
    failed = []
    for entry in wanted:
        session = entry in SESSIONS
        name = entry if session else pathlib.Path(entry).stem
        target, stamp = out / f"{name}.slides.html", keys / f"{name}.sha256"
        path = None if session else (pathlib.Path(entry) if pathlib.Path(entry).exists() else ROOT / entry).resolve()
        key = deck_key(entry if session else path)
        if target.exists() and stamp.exists() and stamp.read_text() == key:
            deck, note = target, "（未变，沿用）"
        else:
            export = export or exporter()
            try:
                deck = build_session(entry, out, export) if session else build_deck(path, out, export)
            except myst_render.RenderError as error:  # raw MyST would reach a slide: no deck
                print(f"幻灯片 {name} 没有生成：{error}", file=sys.stderr)
                failed.append(name)
                continue
            note = ""
            stamp.write_text(key)
        print(f"{deck.relative_to(args.site.parent.parent) if args.site == SITE else deck}"
              f"  {deck.stat().st_size / 1e6:.2f} MB{note}")
    write_index(out)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
