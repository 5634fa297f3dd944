"""attnbook is laid out like the book, and its imports run one way (issue 26).

Rooms (by path; a module in no room fails ``test_every_module_has_a_room``):

* ``infra``     attnbook/infra/: errors, runtime, style, fonts, notebook hooks, plots, sliders;
* ``data``      attnbook/toy.py (data sets, task generators), attnbook/data/, attnbook/fonts/;
* ``book``      attnbook/book.py, the taught code, generated from the #@save cells (tools/save.py);
* ``pages``     attnbook/pages/chNN.py, chapter NN's plumbing;
* ``checker``   attnbook/exercises/__init__.py and its ``_*.py`` (the checker and the records);
* ``exercises`` attnbook/exercises/chNN.py and bugs.py, each chapter's exercises;
* ``tool``      attnbook/collect.py (``python -m attnbook.collect``);
* ``facade``    attnbook/__init__.py, the names a notebook gets from ``import attnbook``.

Imports run one way (``MAY_IMPORT``): pages -> book -> data -> infra; a page imports only earlier
pages, exercises only their own chapter's page or earlier ones; nothing inside attnbook imports the
facade; and there is no import cycle, counting imports inside functions too (a lazy import is how a
cycle hides). The import graph is read with ast from the source, so it holds for code paths no test
runs.

A module marked ``# TEMPORARY (issue 26)`` is a re-export shim at an old path, kept only while
chapters still import it: it may hold nothing but re-exports, an import through it counts as an
import of the module the name really comes from, and it must go once nothing imports it.
"""
from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "attnbook"
SHIM_MARK = "# TEMPORARY (issue 26)"

MAY_IMPORT: dict[str, set[str]] = {
    "infra": {"infra"},
    "data": {"infra", "data"},
    "book": {"infra", "data"},
    "pages": {"infra", "data", "book", "pages"},
    "checker": {"infra", "checker"},
    "exercises": {"infra", "data", "book", "pages", "checker"},
    "tool": {"infra", "checker"},
    "facade": {"infra", "data", "book", "checker"},
    "shim": {"infra", "data", "book", "pages"},
}

# Imports inside a function of book.py that a chapter's #@save cell still writes, each with what
# removes it. Key: (function, name imported). The list only shrinks (test_function_import_exceptions_are_needed).
FUNCTION_IMPORT_EXCEPTIONS: dict[tuple[str, str], str] = {
}


# ---------------------------------------------------------------------------------------------
# Reading the package
# ---------------------------------------------------------------------------------------------
def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, pathlib.Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))
                                    if "__pycache__" not in p.parts}
SOURCES: dict[str, str] = {m: p.read_text(encoding="utf-8") for m, p in MODULES.items()}
TREES: dict[str, ast.Module] = {m: ast.parse(s) for m, s in SOURCES.items()}
SHIMS = sorted(m for m, s in SOURCES.items() if SHIM_MARK in s)


def room(module: str) -> str:
    if module in SHIMS:
        return "shim"
    parts = module.split(".")
    if len(parts) == 1:
        return "facade"
    first = parts[1]
    if first == "infra":
        return "infra"
    if first in ("toy", "data", "fonts"):
        return "data"
    if first in ("book", "pages"):
        return first
    if first == "exercises":
        return "checker" if len(parts) == 2 or parts[2].startswith("_") else "exercises"
    if first == "collect":
        return "tool"
    return "unknown"


def _chapter(module: str) -> int | None:
    match = re.fullmatch(r"ch(\d\d)", module.rpartition(".")[2])
    return int(match.group(1)) if match else None


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if MODULES[module].name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _shim_source(shim: str, name: str) -> str | None:
    """The module a shim takes ``name`` from."""
    for node in TREES[shim].body:
        if isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            return _absolute(shim, node)
    return None


def raw_imports(module: str) -> list[tuple[str, str | None, int]]:
    """(attnbook module named, name imported from it or None, line) for every import, at any depth."""
    out = []
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names if a.name.split(".")[0] == "attnbook"]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, node)
            if base.split(".")[0] != "attnbook":
                continue
            for a in node.names:
                out.append((f"{base}.{a.name}", None, node.lineno) if f"{base}.{a.name}" in MODULES
                           else (base, a.name, node.lineno))
    return out


def edges(module: str) -> list[tuple[str, int, str]]:
    """(module really imported, line, what the source wrote): imports through a shim are followed."""
    out = []
    for target, name, line in raw_imports(module):
        written = target + (f".{name}" if name else "")
        if target in SHIMS and name is not None and module not in SHIMS:
            origin = _shim_source(target, name)
            target = origin if origin is not None else target
        out.append((target, line, written))
    return out


def _where(module: str, line: int) -> str:
    return f"{MODULES[module].relative_to(ROOT)}:{line}"


# ---------------------------------------------------------------------------------------------
# Rooms and the direction of imports
# ---------------------------------------------------------------------------------------------
def test_every_module_has_a_room():
    lost = [str(MODULES[m].relative_to(ROOT)) for m in MODULES if room(m) == "unknown"]
    assert not lost, f"这些模块不属于任何一类（infra、toy、book、pages、exercises……），放进对应的目录：{lost}"


def test_every_attnbook_import_resolves():
    """An import of a module that does not exist (a deleted shim, a typo) fails here, not in a notebook."""
    broken = []
    for module in MODULES:
        for target, name, line in raw_imports(module):
            if target not in MODULES:
                broken.append(f"{_where(module, line)} 导入了不存在的 {target}")
            elif target in SHIMS and name is not None and _shim_source(target, name) is None:
                broken.append(f"{_where(module, line)}：{target} 里没有 {name}")
    assert not broken, "\n".join(broken)


def test_imports_run_one_way():
    wrong = []
    for module in MODULES:
        mine = room(module)
        for target, line, written in edges(module):
            theirs = room(target)
            if target == module:
                continue
            if theirs == "facade":
                wrong.append(f"{_where(module, line)}：包内的模块不导入 attnbook 本身（{written}），从名字所在的模块导入")
            elif theirs not in MAY_IMPORT[mine]:
                wrong.append(f"{_where(module, line)}：{mine} 不能导入 {theirs}（{written}）")
            elif theirs == "pages" and _chapter(target) is not None and _chapter(module) is not None:
                limit = _chapter(module) if mine == "exercises" else _chapter(module) - 1
                if _chapter(target) > limit:
                    wrong.append(f"{_where(module, line)}：不能导入后面章节的 {target}（{written}）")
    assert not wrong, "导入要朝一个方向：pages → book → toy → infra\n" + "\n".join(wrong)


def test_book_imports_only_infrastructure_and_data():
    """The taught code never reaches up into a chapter's plumbing (the circle of issue 26)."""
    up = [f"{_where('attnbook.book', line)}：{written}" for target, line, written in edges("attnbook.book")
          if room(target) not in ("infra", "data")]
    assert not up, "book.py 只能导入基础设施和 toy.py 的数据：\n" + "\n".join(up)


def _cycles() -> list[list[str]]:
    graph = {m: sorted({t for t, _line, _w in edges(m) if t in MODULES and t != m}) for m in MODULES}
    index, low, stack, on_stack, found, counter = {}, {}, [], set(), [], [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    cycles = _cycles()
    assert not cycles, f"attnbook 里有循环导入（函数里的导入也算）：{cycles}"


def test_a_page_declares_its_plumbing():
    for module in MODULES:
        if room(module) == "pages" and _chapter(module) is not None:
            names = [t.id for node in TREES[module].body if isinstance(node, ast.Assign) for t in node.targets
                     if isinstance(t, ast.Name)]
            assert "__plumbing__" in names, f"{MODULES[module].relative_to(ROOT)} 没有 __plumbing__"


# ---------------------------------------------------------------------------------------------
# Temporary shims at the old paths
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("shim", SHIMS or ["(none)"])
def test_shim_only_reexports(shim):
    if shim == "(none)":
        return
    body = TREES[shim].body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    other = [ast.unparse(n)[:60] for n in body
             if not (isinstance(n, ast.ImportFrom) and (n.level == 1 or n.module == "__future__"))]
    assert not other, f"{MODULES[shim].relative_to(ROOT)} 是临时的转接模块，只能有 from .x import …：{other}"


def _notebook_code() -> str:
    cells = []
    for folder in ("chapters", "appendix"):
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf-8"))
            cells += ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    return "\n".join(cells)


@pytest.mark.parametrize("shim", SHIMS or ["(none)"])
def test_shim_is_still_needed(shim):
    """Once no chapter, appendix page or attnbook module imports an old path, its shim goes."""
    if shim == "(none)":
        return
    short = shim.rpartition(".")[2]
    code = _notebook_code()
    used = (re.search(rf"\b{re.escape(shim)}\b", code)
            or re.search(rf"from attnbook import [^\n]*\b{re.escape(short)}\b", code)
            or any(t == shim for m in MODULES if m != shim for t, _n, _l in raw_imports(m)))
    assert used, f"没有笔记本再导入 {shim}：删掉 {MODULES[shim].relative_to(ROOT)}"


# ---------------------------------------------------------------------------------------------
# The generated module reads like a module
# ---------------------------------------------------------------------------------------------
def test_book_imports_sit_in_one_block_at_the_top():
    body = TREES["attnbook.book"].body
    start = 1 if isinstance(body[0], ast.Expr) else 0
    kinds = [isinstance(n, (ast.Import, ast.ImportFrom)) for n in body[start:]]
    first_other = kinds.index(False) if False in kinds else len(kinds)
    late = [f"attnbook/book.py:{n.lineno}" for n in body[start + first_other:] if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert not late, f"book.py 的导入应全部在文件开头（tools/save.py 把它们收到一起）：{late}"
    bound = [a.asname or a.name for n in body[start:start + first_other] for a in n.names]
    assert len(bound) == len(set(bound)), f"book.py 开头有重复的导入：{sorted(b for b in bound if bound.count(b) > 1)}"


def _function_imports() -> list[tuple[str, str, str, bool, int]]:
    """(function, name, module, has a comment on its line or the line above, line) in book.py."""
    lines = SOURCES["attnbook.book"].splitlines()
    out = []
    for node in ast.walk(TREES["attnbook.book"]):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, (ast.Import, ast.ImportFrom)):
                line = lines[inner.end_lineno - 1]
                above = lines[inner.lineno - 2].strip() if inner.lineno >= 2 else ""
                commented = bool(re.search(r"\s#\s*\S", line)) or above.startswith("#")
                if isinstance(inner, ast.ImportFrom):
                    module = "." * inner.level + (inner.module or "")
                    out += [(node.name, a.name, module, commented, inner.lineno) for a in inner.names]
                else:
                    out += [(node.name, a.name.split(".")[0], a.name, commented, inner.lineno) for a in inner.names]
    return out


def test_no_import_inside_a_function_without_a_reason():
    """An import in a function needs a comment that says why; attnbook's own modules never need one."""
    wrong = []
    for function, name, module, commented, line in _function_imports():
        if (function, name) in FUNCTION_IMPORT_EXCEPTIONS:
            continue
        if module.startswith((".", "attnbook")):
            wrong.append(f"attnbook/book.py:{line} {function} 在函数里导入 {module}.{name}：放到单元格开头")
        elif not commented:
            wrong.append(f"attnbook/book.py:{line} {function} 在函数里导入 {name}，没有注释说明原因")
    assert not wrong, "\n".join(wrong)


def test_function_import_exceptions_are_needed():
    present = {(function, name) for function, name, _m, _c, _l in _function_imports()}
    stale = sorted(set(FUNCTION_IMPORT_EXCEPTIONS) - present)
    assert not stale, f"这些例外已经不需要了，从 FUNCTION_IMPORT_EXCEPTIONS 删掉：{stale}"


# ---------------------------------------------------------------------------------------------
# The README's layout table
# ---------------------------------------------------------------------------------------------
def _layout_table() -> list[tuple[list[str], str]]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## 目录结构", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]  # header, separator
    out = []
    for row in rows:
        first, rest = row.strip("|").split("|", 1)
        out.append((re.findall(r"`([^`]+)`", first), rest))
    return out


def _pattern(path: str) -> re.Pattern:
    """`chapters/NN_name.ipynb` -> chapters/01_context.ipynb, …: NN two digits, _name any name."""
    return re.compile(re.escape(path.rstrip("/")).replace("NN", r"\d\d").replace("_name", r"_\w+") + "$")


def _exists(path: str) -> bool:
    pattern = _pattern(path)
    parent = ROOT / pathlib.Path(path.rstrip("/")).parent
    return parent.is_dir() and any(pattern.match(p.relative_to(ROOT).as_posix()) for p in parent.iterdir())


def test_readme_layout_table_names_only_what_exists():
    missing = [p for paths, _ in _layout_table() for p in paths if not _exists(p)]
    assert not missing, f"README 的目录结构表里有不存在的路径：{missing}"


def test_readme_layout_table_covers_the_package_and_the_top_level():
    table = _layout_table()
    paths = [p.rstrip("/") for ps, _ in table for p in ps]
    covered = lambda rel: any(_pattern(p).match(rel) or rel.startswith(p + "/") for p in paths)  # noqa: E731
    inside = lambda folder: any(p.startswith(folder + "/") for p in paths)  # noqa: E731
    lost = [entry.relative_to(ROOT).as_posix() for entry in sorted(PACKAGE.iterdir())
            if entry.name != "__pycache__" and _module_name(entry) not in SHIMS
            and not covered(entry.relative_to(ROOT).as_posix())]
    lost += [entry.name for entry in sorted(ROOT.iterdir())
             if entry.is_dir() and not entry.name.startswith(".") and entry.name not in ("_build", "__pycache__")
             and not entry.name.endswith(".egg-info") and not covered(entry.name) and not inside(entry.name)]
    lost += [p.relative_to(ROOT).as_posix() for p in sorted((PACKAGE / "pages").glob("*.py"))
             if p.name != "__init__.py" and not covered(p.relative_to(ROOT).as_posix())]
    assert not lost, f"README 的目录结构表没写到这些：{lost}"
    rows = {p.rstrip("/"): description for ps, description in table for p in ps}
    for folder in ("infra", "exercises"):
        description = rows.get(f"attnbook/{folder}", "")
        unnamed = [p.name for p in sorted((PACKAGE / folder).glob("*.py")) if p.name != "__init__.py"
                   and p.name not in description and not re.fullmatch(r"ch\d\d\.py", p.name)]
        assert not unnamed, f"README 的 attnbook/{folder}/ 一行没提到：{unnamed}"


def test_pyproject_ships_every_subpackage():
    """A wheel (Colab, the offline kit) holds only the packages pyproject.toml lists."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    present = {_module_name(p) for p in PACKAGE.rglob("__init__.py") if "__pycache__" not in p.parts}
    assert listed == present, f"pyproject.toml 的 packages 与 attnbook 的子包不一致：少了 {sorted(present - listed)}，多了 {sorted(listed - present)}"
