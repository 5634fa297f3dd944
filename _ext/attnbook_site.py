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

(``nb_ipywidgets_js: {}`` in _config.yml keeps myst-nb from adding require.js and the widget
manager from a CDN; our sliders need neither.)
"""
from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

os.environ["ATTNBOOK_STATIC"] = "1"

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


def setup(app):
    app.connect("config-inited", _execution_mode)
    app.connect("html-page-context", _page_context)
    import slides_link  # _ext/slides_link.py: the “幻灯片” header button of chapter pages

    slides_link.setup(app)
    app.connect("build-finished", _copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
