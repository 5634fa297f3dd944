"""The chapters' plumbing, one module per chapter: ``pages/chNN.py`` beside ``exercises/chNN.py``.

A page holds what chapter NN calls without showing it: figures and slider frames, tables, the
measuring harness, speed-ups the chapter checks against its own visible code. Each page lists
those names in ``__plumbing__`` (tests/test_teaching_rule.py reads the lists). A chapter without
such helpers has no page.

Imports run one way: a page imports the taught code (``attnbook.book``), the data
(``attnbook.toy``), the infrastructure (``attnbook.infra``) and earlier pages (a name several
chapters use lives in the page of the first one); nothing below imports a page
(tests/test_package_layout.py checks it).
"""
