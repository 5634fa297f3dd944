"""The offline classroom kit (make dist → _build/dist/attnbook-offline-<version>.zip).

Unzipped into an empty folder: index.html opened from disk in Chromium with every network
request blocked (math, figures, sliders work), and the wheel installed into a fresh venv.
The fresh venv gets the wheel with ``pip install --no-deps --no-index`` (no network at all); its
dependencies (numpy, matplotlib, torch…) are borrowed from the book's .venv through a .pth file
placed after the venv's own site-packages, so the attnbook that is imported is the wheel's.
"""
from __future__ import annotations

import pathlib
import subprocess
import sys
import sysconfig
import tomllib
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
ZIP = ROOT / "_build" / "dist" / f"attnbook-offline-{VERSION}.zip"


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> pathlib.Path:
    if not ZIP.exists():
        pytest.skip(f"{ZIP.relative_to(ROOT)} 尚未生成（先运行 make dist），跳过离线包测试")
    target = tmp_path_factory.mktemp("offline")
    assert not any(target.iterdir())
    with zipfile.ZipFile(ZIP) as zf:
        zf.extractall(target)
    return target / f"attnbook-offline-{VERSION}"


def test_kit_contents(kit):
    assert (kit / "site" / "index.html").exists()
    assert sorted(p.name for p in (kit / "notebooks" / "chapters").glob("*.ipynb")) == \
        sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb"))
    assert (kit / "requirements.txt").read_text() == (ROOT / "requirements.txt").read_text()
    guide = (kit / "离线使用说明.md").read_text(encoding="utf-8")
    for needed in (r".venv\Scripts\python -m pip install -r requirements.txt", "--no-deps wheel",
                   "jupyter lab", "site/index.html", "make lab"):
        assert needed in guide, needed


def test_site_from_disk_without_network(kit, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    blocked, errors = [], []
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:"))
               else (blocked.append(r.request.url), r.abort()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto((kit / "site" / "index.html").as_uri(), wait_until="load")
        page.wait_for_url("**/intro.html")
        page.goto((kit / "site" / "chapters" / "04_cat_eats_fish.html").as_uri(), wait_until="load")
        page.wait_for_selector("mjx-container", state="attached", timeout=20_000)
        assert page.locator("mjx-merror").count() == 0
        widths = page.eval_on_selector_all(".cell_output img", "els => els.map(i => i.naturalWidth)")
        assert widths and min(widths) > 0, widths
        slider = page.locator(".attnbook-slider").first
        shown = "el => [...el.querySelectorAll('img[data-frame]')].filter(i => i.style.display !== 'none')" \
                ".map(i => i.dataset.frame)"
        before = slider.evaluate(shown)
        slider.locator('input[type="range"]').first.focus()
        page.keyboard.press("ArrowRight")
        after = slider.evaluate(shown)
        assert len(after) == 1 and after != before
        assert errors == [], errors
        assert blocked == [], blocked
    finally:
        context.close()


def test_wheel_installs_into_a_fresh_venv(kit, tmp_path):
    venv = tmp_path / "venv"
    # no pip of its own (bootstrapping one takes longer than the rest of the test): this
    # environment's pip installs into it with --python
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    wheel = next((kit / "wheel").glob("attnbook-*.whl"))
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index",
                    str(wheel)], check=True)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # borrow the dependencies (not attnbook: the book's own is an editable install, not on this path)
    (pathlib.Path(purelib) / "zz_borrowed_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    check = ("import attnbook, matplotlib; matplotlib.use('Agg'); attnbook.setup();"
             "from attnbook.plots import heatmap; import pathlib;"
             f"assert pathlib.Path(attnbook.__file__).is_relative_to({str(venv)!r}), attnbook.__file__;"
             "ax = heatmap([[1.0, 0.0], [0.5, 0.5]], row_labels='猫鱼', col_labels='猫鱼');"
             "ax.figure.canvas.draw(); print('ok')")
    out = subprocess.run([str(python), "-W", "error:Glyph:UserWarning", "-c", check],
                         check=True, capture_output=True, text=True, cwd=tmp_path)
    assert out.stdout.strip().endswith("ok")
