"""Turn each chapter into a reveal.js deck: _build/html/slides/NN_name.slides.html (``make slides``).

    python tools/make_slides.py                                  # every chapter, after `make html`
    python tools/make_slides.py chapters/04_cat_eats_fish.ipynb  # one chapter
    python tools/make_slides.py --reveal-tarball reveal.js-4.6.1.tgz   # offline: a tarball you have

* The decks come from nbconvert's slides exporter (what ``jupyter nbconvert --to slides`` runs),
  with a small template on top that loads nothing from another host: reveal.js is served from
  ``slides/revealjs/`` and MathJax 3 from the site's own ``_static/mathjax`` (so build the site
  first); nbconvert's jQuery, require.js, mermaid and MathJax 2 CDN scripts are left out.
* reveal.js is not committed. It is taken from the npm package reveal.js@4.6.1 (MIT), fetched
  once with ``npm pack`` and checked against the registry's sha512 integrity, then cached in
  _build/.cache/. Only dist/reveal.{js,css}, the white theme with its font, the notes plugin and
  the licence are copied next to the decks.
* Slide structure: a notebook whose cells carry ``slideshow.slide_type`` metadata is used as its
  author marked it. Otherwise (the default for this book) the copy that is exported -- never the
  notebook on disk -- gets: the title cell and every ``##`` section -> new slide; ``###`` ->
  sub-slide (down arrow); code cells -> fragment (the output appears on the next key press);
  a sub-slide that would overflow continues on a new sub-slide. Markdown cells are split at their
  headings first.
* Jupyter Book conventions are honoured: the setup and import cells and ``hide-cell`` /
  ``remove-cell`` cells (reference solutions) are skipped, ``hide-input`` shows only the output,
  ``{dropdown}`` blocks (hints and solutions) become speaker notes (press S), admonitions become
  block quotes, MyST roles become their text, links to other pages point at the site.
"""
from __future__ import annotations

import argparse
import base64
import copy
import hashlib
import os
import pathlib
import posixpath
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

import nbformat

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
CACHE = ROOT / "_build" / ".cache"

REVEAL_VERSION = "4.6.1"
REVEAL_INTEGRITY = ("sha512-1CW0auaXNPmwmvQ7TwpszwVxMi2Xr5cTS3J3EBC/HHgbPF32Dn7aiu/LKWDOGjMbaDwKQiGmfqc"
                    "oGQ74HUHCMw==")
REVEAL_FILES = ["LICENSE", "dist/reveal.js", "dist/reveal.css", "dist/theme/white.css",
                "dist/theme/fonts/source-sans-pro", "plugin/notes/notes.js"]
REVEAL_DIR = "revealjs"  # under slides/; also the reveal_url_prefix

BUDGET = 24  # lines of 20px text that fit on a 1100 × 760 slide
SKIP_TAGS = {"hide-cell", "remove-cell"}
NO_INPUT_TAGS = {"hide-input", "remove-input"}
NO_OUTPUT_TAGS = {"hide-output", "remove-output"}

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
.reveal { font-family: "Source Sans Pro", "PingFang SC", "Hiragino Sans GB", "Microsoft YaHei",
          "Noto Sans CJK SC", "AttnBook Sans SC", sans-serif; font-size: 30px; }
.reveal .slides { text-align: left; }
.reveal .slides > section, .reveal .slides > section > section { height: 100%; overflow-y: auto; }
.reveal .slides h1 { font-size: 1.8em; } .reveal .slides h2 { font-size: 1.35em; }
.reveal .slides h3 { font-size: 1.1em; }
.reveal .slides h1, .reveal .slides h2, .reveal .slides h3 { text-transform: none; }
.reveal blockquote { width: 90%; font-style: normal; text-align: left; }
.reveal .jp-InputPrompt, .reveal .jp-OutputPrompt { display: none; }
.reveal table { font-size: 0.8em; }
.reveal img { max-height: 520px; }
.reveal .attnbook-deck-links { font-size: 0.7em; }
/* accessibility (axe-core, WCAG 2.1 AA): links inside text are underlined, the slide number has contrast */
.reveal .attnbook-deck-links a { text-decoration: underline; }
.reveal .slide-number { background-color: rgba(0, 0, 0, 0.8); color: #fff; }
.reveal .slide-number a { color: #fff; }
.reveal .highlight pre { white-space: pre-wrap; overflow-wrap: anywhere; }
</style>
{%- endblock html_head_css -%}
{% block footer_js %}
<script src="{{ resources.reveal.url_prefix }}/dist/reveal.js"></script>
<script src="{{ resources.reveal.url_prefix }}/plugin/notes/notes.js"></script>
<script>
Reveal.initialize({
  controls: true, progress: true, history: true, center: false, hash: true, navigationMode: "linear",
  slideNumber: "c/t", transition: "{{ resources.reveal.transition }}",
  width: {{ resources.reveal.width }}, height: {{ resources.reveal.height }},
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


# -- Markdown: MyST -> what nbconvert's Markdown renderer understands ---------------------------
ROLE = re.compile(r"\{([a-z:-]+)\}`([^`]*)`")
FENCE = re.compile(r"^(`{3,}|:{3,})\{([a-z-]+)\}\s*(.*)$")
LINK = re.compile(r"(\]\()([^)#\s]+\.(?:ipynb|md))(#[^)\s]*)?(\))")


def _role(match: re.Match) -> str:
    role, text = match.groups()
    if role == "math":
        return f"${text}$"
    titled = re.fullmatch(r"(.*?)\s*<([^>]*)>", text, flags=re.S)
    return titled.group(1) if titled else text


def _link(match: re.Match, page: str) -> str:
    """Rewrite a link to another page of the book so that it works from slides/."""
    start, target, anchor, end = match.groups()
    if "://" in target:
        return match.group(0)
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page), target))
    html = posixpath.relpath(posixpath.splitext(resolved)[0] + ".html", "slides")
    return f"{start}{html}{anchor or ''}{end}"


def convert_markdown(text: str, page: str) -> tuple[str, list[str]]:
    """MyST -> plain Markdown. Returns (text, speaker notes taken out of {dropdown} blocks)."""
    out, notes = [], []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.fullmatch(r"\([\w:-]+\)=\s*", line) or re.match(r"^%", line):  # targets, comments
            i += 1
            continue
        fence = FENCE.match(line)
        if fence:
            marker, name, arg = fence.groups()
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != marker:
                if not re.match(r"^:[\w-]+:", lines[i]):  # directive options
                    body.append(lines[i])
                i += 1
            i += 1
            body_text, inner_notes = convert_markdown("\n".join(body), page)
            notes += inner_notes
            if name == "dropdown":
                notes.append(f"**{arg or '解答'}**\n\n{body_text}")
            elif name == "math":
                out += ["$$", body_text, "$$"]
            else:
                title = arg or {"note": "注", "tip": "提示", "warning": "注意", "important": "重要"}.get(name, "")
                quoted = ([f"> **{ROLE.sub(_role, title)}**", ">"] if title else []) + \
                         [f"> {l}" if l else ">" for l in body_text.splitlines()]
                out += quoted
            continue
        line = ROLE.sub(_role, line)
        line = LINK.sub(lambda m: _link(m, page), line)
        out.append(line)
        i += 1
    return "\n".join(out).strip("\n"), notes


def split_at_headings(text: str) -> list[str]:
    """Split Markdown before every `#`/`##`/`###` heading that is not inside a code fence."""
    chunks, current, in_fence = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        if not in_fence and re.match(r"^#{1,3} ", line) and any(l.strip() for l in current):
            chunks.append("\n".join(current).strip("\n"))
            current = []
        current.append(line)
    if any(l.strip() for l in current):
        chunks.append("\n".join(current).strip("\n"))
    return chunks


# -- slide structure ------------------------------------------------------------------------------
def _height(cell) -> int:
    """Rough height of a cell on a slide, in lines of text."""
    def text_lines(text: str, width: int = 46) -> int:
        return sum(max(1, -(-len(line) // width)) for line in text.splitlines() if line.strip())

    if cell.cell_type == "markdown":
        src = cell.source
        return text_lines(src) + src.count("$$") + 2 * len(re.findall(r"^#", src, re.M))
    height = 0 if cell.metadata.get("transient", {}).get("remove_source") else min(len(cell.source.splitlines()), 30) + 1
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        if "attnbook-slider" in str(data.get("text/html", "")):
            height += 16
        elif "image/png" in data or "image/svg+xml" in data:
            height += 14
        elif "text/html" in data:
            height += min(str(data["text/html"]).count("<tr"), 20) + 1
        else:
            height += min(len(str(output.get("text", data.get("text/plain", ""))).splitlines()), 20)
    return height


GLUE_MIME = "application/papermill.record/"  # myst-nb's glue output (nbconvert cannot display it)


def prepare(nb, page: str):
    """A copy of the notebook ready for the slides exporter (the notebook on disk is not touched)."""
    nb = copy.deepcopy(nb)
    authored = any(c.metadata.get("slideshow", {}).get("slide_type") for c in nb.cells)
    cells, code_seen = [], 0
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type == "code":
            code_seen += 1
            if tags & SKIP_TAGS or (code_seen <= 2 and not authored):  # setup + import cells
                continue
            if tags & NO_INPUT_TAGS:
                cell.metadata["transient"] = {"remove_source": True}
            if tags & NO_OUTPUT_TAGS:
                cell.outputs = []
            # glue records are read by the site's {glue:text} roles and are invisible everywhere else
            cell.outputs = [o for o in cell.get("outputs", [])
                            if not (o.get("data") and all(k.startswith(GLUE_MIME) for k in o["data"]))]
            cells.append(cell)
        elif cell.cell_type == "markdown":
            if tags & SKIP_TAGS:
                continue
            text, notes = convert_markdown(cell.source, page)
            pieces = split_at_headings(text) if not authored else [text]
            for n, piece in enumerate(pieces):
                new = nbformat.v4.new_markdown_cell(piece)
                if authored and n == 0:
                    new.metadata = cell.metadata
                cells.append(new)
            for note in notes:
                cells.append(nbformat.v4.new_markdown_cell(note, metadata={"slideshow": {"slide_type": "notes"}}))
        # raw cells are left out
    if authored:
        nb.cells = cells
        return nb

    used = 0
    for index, cell in enumerate(cells):
        slideshow = cell.metadata.setdefault("slideshow", {})
        if slideshow.get("slide_type") == "notes":
            continue
        first_line = cell.source.lstrip().split("\n", 1)[0] if cell.cell_type == "markdown" else ""
        height = _height(cell)
        if index == 0 or re.match(r"^#{1,2} ", first_line):
            kind, used = "slide", height
        elif first_line.startswith("### "):
            kind, used = "subslide", height
        elif used + height > BUDGET and used > 0:
            kind, used = "subslide", height  # continue on a new sub-slide
        else:
            kind, used = ("fragment" if cell.cell_type == "code" else "-"), used + height
        slideshow["slide_type"] = kind
    nb.cells = cells
    return nb


def title_slide_links(nb, page: str) -> None:
    """Under the title: where to read the chapter and where to run it."""
    html = posixpath.relpath(posixpath.splitext(page)[0] + ".html", "slides")
    links = nbformat.v4.new_markdown_cell(
        f'<p class="attnbook-deck-links"><a href="{html}">在网页中阅读本章</a> · '
        f'<a href="index.html">全部幻灯片</a> · 方向键翻页，S 键打开讲者备注（练习的提示与解答）</p>')
    first = next(i for i, c in enumerate(nb.cells) if c.metadata.get("slideshow", {}).get("slide_type") != "notes")
    nb.cells.insert(first + 1, links)
    links.metadata["slideshow"] = {"slide_type": "-"}


# -- export -------------------------------------------------------------------------------------
def exporter():
    from jinja2 import DictLoader
    from nbconvert import SlidesExporter
    from traitlets.config import Config

    config = Config()
    config.SlidesExporter.reveal_url_prefix = REVEAL_DIR
    config.SlidesExporter.reveal_theme = "white"
    config.SlidesExporter.reveal_transition = "none"
    config.SlidesExporter.reveal_width = "1100"
    config.SlidesExporter.reveal_height = "760"
    config.SlidesExporter.language_code = "zh"
    config.SlidesExporter.exclude_input_prompt = True
    config.SlidesExporter.exclude_output_prompt = True
    return SlidesExporter(config=config, template_file="attnbook_slides.html.j2",
                          extra_loaders=[DictLoader({"attnbook_slides.html.j2": TEMPLATE})])


def deck_key(path: pathlib.Path) -> str:
    """What a deck is made from: the notebook, this script (its template and rules) and nbconvert's
    version. A rebuild with the same key reuses the deck (a warm `make html` rebuilds no deck)."""
    from importlib.metadata import version

    digest = hashlib.sha256(path.read_bytes())
    digest.update(pathlib.Path(__file__).read_bytes())
    digest.update(version("nbconvert").encode())
    return digest.hexdigest()


def build_deck(path: pathlib.Path, out: pathlib.Path, export=None) -> pathlib.Path:
    page = path.resolve().relative_to(ROOT).as_posix()
    nb = prepare(nbformat.read(path, as_version=4), page)
    title_slide_links(nb, page)
    nb.metadata["title"] = next((l[2:].strip() for l in nb.cells[0].source.splitlines() if l.startswith("# ")),
                                path.stem)
    export = export or exporter()
    mathjax = posixpath.relpath("_static/mathjax/tex-chtml.js", "slides")
    body, _ = export.from_notebook_node(nb, resources={"attnbook": {"mathjax_url": mathjax},
                                                       "metadata": {"name": path.stem}})
    target = out / f"{path.stem}.slides.html"
    target.write_text(figure_alts(body), encoding="utf-8")
    return target


NBCONVERT_ALT = "No description has been provided for this image"


def figure_alts(body: str) -> str:
    """Give each embedded figure the Chinese description attnbook stored in its PNG (as the site does)."""
    import html
    import io

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


def write_index(decks: list[pathlib.Path], out: pathlib.Path) -> None:
    items = []
    for deck in sorted(out.glob("*.slides.html")):
        title = re.search(r"<title>(.*?) slides</title>", deck.read_text(encoding="utf-8"))
        items.append(f'<li><a href="{deck.name}">{title.group(1) if title else deck.stem}</a></li>')
    (out / "index.html").write_text(
        '<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8"><title>幻灯片</title>'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<style>body{font-family:sans-serif;max-width:40em;margin:2em auto;line-height:1.8}</style>'
        '</head><body><h1>《自注意力机制详解》幻灯片</h1>'
        '<p>每章一套，由章节笔记本生成。方向键翻页，S 键打开讲者备注，Esc 看全部幻灯片。'
        '<a href="../intro.html">回到本书</a></p><ol>' + "".join(items) + "</ol></body></html>\n",
        encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
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
    paths = args.notebooks or sorted(ROOT.glob("chapters/[0-9][0-9]_*.ipynb"))
    decks = []
    for path in paths:
        target, stamp, key = out / f"{path.stem}.slides.html", keys / f"{path.stem}.sha256", deck_key(path)
        if target.exists() and stamp.exists() and stamp.read_text() == key:
            deck, note = target, "（未变，沿用）"
        else:
            export = export or exporter()
            deck, note = build_deck(path, out, export), ""
            stamp.write_text(key)
        decks.append(deck)
        print(f"{deck.relative_to(args.site.parent.parent) if args.site == SITE else deck}"
              f"  {deck.stat().st_size / 1e6:.2f} MB{note}")
    write_index(decks, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
