"""make test's notebook run (tools/colab_env_test.py --prepare): nbval executes the reader edition
that Colab opens, each code cell carrying the outputs its source cell stores.

What nbval compares must be everything the source stores (glue records, solution outputs, slider
frames), and a reader edition whose code has drifted from its source must stop the run, not be
compared against outputs of other code.
"""
from __future__ import annotations

import json
import pathlib
import shutil
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import book  # noqa: E402
import colab_env_test  # noqa: E402

VERSION = "assert True  # the version check"


def code_cells(nb) -> list:
    return [c for c in nb.cells if c.cell_type == "code"]


@pytest.mark.parametrize("path", book.NOTEBOOKS, ids=lambda p: p.stem)
def test_the_run_executes_the_reader_code_against_the_source_outputs(path):
    rel = path.relative_to(ROOT)
    run = colab_env_test.run_edition(ROOT, rel, VERSION)
    source = code_cells(nbformat.read(path, as_version=4))
    reader = code_cells(nbformat.read(ROOT / "notebooks" / rel, as_version=4))
    cells = code_cells(run)
    assert cells[0].source == VERSION and not cells[0].outputs  # first: the version check
    assert len(cells) == len(source) + 1 == len(reader) + 1  # no cell of the book is left out
    for got, src, shown in zip(cells[1:], source, reader):
        assert got.source == shown.source            # the code Colab's reader runs ...
        assert got.outputs == src.outputs            # ... against every output the book stores
        assert got.metadata.get("tags", []) == src.metadata.get("tags", [])  # nbval-ignore-output, raises-exception
    # the reader edition drops glue records and solution outputs; the run compares them all the same
    stored = sum(len(c.outputs) for c in source)
    assert sum(len(c.outputs) for c in cells) == stored >= sum(len(c.outputs) for c in reader)


def test_glue_records_and_solution_outputs_are_compared():
    rel = pathlib.Path("chapters/04_cat_eats_fish.ipynb")
    cells = code_cells(colab_env_test.run_edition(ROOT, rel, VERSION))
    mimes = {k for c in cells for o in c.outputs for k in o.get("data", {})}
    assert any(m.startswith("application/papermill.record") for m in mimes)
    solutions = [c for c in cells if c.source.startswith(colab_env_test.TITLE + "参考解答")]
    assert solutions and all(c.outputs for c in solutions)  # "✓ 正确" is compared, though not shown


def _copy(tmp_path: pathlib.Path, rel: pathlib.Path) -> pathlib.Path:
    for part in (rel, pathlib.Path("notebooks") / rel):
        (tmp_path / part).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / part, tmp_path / part)
    return tmp_path / "notebooks" / rel


@pytest.mark.parametrize("change", ["code", "cell"])
def test_a_reader_edition_out_of_date_stops_the_run(tmp_path, change):
    rel = pathlib.Path("chapters/04_cat_eats_fish.ipynb")
    reader = _copy(tmp_path, rel)
    nb = json.loads(reader.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    if change == "code":
        code[3]["source"] = ["x = 1  # edited in notebooks/ only\n"] + code[3]["source"]
    else:
        nb["cells"].remove(code[3])
    reader.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="notebooks/chapters/04_cat_eats_fish.ipynb 与 .*make execute"):
        colab_env_test.run_edition(tmp_path, rel, VERSION)


def test_only_the_title_line_the_editions_add_is_set_aside(tmp_path):
    rel = pathlib.Path("chapters/04_cat_eats_fish.ipynb")
    reader = _copy(tmp_path, rel)
    nb = json.loads(reader.read_text(encoding="utf-8"))
    plain = next(c for c in nb["cells"] if c["cell_type"] == "code" and not "".join(c["source"]).startswith("#@"))
    plain["source"] = ["#@title 画图代码（点击展开）\n"] + plain["source"]  # a title the source lacks: fine
    reader.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    colab_env_test.run_edition(tmp_path, rel, VERSION)
    plain["source"] = ["#@title 画图代码（点击展开）\n", "y = 2\n"] + plain["source"][1:]  # and code beside it: not
    reader.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="代码不同"):
        colab_env_test.run_edition(tmp_path, rel, VERSION)


def test_make_test_runs_the_notebooks_once_through_this_run():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    test_line = next(line for line in makefile.splitlines() if "$(SIDE_BY_SIDE)" in line and "test-" in line)
    assert "test-nbval" in test_line
    recipe = makefile.split("\ntest-nbval:", 1)[1].split("\n\n", 1)[0]
    assert "tools/colab_env_test.sh" in recipe
    script = (ROOT / "tools" / "colab_env_test.sh").read_text(encoding="utf-8")
    assert "ATEN_CPU_CAPABILITY=default" in script and "--nbval " in script and "--prepare" in script


@pytest.fixture()
def kernel_start(monkeypatch):
    """tests/nbval_kernel_start.py loaded over a stand-in for nbval's start_new_kernel that fails
    ``fails`` times (as a kernel whose port was taken does), then starts; returns (plugin, calls)."""
    import runpy

    import nbval.kernel

    calls = []

    def fake(*args, fails, **kwargs):
        calls.append(kwargs["stderr"])
        if len(calls) <= fails:
            kwargs["stderr"].write("zmq.error.ZMQError: Address already in use\n")
            kwargs["stderr"].flush()
            raise RuntimeError("Kernel died before replying to kernel_info")
        return "km", "kc"

    def load(fails):
        monkeypatch.setattr(nbval.kernel, "start_new_kernel", lambda *a, **k: fake(*a, fails=fails, **k))
        runpy.run_path(str(ROOT / "tests" / "nbval_kernel_start.py"))
        return nbval.kernel.start_new_kernel

    return load, calls


def test_a_kernel_that_dies_while_starting_is_started_again(kernel_start, capsys):
    load, calls = kernel_start
    start = load(fails=2)
    assert start(kernel_name="python3", stderr=None, cwd=".") == ("km", "kc")
    assert len(calls) == 3
    said = capsys.readouterr().err
    assert said.count("内核启动失败") == 2 and "Address already in use" in said  # the reason is shown


def test_a_kernel_that_never_starts_fails_after_three_tries(kernel_start, capsys):
    load, calls = kernel_start
    start = load(fails=10)
    with pytest.raises(RuntimeError, match="Kernel died"):
        start(kernel_name="python3", stderr=None, cwd=".")
    assert len(calls) == 3 and "第 3 次，共 3 次" in capsys.readouterr().err


def test_every_nbval_run_retries_a_kernel_start():
    script = (ROOT / "tools" / "colab_env_test.sh").read_text(encoding="utf-8")
    assert 'cp tests/nbval_kernel_start.py "$run_dir/book/conftest.py"' in script
    assert "nbval_kernel_start.py" in (ROOT / "conftest.py").read_text(encoding="utf-8")
