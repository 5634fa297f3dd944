"""The printed book: _build/pdf/自注意力机制详解.pdf (``make pdf``).

    python tools/make_pdf.py              # builds the single-page site, then prints it
    python tools/make_pdf.py --no-build   # prints an existing one-page build (_build/print/_build/singlehtml)
    python tools/make_pdf.py --build-only # only the one-page build (make test runs it beside html-noexec)

How: Jupyter Book's ``singlehtml`` builder writes the whole book, in _toc order, as one page
(from the notebooks' stored outputs: ATTNBOOK_EXECUTE=off, nothing is executed). The Chromium
that the browser tests drive loads it from a local server with every off-site request blocked,
waits for MathJax to typeset and for the book's font, and prints it (A4, page numbers in the footer,
PDF bookmarks from the headings); the printed text is read back (it must hold the body text).
``_static/attnbook.css`` holds the print styles: the book's OFL font (AttnBook Sans SC, served in
_static/fonts/) for Chinese, code that wraps, no site chrome; each
slider prints as a grid of its labelled key frames (attnbook/infra/sliders.py). Nothing made for a
screen prints (PREPARE below): a reference solution prints in place, labelled “参考解答（练习
NN-N）”, a dropdown open under its title, a hide-input cell as its output alone; no toggle bar,
button or chevron; a deep dive (选读) prints open, as a box labelled 选读. Each chapter starts
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
# its own output folder (and doctrees), so it can be built while `make html-noexec` builds the site
PRINT_BUILD = ROOT / "_build" / "print"
SINGLE = PRINT_BUILD / "_build" / "singlehtml"
OUT = ROOT / "_build" / "pdf" / "自注意力机制详解.pdf"
# The Chromium that make_pdf, bench and the browser tests (tests/site/conftest.py) start, and its flags:
# headless, no sandbox (root in CI), no GPU, and none of Chromium's own requests to Google's services.
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-quic", "--no-first-run", "--disable-sync"]
TITLE = "自注意力机制详解"

FOOTER = ('<div style="width:100%;font-size:8px;color:#555;text-align:center;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')
HEADER = "<div></div>"  # header and footer cannot use the page's web fonts: digits only

# Runs in the page before printing: each chapter (each document after the front page) starts on
# a new page; lazy images load; and nothing that only works on a screen is printed (issue 22):
# - a reference solution (a ``hide-cell`` code cell that calls ``attnbook.check(``) prints open, in
#   place, as a block labelled “参考解答（练习 NN-N）”: its code, then the checker's verdict. In place
#   and not in an appendix, because the exercise's dropdown just above it introduces it (“下面折叠
#   的代码用循环直接数”), and a reader checks an answer where the exercise is;
# - any other ``hide-cell`` cell prints the same way, labelled after its exercise (“解答演示（练习
#   NN-N）”); a ``hide-input`` cell prints only its output (the figure);
# - a dropdown (“练习 NN-N 的提示与解答”) prints open, its title a plain bold label; a bare title
#   (“解答”, “提示”) gets its exercise's number, since on paper there is no bar beside the exercise;
# - a deep dive (选读, _ext/deep_dive.py) prints open as a box, under its heading with the 选读 label
#   and the note that a first reading may skip it;
# - every other ``<details>`` in the text prints open with its summary as a label.
# The script returns what it did; print_pdf fails if a ``<details>`` or ``<summary>`` is left.
# The print styles of the labelled blocks: _static/attnbook.css (@media print).
PREPARE = r"""() => {
  document.querySelectorAll('span[id^="document-"]').forEach(span => {
    const section = span.nextElementSibling;
    if (section) { section.classList.add('attnbook-chapter'); }
  });
  document.querySelectorAll('img[loading="lazy"]').forEach(img => img.loading = 'eager');
  document.documentElement.dataset.theme = 'light';
  document.title = %r;

  const done = {solutions: 0, demos: 0, hiddenInputs: 0, dropdowns: 0, deepDives: 0, other: 0};
  const label = text => {
    const p = document.createElement('p');
    p.className = 'attnbook-print-label';
    p.textContent = text;
    return p;
  };
  // <details> -> <div class=cls>: the title as a label, then the contents, open; no <summary>.
  const unfold = (details, cls, title, contents) => {
    const box = document.createElement('div');
    box.className = cls;
    if (title) { box.append(label(title)); }
    box.append(...[...(contents || details).childNodes].filter(n => n.nodeName !== 'SUMMARY'));
    details.replaceWith(box);
  };
  const checked = el => [...el.textContent.matchAll(/attnbook\.check\(\s*["'](\d{2}-\d+)["']/g)]
    .map(m => m[1]);
  const span = ids => ids.length > 2 ? `${ids[0]} 到 ${ids[ids.length - 1]}` : ids.join('、');
  let exercise = null;  // the exercise whose text precedes, within the current section
  const article = document.querySelector('.bd-article') || document.body;
  for (const el of article.querySelectorAll('h1, h2, strong, details')) {
    if (el.tagName === 'H1' || el.tagName === 'H2') { exercise = null; continue; }
    if (el.tagName === 'STRONG') {
      const m = el.textContent.match(/^\s*练习\s*(\d{2}-\d+)/);
      if (m) { exercise = m[1]; }
      continue;
    }
    if (!el.isConnected) { continue; }
    const summary = el.querySelector(':scope > summary');
    const cell = el.closest('div.cell');
    if (el.classList.contains('attnbook-deep-dive')) {
      // a deep dive (选读, _ext/deep_dive.py): open, in a box; its heading (with the 选读 label)
      // and the note “第一次阅读可以跳过 · 约 M 分钟” head it
      const box = document.createElement('div');
      box.className = 'attnbook-print-deep-dive';
      box.id = el.id;
      const note = summary.querySelector('.attnbook-deep-dive-note');
      box.append(...[...summary.children].filter(n => n !== note));
      if (note) {
        const p = document.createElement('p');
        p.className = 'attnbook-deep-dive-note';
        p.textContent = note.textContent;
        box.append(p);
      }
      box.append(...[...el.childNodes].filter(n => n.nodeName !== 'SUMMARY'));
      el.replaceWith(box);
      done.deepDives += 1;
    } else if (el.classList.contains('sd-dropdown')) {
      const text = summary.querySelector('.sd-summary-text');
      let title = (text || summary).textContent.trim();
      if (!title.includes('练习') && exercise) { title = `练习 ${exercise} 的${title}`; }
      const body = el.querySelector(':scope > .sd-summary-content');
      unfold(el, 'attnbook-print-dropdown', title, body);
      done.dropdowns += 1;
    } else if (cell && el.classList.contains('hide') && cell.classList.contains('tag_hide-input')) {
      el.remove();
      done.hiddenInputs += 1;
    } else if (cell && el.classList.contains('hide') && cell.classList.contains('tag_hide-cell')) {
      const ids = checked(el);
      const title = ids.length ? `参考解答（练习 ${span(ids)}）`
        : exercise ? `解答演示（练习 ${exercise}）` : '代码';
      unfold(el, 'attnbook-print-solution', title);
      done[ids.length ? 'solutions' : 'demos'] += 1;
    } else {  // hide-output, or a <details> written in the text: open, summary as the label
      unfold(el, 'attnbook-print-dropdown',
             el.classList.contains('hide') || !summary ? '' : summary.textContent.trim());
      done.other += 1;
    }
  }
  done.left = article.querySelectorAll('details, summary').length;
  return done;
}""" % TITLE


BOOK_FONT = "AttnBook Sans SC"
# Waited for before printing. Text whose font is still loading is not drawn (the @font-face says
# ``font-display: block``) and Chromium prints what it has. Once, in CI on a busy machine, the PDF came
# out with the formulas, the page numbers and an icon but no other text, after ``document.fonts.ready``
# had settled (it settles whenever no face is loading at that moment, also before one has started).
# So the book's font is loaded by name, after a layout with the print styles and PREPARE's changes,
# and checked; no face may be left loading or failed. print_pdf also reads the printed text back
# (_text_missing) and prints once more if it lacks the body text.
FONTS_LOADED = r"""async () => {
  document.body.getBoundingClientRect();
  const faces = await document.fonts.load('16px "%s"', '猫吃鱼');
  await document.fonts.ready;
  return {book: faces.length > 0 && document.fonts.check('16px "%s"', '猫吃鱼'),
          pending: [...document.fonts].filter(f => f.status === 'loading' || f.status === 'error')
                                      .map(f => `${f.family} ${f.status}`)};
}""" % (BOOK_FONT, BOOK_FONT)


def build_singlehtml() -> None:
    env = dict(os.environ, ATTNBOOK_EXECUTE="off")
    subprocess.run([str(pathlib.Path(sys.executable).parent / "jupyter-book"), "build", str(ROOT), "--builder", "singlehtml",
                    "--path-output", str(PRINT_BUILD), "-n", "--keep-going", "-q"], check=True, env=env, cwd=ROOT)


def _text_missing(pdf: pathlib.Path) -> str:
    """What the printed text lacks ("" if nothing, or if poppler's pdftotext is not installed): the
    body text (Chinese, and the code beside it) must be there, not only formulas and page numbers."""
    if shutil.which("pdftotext") is None:
        return ""
    text = subprocess.run(["pdftotext", "-enc", "UTF-8", "-l", "40", str(pdf), "-"], capture_output=True,
                          text=True, encoding="utf-8", check=True).stdout
    lacks = [word for word in ("猫吃鱼", "import torch") if word not in text]
    return f"前 40 页没有“{'”“'.join(lacks)}”（{len(text)} 个字符）" if lacks else ""


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
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page()
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith((base, "data:"))
                       else r.abort())
            page.emulate_media(media="print")
            page.goto(f"{base}/intro.html", wait_until="load", timeout=120_000)
            done = page.evaluate(PREPARE)
            if done["left"]:
                raise SystemExit(f"PDF 里还剩 {done['left']} 个折叠块（details/summary）：改 PREPARE")
            sys.stdout.write(f"展开：参考解答 {done['solutions']} 个，其他折叠单元 {done['demos']} 个，"
                             f"下拉框 {done['dropdowns']} 个，选读 {done['deepDives']} 个，其他 {done['other']} 个；"
                             f"只印输出的 hide-input 单元 {done['hiddenInputs']} 个\n")
            page.wait_for_function("() => !window.MathJax || (MathJax.startup && MathJax.startup.promise)",
                                   timeout=60_000)
            page.evaluate("() => window.MathJax ? MathJax.startup.promise : null")
            for attempt in (1, 2):
                fonts = page.evaluate(FONTS_LOADED)
                if not fonts["book"] or fonts["pending"]:
                    raise SystemExit(f"打印前字体没有载入：{BOOK_FONT} {'已载入' if fonts['book'] else '未载入'}，"
                                     f"未完成的字体 {fonts['pending']}")
                page.wait_for_timeout(500)
                page.pdf(path=str(out), format="A4", print_background=True, display_header_footer=True,
                         header_template=HEADER, footer_template=FOOTER, outline=True, tagged=True,
                         margin={"top": "16mm", "bottom": "18mm", "left": "14mm", "right": "14mm"})
                missing = _text_missing(out)
                if not missing:
                    break
                sys.stdout.write(f"第 {attempt} 次打印的 PDF 里{missing}\n")
            else:
                raise SystemExit("两次打印的 PDF 都缺正文：见上")
            browser.close()
    finally:
        httpd.shutdown()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-build", action="store_true", help="use the existing one-page build")
    parser.add_argument("--build-only", action="store_true", help="only the one-page build, no PDF")
    args = parser.parse_args()
    start = time.perf_counter()
    if not args.no_build:
        build_singlehtml()
        if args.build_only:
            return
    if not (SINGLE / "intro.html").exists():
        raise SystemExit(f"没有 {SINGLE.relative_to(ROOT)}/intro.html：先去掉 --no-build 运行")
    out = print_pdf()
    site = ROOT / "_build" / "html"
    if site.is_dir():  # the intro links it: 自注意力机制详解.pdf next to intro.html
        shutil.copy2(out, site / out.name)
    size = out.stat().st_size / 1e6
    sys.stdout.write(f"PDF：{out.relative_to(ROOT)}（{size:.1f} MB，{time.perf_counter() - start:.0f} 秒）\n")


if __name__ == "__main__":
    main()
