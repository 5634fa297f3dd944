"""attnbook's infrastructure: what every chapter leans on and no chapter teaches.

* ``errors.py``   readers' mistakes as Chinese errors (``fail``, ``check_int`` …, ``AttnBookError``)
* ``runtime.py``  ``setup()`` and ``torch_state()``: torch's global state in one place
* ``style.py``    the plot style and font that ``setup()`` applies
* ``fonts.py``    the bundled CJK font (the file itself is package data in ``attnbook/fonts/``)
* ``notebook.py`` inside a kernel: the provenance line, short tracebacks, ``glue``
* ``plots.py``    pure plotting helpers (``heatmap`` …)
* ``sliders.py``  sliders that work live and on the static page

Infrastructure imports nothing else from attnbook (tests/test_package_layout.py checks it): the
taught code (``attnbook/book.py``), the data (``attnbook/toy.py``) and the chapters' pages sit
above it.
"""
