"""Sphinx extension for the book's site: offline by construction.

* Sets ATTNBOOK_STATIC=1 before any notebook is executed, so sliders are precomputed frames
  (the kernels the build starts inherit the variable).
* Serves MathJax 3 with the site: copies the needed part of the ``django-static-mathjax`` wheel
  (MathJax 3.2.2, Apache-2.0) into ``_static/mathjax``; ``mathjax_path`` points there.
* ``ATTNBOOK_EXECUTE=off`` builds from the notebooks' stored outputs without executing them
  (``make test`` does this right after nbval has shown that the stored outputs equal a fresh run).

* Leaves out thebe (live code in the page needs a kernel from the network): the book's
  ``launch_buttons.thebe`` is false, yet sphinx-thebe still adds its loader, twice.
* Sets the theme's default colour mode, so a first visit logs no console error.

* Accessibility: every notebook figure gets its Chinese alt text from the PNG's ``Description``
  (written by attnbook's PNG formatter from the figure's titles and axis labels); the theme's
  remaining English strings are translated and the search and colour-mode buttons get names
  that match what they show (axe-core's ``label-content-name-mismatch``).
* Deep dives (选读): _ext/deep_dive.py shows each run of ``deep-dive`` cells as one closed box.
* Serves the book's OFL font as ``_static/fonts/AttnBookSansSC-Regular.otf`` for the printed
  book (``_static/attnbook.css``, ``make pdf``) and as the screen's last resort for Chinese (after
  the system's CJK fonts). Every page preloads it: on a machine without a CJK font, Chromium kept
  the fallback's empty boxes in text first laid out while the font was still loading (ch04's
  "本章导读" title, a table's header), even after it had loaded.

(``nb_ipywidgets_js: {}`` in _config.yml keeps myst-nb from adding require.js and the widget
manager from a CDN; our sliders need neither.)
"""
from __future__ import annotations

import os
import re
import shutil
from importlib import resources
from pathlib import Path

import runpy  # noqa: E402

# tools/book.py's BOOK_ENV (the one definition), before any notebook is executed.
os.environ.update(runpy.run_path(str(Path(__file__).resolve().parents[1] / "tools" / "book.py"))["BOOK_ENV"])

MATHJAX_PARTS = ["tex-chtml.js", "output/chtml/fonts/woff-v2", "input/tex/extensions", "ui", "a11y"]


def mathjax_source() -> Path:
    return Path(str(resources.files("mathjax") / "static" / "mathjax" / "es5"))


def _copy_mathjax(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source = mathjax_source()
    target = Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        src, dst = source / part, target / part
        if src.is_dir():
            shutil.copytree(src, dst, dirs_exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    license_file = source.parent / "LICENSE"
    if license_file.exists():
        shutil.copy2(license_file, target / "LICENSE")


#: English strings left by myst-nb, sphinx-togglebutton and the theme's templates (zh_CN has no
#: translation for them), replaced in every written page.
TRANSLATIONS = {
    "Show code cell source": "显示代码",
    "Hide code cell source": "隐藏代码",
    "Show code cell content": "显示代码单元",
    "Hide code cell content": "隐藏代码单元",
    "Show code cell outputs": "显示输出",
    "Hide code cell outputs": "隐藏输出",
    "Show code cell output": "显示输出",
    "Hide code cell output": "隐藏输出",
    # the toggle of a hidden code cell is named by what it shows (“显示代码”), not by a label
    '<summary aria-label="Toggle hidden content">': "<summary>",
    '"Search this book..."': '"搜索本书…"',
    '"Color mode"': '"颜色模式"',
    '"Launch interactive content"': '"在线运行"',
    '"Source repositories"': '"源代码仓库"',
    '"System Settings"': '"跟随系统"',
    # the article header's buttons: the book's contents (left) and the page's (right; below 1400 px a panel)
    '"Toggle primary sidebar"': '"全书目录"',
    '"Toggle secondary sidebar"': '"本页目录"',
}


def _fix_page(text: str) -> str:
    for english, chinese in TRANSLATIONS.items():
        text = text.replace(english, chinese)
    # The search button shows “搜索 Ctrl+K”: its accessible name comes from that text, not from a
    # shorter aria-label (WCAG 2.5.3 label in name).
    text = re.sub(r'(<button class="btn search-button-field[^"]*"[^>]*?) aria-label="[^"]*"', r"\1", text)
    # The colour-mode button: its icons' titles would be read as its content; the button's own
    # (Chinese) label names it.
    text = re.sub(r'(<i class="theme-switch [^"]*" data-mode="[a-z]+") +title="[^"]*"', r'\1 aria-hidden="true"',
                  text)
    return text


#: The book's font fetched as the page starts (see the module's docstring). A font is fetched in CORS
#: mode, so over http(s) the preload must say ``crossorigin`` to be the request @font-face reuses; a
#: page opened from disk (the offline kit's site/) has origin null, where a CORS request for a file is
#: refused, and the plain request is the one that is reused.
PRELOAD_FONT = ('<script>(function () {{ var l = document.createElement("link"); l.rel = "preload"; '
                'l.as = "font"; if (location.protocol !== "file:") l.setAttribute("crossorigin", ""); '
                'l.type = "font/otf"; l.href = "{href}"; '
                'document.head.appendChild(l); }})();</script>')


def _finish_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    for page in out.rglob("*.html"):
        if "_static" in page.relative_to(out).parts:
            continue
        text = page.read_text(encoding="utf-8")
        fixed = _fix_page(text)
        font = Path(os.path.relpath(out / "_static" / "fonts" / "AttnBookSansSC-Regular.otf", page.parent))
        preload = PRELOAD_FONT.format(href=font.as_posix())
        if "<head>" in fixed and preload not in fixed:
            fixed = fixed.replace("<head>", "<head>\n  " + preload, 1)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")
    fonts = Path(__file__).resolve().parents[1] / "attnbook" / "fonts"  # the package's OFL font
    target = out / "_static" / "fonts"
    target.mkdir(parents=True, exist_ok=True)
    for name in ("AttnBookSansSC-Regular.otf", "OFL.txt"):
        shutil.copy2(fonts / name, target / name)


def _image_alt(app, doctree, docname) -> None:
    """Alt text of notebook figures: the Chinese description stored in the PNG."""
    from docutils import nodes

    for node in doctree.findall(nodes.image):
        if node.get("alt"):
            continue
        uri = node.get("uri", "")
        if not uri.endswith(".png"):
            continue
        candidate = node.get("candidates", {}).get("*")  # relative to the source folder
        path = Path(app.srcdir) / candidate if candidate else Path(app.env.relfn2path(uri, docname)[1])
        description = ""
        try:
            from PIL import Image

            with Image.open(path) as image:
                description = image.text.get("Description", "") if hasattr(image, "text") else ""
        except OSError:
            pass
        node["alt"] = description or "图：代码单元画出的图"


def _execution_mode(app, config) -> None:
    mode = os.environ.get("ATTNBOOK_EXECUTE")
    if mode:
        config.nb_execution_mode = mode


def _page_context(app, pagename, templatename, context, doctree) -> None:
    context.setdefault("default_mode", "auto")  # pydata-sphinx-theme reads it from the context
    scripts = context.get("script_files")
    if not scripts:
        return
    context["script_files"] = [
        js for js in scripts
        if "sphinx-thebe" not in str(js)
        and "THEBE_JS_URL" not in str(getattr(js, "attributes", {}).get("body", ""))
    ]


# The notebook a reader downloads or opens in Colab/Binder is the reader edition (notebooks/, made
# from chapters/ by tools/editions.py): plain Jupyter Markdown, numbers filled in, solutions closed.
READER_EDITION = "notebooks"


def _reader_edition_url(url: str, pagename: str) -> str:
    source = f"{pagename}.ipynb"
    url = re.sub(r"(/blob/[^/]+/)" + re.escape(source) + "$", rf"\g<1>{READER_EDITION}/{source}", url)
    return url.replace(f"urlpath=lab/tree/{source}", f"urlpath=lab/tree/{READER_EDITION}/{source}")


def _launch_buttons(app, pagename, templatename, context, doctree) -> None:
    reader = Path(app.srcdir) / READER_EDITION / f"{pagename}.ipynb"
    if not reader.exists():
        return

    def rewrite(buttons):
        for button in buttons or []:
            if isinstance(button, dict):
                if isinstance(button.get("url"), str):
                    button["url"] = _reader_edition_url(button["url"], pagename)
                rewrite(button.get("buttons"))

    rewrite(context.get("header_buttons"))


def _reader_downloads(app, exception) -> None:
    """The download button's .ipynb (_sources/<page>.ipynb) is the reader edition's copy."""
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / "_sources"
    for docname in app.env.found_docs:
        reader = Path(app.srcdir) / READER_EDITION / f"{docname}.ipynb"
        target = out / f"{docname}.ipynb"
        if reader.exists() and target.exists():
            shutil.copy2(reader, target)


def setup(app):
    app.connect("config-inited", _execution_mode)
    app.connect("html-page-context", _page_context)
    app.connect("html-page-context", _launch_buttons, priority=520)  # after sphinx-book-theme's (501)
    app.connect("build-finished", _reader_downloads)
    import slides_link  # _ext/slides_link.py: the “幻灯片” header button of chapter pages

    # _ext/deep_dive.py: each 选读 run as one closed <details>; loaded as an extension, so that its
    # env_version makes Sphinx read every page again when the transform changes
    app.setup_extension("deep_dive")
    slides_link.setup(app)
    app.connect("build-finished", _copy_mathjax)
    app.connect("build-finished", _finish_pages)
    app.connect("doctree-resolved", _image_alt)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
