/* 《自注意力机制详解》: the button that opens the page's table of contents ("本页内容").
 *
 * Below 1400 px (see _static/attnbook.css) the right-hand sidebar is hidden and the list button in
 * the article's header opens it as a panel. The theme (pydata-sphinx-theme 0.17) wires only the first
 * `.secondary-toggle` of the page, the one in the top bar, which is hidden at these widths; the
 * article header's button did nothing. Every other `.secondary-toggle` now does what the first does.
 * Following a link of the panel closes it, so the reader sees the section. */
document.addEventListener("DOMContentLoaded", () => {
  const [wired, ...others] = document.querySelectorAll("button.secondary-toggle");
  if (!wired) return;
  for (const button of others) {
    button.addEventListener("click", (event) => {
      event.preventDefault();
      event.stopPropagation();
      wired.click();
    });
  }
  const panel = document.getElementById("pst-secondary-sidebar-modal");
  if (panel) {
    panel.addEventListener("click", (event) => {
      if (event.target.closest("a[href^='#']") && panel.open) panel.close();
    });
  }
});
