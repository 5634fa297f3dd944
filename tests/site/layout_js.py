"""What the layout tests (tests/site/test_layout.py) measure on a page, as JavaScript that conftest's
tour runs on every chapter and appendix page it loads (one page load serves every browser test)."""
from __future__ import annotations

VIEWPORT = {"width": 1280, "height": 800}


def layout_page(rel: str) -> bool:
    """A chapter or an appendix page of the site."""
    return rel.startswith(("chapters/", "appendix/"))


#: Elements that may be wider than the column, each with the reason. (None today: a traceback, the one
#: candidate, is printed by attnbook without library frames and must fit like any other output.)
EXEMPT: dict[str, str] = {}

#: Every element of the article checked for sideways overflow: each `pre` (code cells, outputs), each
#: `table` and the box that wraps it, each `.cell_output`, and any other box that scrolls sideways
#: (MathJax's display formulas, an output's own scroll box). All `details` (deep dives, solutions,
#: hidden code) are opened first, so what they hold is measured too.
OVERFLOW_JS = r"""
async (exempt) => {
  await document.fonts.ready;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const out = {column: article ? article.clientWidth : 0, items: [], unseen: [],
               page: [document.documentElement.scrollWidth, document.documentElement.clientWidth]};
  if (!article) return out;
  const seen = new Set(), past = [];  // past: the boxes reported, whose insides are not reported again
  const kindOf = el => {
    if (el.matches('pre')) return el.closest('.cell_input') ? 'pre (code cell)'
      : el.closest('.cell_output') ? 'pre (output)' : 'pre (code block)';
    if (el.matches('table')) return 'table';
    if (el.querySelector(':scope > table')) return 'table wrapper';
    if (el.matches('.cell_output')) return 'cell_output';
    if (el.matches('mjx-container')) return 'formula';
    return 'scroller';
  };
  const candidates = [...article.querySelectorAll('pre, table, .cell_output')];
  for (const t of article.querySelectorAll('table')) if (t.parentElement !== article) candidates.push(t.parentElement);
  for (const el of article.querySelectorAll('*')) {
    const s = getComputedStyle(el);
    if (['auto', 'scroll'].includes(s.overflowX)) candidates.push(el);
  }
  for (const el of candidates) {
    if (seen.has(el)) continue;
    seen.add(el);
    const kind = kindOf(el);
    const text = Array.from((el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim()).slice(0, 60).join('');
    const rule = exempt.find(([name, selector]) => el.matches(selector));
    if (el.getClientRects().length === 0) { out.unseen.push(`${kind}: ${text}`); continue; }
    if (el.scrollWidth > el.clientWidth + 1 && past.push(el))
      out.items.push({kind, text, scroll: el.scrollWidth, client: el.clientWidth,
                      exempt: rule ? rule[0] : null,
                      // the longest line of a code block, in characters
                      longest: el.matches('pre') ? Math.max(...el.textContent.split('\n').map(l => l.length)) : null});
  }
  // anything else that reaches past the column's right edge (a long inline formula, a URL, a wide
  // image), unless a box that scrolls or clips holds it: that box is reported above
  const right = article.getBoundingClientRect().right;
  const held = el => { for (let p = el.parentElement; p && p !== article; p = p.parentElement)
                         if (getComputedStyle(p).overflowX !== 'visible') return true;
                       return false; };
  for (const el of article.querySelectorAll('*')) {
    if (seen.has(el) || past.some(p => p.contains(el))) continue;  // reported with its box
    const r = el.getBoundingClientRect();
    if (r.width && r.right > right + 1 && !held(el)) {
      past.push(el);
      const text = Array.from((el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim()).slice(0, 60).join('');
      out.items.push({kind: `<${el.tagName.toLowerCase()}> past the column`, text, exempt: null, longest: null,
                      scroll: Math.round(r.right - article.getBoundingClientRect().left), client: article.clientWidth});
    }
  }
  return out;
}
"""


#: Every figure image of an output cell that is shown (a slider shows one frame at a time; its frames
#: share one size): where it is, its natural and displayed width, and its source.
FIGURES_JS = r"""
async () => {
  await document.fonts.ready;
  await Promise.all([...document.images].map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })));
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const article = document.querySelector('article.bd-article') || document.querySelector('main');
  const out = [];
  for (const img of article.querySelectorAll('.cell_output img')) {
    const r = img.getBoundingClientRect();
    if (!r.width) continue;  // a slider's other frames
    const heading = [...article.querySelectorAll('h1, h2, h3')].filter(h =>
      h.compareDocumentPosition(img) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
    const slider = img.closest('.attnbook-slider');
    out.push({src: img.currentSrc || img.src, natural: img.naturalWidth, shown: r.width, slider: !!slider,
              // a slider's frames: the hidden ones may hold smaller text than the one shown
              frames: slider ? [...slider.querySelectorAll('img[data-frame]')].map(i => i.src) : [],
              section: heading ? Array.from(heading.textContent.replace('#', '').trim()).slice(0, 30).join('') : '',
              alt: Array.from(img.alt || '').slice(0, 50).join('')});
  }
  return out;
}
"""
