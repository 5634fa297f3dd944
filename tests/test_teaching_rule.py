"""One source of truth for the code the book teaches, and a rule for what attnbook may hide.

1. ``attnbook/book.py`` is generated from the chapters' ``#@save`` cells (tools/save.py) and is current.
2. Every attnbook name a chapter's code uses is one of:
   - infrastructure (attnbook/infra/: runtime, errors, fonts, plots, sliders; the exercise checker;
     the data sets and task generators of attnbook/toy.py);
   - taught code: defined in a ``#@save`` cell of this chapter or an earlier one (so in book.py);
   - declared plumbing: listed in ``__plumbing__`` of an attnbook module (figures, tables, data and
     task generators, speed-ups that the chapter checks against its own visible code). Plumbing is
     never a model, a training loop, a loss or a metric that the prose draws a conclusion from:
     reviewers guard those lists, this test guards everything else.
   ``EXCEPTIONS`` lists today's breaches, each with the issue/part that removes it.
"""
from __future__ import annotations

import ast
import importlib
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import save  # noqa: E402  (tools/save.py)

INFRASTRUCTURE_MODULES = {"attnbook.infra", "attnbook.exercises", "attnbook.toy", "attnbook.data", "attnbook.fonts"}
#: A module carrying this mark only re-exports names from their new homes (tests/test_package_layout.py
#: checks it): a chapter that still imports an old path is judged by where the name lives now.
SHIM_MARK = "# TEMPORARY (issue 26)"

# Names a chapter may use although they break the rule today, each with the part that removes it.
EXCEPTIONS: dict[tuple[str, str], str] = {
    # Part III (chapters 07–10): none
    # Part IV (chapters 12–15)
}


def _module_of(dotted: str) -> tuple[str, str]:
    """'attnbook.charlm.generate' -> ('attnbook.charlm', 'generate')."""
    module, _, name = dotted.rpartition(".")
    return module, name


def _is_module(dotted: str) -> bool:
    try:
        importlib.import_module(dotted)
    except ImportError:
        return False
    return True


def attnbook_names(path: pathlib.Path) -> set[str]:
    """Every attnbook name the notebook's code uses, as 'attnbook[.module].name'."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    aliases: dict[str, str] = {}
    used: set[str] = set()
    trees = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        lines = "".join(cell["source"]).splitlines()
        source = "\n".join(line[:len(line) - len(line.lstrip())] + "pass" if line.lstrip().startswith(("%", "!"))
                           else line for line in lines)
        trees.append(ast.parse(source))
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "attnbook":
                        aliases[alias.asname or "attnbook"] = alias.name if alias.asname else "attnbook"
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "attnbook":
                for alias in node.names:
                    full = f"{node.module}.{alias.name}"
                    if _is_module(full):
                        aliases[alias.asname or alias.name] = full
                    else:
                        used.add(full)
    for tree in trees:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute):
                continue
            chain, value = [], node
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if not (isinstance(value, ast.Name) and value.id in aliases):
                continue
            chain.reverse()
            module = aliases[value.id]
            while chain and _is_module(f"{module}.{chain[0]}"):
                module = f"{module}.{chain.pop(0)}"
            if chain:
                used.add(f"{module}.{chain[0]}")
    return used


def _infrastructure(module_name: str) -> bool:
    return any(module_name == m or module_name.startswith(m + ".") for m in INFRASTRUCTURE_MODULES)


def _shim_origin(module_name: str, name: str) -> str | None:
    """The module a TEMPORARY re-export shim takes ``name`` from, or None if it is no shim."""
    path = ROOT / (module_name.replace(".", "/") + ".py")
    if not path.exists() or SHIM_MARK not in (source := path.read_text(encoding="utf-8")):
        return None
    package = module_name.rpartition(".")[0]
    for node in ast.parse(source).body:
        if isinstance(node, ast.ImportFrom) and any(a.name == name for a in node.names):
            return f"{package}.{node.module}" if node.level == 1 else node.module
    return None


def allowed(dotted: str, saved_so_far: set[str]) -> bool:
    module_name, name = _module_of(dotted)
    if (origin := _shim_origin(module_name, name)) is not None:
        return allowed(f"{origin}.{name}", saved_so_far)
    if _infrastructure(module_name):
        return True
    module = importlib.import_module(module_name)
    obj = getattr(module, name, None)
    origin = getattr(obj, "__module__", None) or module_name
    if module_name == "attnbook.book" or origin == "attnbook.book":
        return name in saved_so_far  # taught code: only once a chapter (this one or earlier) has shown it
    if _infrastructure(origin):
        return True
    return name in getattr(module, "__plumbing__", ())


NOTEBOOKS = save.toc_notebooks()
SAVED = save.saved_by_notebook()


def saved_up_to(index: int) -> set[str]:
    return {n for path in NOTEBOOKS[:index + 1] for n in SAVED[path]}


def test_book_module_is_generated_from_the_save_cells():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "save.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_book_module_has_exactly_the_saved_names():
    import attnbook.book

    saved = [n for names in SAVED.values() for n in names if not n.startswith("_")]
    assert sorted(attnbook.book.__all__) == sorted(saved)


def test_taught_code_lives_only_in_book():
    """No plumbing module keeps its own copy of a #@save definition."""
    saved = {n for names in SAVED.values() for n in names}
    for py in (ROOT / "attnbook").rglob("*.py"):
        if py.name == "book.py":
            continue
        for node in ast.parse(py.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                assert node.name not in saved, f"{py.relative_to(ROOT)} 又定义了一次 #@save 的 {node.name}"


@pytest.mark.parametrize("index", range(len(NOTEBOOKS)), ids=[p.stem for p in NOTEBOOKS])
def test_chapter_uses_only_what_it_may(index):
    saved_so_far = saved_up_to(index)
    path = NOTEBOOKS[index]
    breaches = sorted(n for n in attnbook_names(path)
                      if not allowed(n, saved_so_far) and (path.stem, n) not in EXCEPTIONS)
    assert not breaches, (
        f"{path.name} 用了 attnbook 里既不是基础设施、也不是本章或前面章节 #@save、也未声明为 __plumbing__ 的名字：{breaches}")


def test_exceptions_are_still_needed():
    """An exception that no longer breaks the rule must leave the list (so the list only shrinks)."""
    by_stem = {p.stem: i for i, p in enumerate(NOTEBOOKS)}
    stale = []
    for (stem, name) in EXCEPTIONS:
        index = by_stem[stem]
        saved_so_far = saved_up_to(index)
        if name not in attnbook_names(NOTEBOOKS[index]) or allowed(name, saved_so_far):
            stale.append((stem, name))
    assert not stale, f"这些例外已经不需要了，从 EXCEPTIONS 删掉：{stale}"
