"""The printed book: _build/pdf/自注意力机制详解.pdf (``make pdf``).

    python tools/make_pdf.py              # builds the single-page site, then prints it
    python tools/make_pdf.py --no-build   # prints an existing _build/singlehtml

How: Jupyter Book's ``singlehtml`` builder writes the whole book, in _toc order, as one page
(from the notebooks' stored outputs: ATTNBOOK_EXECUTE=off, nothing is executed). The Chromium
that the browser tests drive loads it from a local server with every off-site request blocked,
waits for MathJax to typeset, and prints it (A4, page numbers in the footer, PDF bookmarks from
the headings). ``_static/attnbook.css`` holds the print styles: the book's OFL font
(AttnBook Sans SC, served in _static/fonts/) for Chinese, code that wraps, no site chrome; each
slider prints as a grid of its labelled key frames (attnbook/sliders.py). Each chapter starts
on a new page; the printed table of contents is the book's own (intro.md's ``tableofcontents``).

Why Chromium and not Sphinx's LaTeX builder (xelatex): the Chromium is already installed for the
browser tests; it prints exactly what the site shows (MathJax, the HTML outputs such as tables and
the sliders' key frames, the same CSS). The LaTeX route would need TeX Live from Debian
(texlive-xetex, -lang-chinese, -latex-extra, latexmk: 33 packages, 193 MB to download, several
hundred MB installed), and its builder drops every HTML-only output (each slider would print as
its text repr) unless each got a LaTeX rendering of its own.
"""
from __future__ import annotations

import argparse
import functools
import http.server
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
SINGLE = ROOT / "_build" / "singlehtml"
OUT = ROOT / "_build" / "pdf" / "自注意力机制详解.pdf"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
TITLE = "自注意力机制详解"

FOOTER = ('<div style="width:100%;font-size:8px;color:#555;text-align:center;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
HEADER = "<div></div>"  # header and footer cannot use the page's web fonts: digits only

# Runs in the page before printing: each chapter (each document after the front page) starts on
# a new page; hidden code cells stay closed; lazy images load.
PREPARE = """() => {
  document.querySelectorAll('span[id^="document-"]').forEach(span => {
    const section = span.nextElementSibling;
    if (section) { section.classList.add('attnbook-chapter'); }
  });
  document.querySelectorAll('img[loading="lazy"]').forEach(img => img.loading = 'eager');
  document.documentElement.dataset.theme = 'light';
  document.title = %r;
}""" % TITLE


def build_singlehtml() -> None:
    env = dict(os.environ, ATTNBOOK_EXECUTE="off")
    subprocess.run([str(pathlib.Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "--builder", "singlehtml",
                    "-n", "--keep-going", "-q"], check=True, env=env, cwd=ROOT)


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def print_pdf(single: pathlib.Path = SINGLE, out: pathlib.Path = OUT) -> pathlib.Path:
    from playwright.sync_api import sync_playwright

    handler = functools.partial(_Quiet, directory=str(single))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM,
                                        args=["--headless", "--no-sandbox", "--disable-gpu"])
            page = browser.new_page()
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((base, "data:"))
                       else r.abort())
            page.emulate_media(media="print")
            page.goto(f"{base}/intro.html", wait_until="load", timeout=120_000)
            page.evaluate(PREPARE)
            page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)",
                                   timeout=60_000)
            page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
            page.evaluate("() => document.fonts.ready.then(() => true)")
            page.wait_for_timeout(500)
            page.pdf(path=str(out), format="A4", print_background=True, display_header_footer=True,
                     header_template=HEADER, footer_template=FOOTER, outline=True, tagged=True,
                     margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"})
            browser.close()
    finally:
        httpd.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="use the existing _build/singlehtml")
    args = parser.parse_args()
    start = time.perf_counter()
    if not args.no_build:
        build_singlehtml()
    if not (SINGLE / "intro.html").exists():
        raise SystemExit("没有 _build/singlehtml/intro.html：先去掉 --no-build 运行")
    out = print_pdf()
    site = ROOT / "_build" / "html"
    if site.is_dir():  # the intro links it: 自注意力机制详解.pdf next to intro.html
        shutil.copy2(out, site / out.name)
    size = out.stat().st_size / 1e6
    sys.stdout.write(f"PDF：{out.relative_to(ROOT)}（{size:.1f} MB，{time.perf_counter() - start:.0f} 秒）\n")


if __name__ == "__main__":
    main()
