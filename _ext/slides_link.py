"""A “幻灯片” button in the header of every chapter page, linking its reveal.js deck.

The decks are written by ``tools/make_slides.py`` to ``_build/html/slides/NN_name.slides.html``
after the site is built (``make slides``); this only adds the link. Register it from
``_ext/attnbook_site.py``'s ``setup(app)``::

    import slides_link          # _ext/ is on sys.path (local_extensions)
    slides_link.setup(app)

or list it in _config.yml under ``sphinx.local_extensions`` (``slides_link: _ext``).
The button is one of sphinx-book-theme's header buttons (an icon with a tooltip, like the
download and launch buttons), so it needs no template change and works without a network.
"""
from __future__ import annotations

SLIDES_DIR = "slides"
CHAPTER_PREFIX = "chapters/"


def deck_for(pagename: str) -> str | None:
    """'chapters/04_cat_eats_fish' -> 'slides/04_cat_eats_fish.slides.html'; None for other pages."""
    if not pagename.startswith(CHAPTER_PREFIX):
        return None
    name = pagename[len(CHAPTER_PREFIX):]
    if "/" in name or not name[:2].isdigit():
        return None
    return f"{SLIDES_DIR}/{name}.slides.html"


def add_slides_button(app, pagename, templatename, context, doctree) -> None:
    deck = deck_for(pagename)
    buttons = context.get("header_buttons")
    if deck is None or buttons is None:
        return
    buttons.append({
        "type": "link",
        "url": context["pathto"](deck, 1),
        "tooltip": "用幻灯片放映本章（方向键翻页，S 键看讲者备注）",
        "icon": "fas fa-person-chalkboard",
        "label": "slides-button",
    })


def setup(app):
    # sphinx-book-theme creates header_buttons at the default priority and fills it at 501
    app.connect("html-page-context", add_slides_button, priority=510)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "version": "1.0"}
