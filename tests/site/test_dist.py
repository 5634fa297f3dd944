"""The offline classroom kit (make dist → _build/dist/attnbook-offline-<version>.zip).

Unzipped into an empty folder: the three notebook editions, the pins and the installers are what
the repository gives; the guide (离线使用说明.html) states the lowest Python that the pins'
metadata allows and no lower one, and the install commands a lab admin needs; index.html opened
from disk in Chromium with every network request blocked (math, figures, sliders work).

The last test does what a lab admin does on a PC without network: it fills a packages/ folder with
the guide's own ``pip download`` line for Linux, runs ``sh install_lab.sh`` (which then installs
requirements-student.txt and the wheel from packages/ only, pip's config and index switched off), and
in that fresh venv executes three student-edition notebooks with every exercise answered by the
teacher's reference solution, asserting that each ``attnbook.check`` says ✓. nbclient and ipykernel
come from requirements-student.txt itself (nbconvert → nbclient; JupyterLab needs both).
packages/ is kept in _build/.cache/ (keyed by the pins and the download line), so only the first
run downloads; pip's own cache does not help here (this machine's registry sends no cache headers).
"""
from __future__ import annotations

import hashlib
import html
import html.parser
import importlib.metadata
import json
import os
import pathlib
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import tomllib
import zipfile

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from conftest import chinese_in_boxes  # tests/site/conftest.py

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import editions  # noqa: E402

VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
ZIP = ROOT / "_build" / "dist" / f"attnbook-offline-{VERSION}.zip"
GUIDE = "离线使用说明.html"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PACKAGES_CACHE = ROOT / "_build" / ".cache"
# what a reader does not need: the build and test toolchain of requirements.txt
TOOLCHAIN = {"jupyter-book", "sphinx", "playwright", "pytest", "nbval", "hypothesis", "myst-nb",
             "coverage", "jieba", "pytest-xdist", "django-static-mathjax", "pydata-sphinx-theme"}
# pinned in requirements-student.txt though not in requirements.txt (a Linux pip freeze)
NOT_IN_FREEZE = {"setuptools", "colorama", "pywinpty", "appnope"}
TOP_LEVEL = ["torch", "numpy", "pandas", "matplotlib", "pillow", "ipywidgets", "jupyterlab_widgets",
             "widgetsnbextension", "jupyterlab", "ipykernel"]
TARGET_ENVS = {
    "linux": {"sys_platform": "linux", "os_name": "posix", "platform_system": "Linux"},
    "windows": {"sys_platform": "win32", "os_name": "nt", "platform_system": "Windows"},
    "macos": {"sys_platform": "darwin", "os_name": "posix", "platform_system": "Darwin"},
}
EXECUTED = ["02_attention_lookup.ipynb", "04_cat_eats_fish.ipynb", "07_single_head.ipynb"]


def pins(path: pathlib.Path = ROOT / "requirements-student.txt") -> list[Requirement]:
    lines = (line.split("#", 1)[0].strip() for line in path.read_text(encoding="utf-8").splitlines())
    return [Requirement(line) for line in lines if line]


def exact(req: Requirement) -> str:
    (spec,) = req.specifier
    assert spec.operator == "==", req
    return spec.version


def lowest_python() -> str:
    """The lowest Python that every pin installed here accepts (Requires-Python in its METADATA)."""
    specs = []
    for req in pins():
        if req.marker is None or req.marker.evaluate():
            specs.append(SpecifierSet(importlib.metadata.metadata(req.name).get("Requires-Python") or ""))
    found = next(v for v in (Version(f"3.{minor}.{micro}") for minor in range(6, 20) for micro in range(30))
                 if all(v in s for s in specs))
    return f"{found.major}.{found.minor}" + (f".{found.micro}" if found.micro else "")


# a Python version as the guide and installers write one: "Python 3.11", "python3.11", "py -3.11",
# "--python-version 3.11", or a bare "3.11" / "3.10–3.13" (not a package's "==3.1.2")
PYTHON_VERSION = re.compile(r"(?:python\s*|py\s+-|--python-version\s+)(3\.\d+(?:\.\d+)?)(?![\d.])", re.I)
BARE_VERSION = re.compile(r"(?<![\w.=+-])(3\.\d+(?:\.\d+)?)(?![\d.])")


def text_of(page: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def kit(tmp_path_factory) -> pathlib.Path:
    if not ZIP.exists():
        pytest.skip(f"{ZIP.relative_to(ROOT)} 尚未生成（先运行 make dist），跳过离线包测试")
    target = tmp_path_factory.mktemp("offline")
    assert not any(target.iterdir())
    with zipfile.ZipFile(ZIP) as zf:
        zf.extractall(target)
    return target / f"attnbook-offline-{VERSION}"


# -- what is in the kit --------------------------------------------------------------------------
def test_kit_holds_three_editions_the_pins_and_the_installers(kit, tmp_path):
    sources = [p.relative_to(ROOT) for p in editions.source_pages()]
    assert any(p.parts[0] == "appendix" for p in sources)
    for edition in ("student", "notebooks", "teacher"):
        assert sorted(p.relative_to(kit / edition) for p in (kit / edition).rglob("*.ipynb")) == sorted(sources)
    editions.build("student", tmp_path / "student")
    for rel in sources:
        assert (kit / "student" / rel).read_bytes() == (tmp_path / "student" / rel).read_bytes(), rel
        assert (kit / "notebooks" / rel).read_bytes() == (editions.READER / rel).read_bytes(), rel
        assert (kit / "teacher" / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    assert (kit / "requirements-student.txt").read_bytes() == (ROOT / "requirements-student.txt").read_bytes()
    assert not (kit / "requirements.txt").exists()  # the toolchain is not for the lab
    assert [p.name for p in (kit / "wheel").iterdir()] == [f"attnbook-{VERSION}-py3-none-any.whl"]
    for name in ("site/index.html", GUIDE, "install_lab.bat", "install_lab.sh", "install_lab.py",
                 "LICENSE", "LICENSE-TEXT.md"):
        assert (kit / name).is_file(), name
    with zipfile.ZipFile(ZIP) as zf:  # executable once unzipped with unzip / tar on Linux and macOS
        modes = {i.filename.split("/", 1)[1]: i.external_attr >> 16 for i in zf.infolist()}
    assert modes["install_lab.sh"] & 0o111 and modes["install_lab.py"] & 0o111


def test_student_pins_are_the_books_versions_and_nothing_of_the_toolchain():
    student = {canonicalize_name(r.name): r for r in pins()}
    full = {canonicalize_name(r.name): exact(r) for r in pins(ROOT / "requirements.txt")}
    assert {n for n in student if n not in full} == NOT_IN_FREEZE
    for name, req in student.items():
        if name in full:
            assert exact(req) == full[name], f"{name}：requirements.txt 是 {full[name]}，学生版是 {exact(req)}"
    assert not TOOLCHAIN & set(student), TOOLCHAIN & set(student)


@pytest.mark.parametrize("target", sorted(TARGET_ENVS))
def test_student_pins_are_the_closure_of_what_the_notebooks_need(target):
    """Every dependency (markers evaluated for the target) is pinned, and nothing else, with two
    exceptions: soupsieve (left to pip, see the file) and the pins of another system."""
    env = dict(default_environment(), **TARGET_ENVS[target])
    student = {canonicalize_name(r.name): r for r in pins()}
    needed, todo = set(), [(name, frozenset()) for name in TOP_LEVEL]
    while todo:
        name, extras = todo.pop()
        key = canonicalize_name(name)
        if (key, extras) in needed:
            continue
        needed.add((key, extras))
        try:
            requires = importlib.metadata.requires(name) or []
        except importlib.metadata.PackageNotFoundError:  # colorama, pywinpty, appnope: no dependencies
            assert key in NOT_IN_FREEZE, key
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate(dict(env, extra=e)) for e in {"", *extras}):
                todo.append((req.name, frozenset(req.extras)))
    needed_names = {key for key, _ in needed}
    applies = {n for n, r in student.items() if r.marker is None or r.marker.evaluate(env)}
    assert needed_names - applies == {"soupsieve"}, f"{target} 上需要却没有固定：{needed_names - applies}"
    assert applies - needed_names == set(), f"{target} 上固定了却用不到：{applies - needed_names}"


# -- the guide and the installers ----------------------------------------------------------------
class _Tags(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def test_guide_states_the_lowest_python_the_pins_allow(kit):
    lowest = lowest_python()  # 3.11 today: numpy 2.3.5, ipython 9.18.1 … need it
    guide = text_of((kit / GUIDE).read_text(encoding="utf-8"))
    assert f"需要 Python {lowest} 或更新的版本" in guide
    assert f"--python-version {lowest}" in guide
    for where, text in [(GUIDE, guide)] + [(n, (kit / n).read_text(encoding="utf-8"))
                                           for n in ("install_lab.bat", "install_lab.sh", "install_lab.py")]:
        named = {Version(v) for v in PYTHON_VERSION.findall(text) + BARE_VERSION.findall(text)}
        assert all(v >= Version(lowest) for v in named), (where, sorted(named))
        if where != GUIDE:  # and the installers check it, against no other version
            assert set(re.findall(r"\(3, \d+\)", text)) == {f"({lowest.replace('.', ', ')})"}, where


def test_guide_gives_the_install_commands_a_lab_admin_needs(kit):
    page = (kit / GUIDE).read_text(encoding="utf-8")
    guide = text_of(page)
    torch = next(exact(r) for r in pins() if r.name == "torch")
    for needed in (
            "install_lab.bat", "sh install_lab.sh", "-i https://",  # the mirror
            "--extra-index-url https://download.pytorch.org/whl/cpu", f"torch=={torch}+cpu", "CUDA",
            "--platform win_amd64", "--platform manylinux_2_28_x86_64", "--platform macosx_14_0_arm64",
            "--only-binary=:all:", "-d packages",
            "--no-index --find-links packages -r requirements-student.txt",
            r"--no-deps wheel\attnbook-", "--no-deps wheel/attnbook-",
            r".venv\Scripts\jupyter lab", ".venv/bin/jupyter lab", "site/index.html",
            "sudo apt install fonts-noto-cjk"):  # JupyterLab draws Chinese with the system's fonts
        assert needed in guide, needed
    downloads = [line for line in guide.splitlines() if line.startswith("python -m pip download")]
    assert len(downloads) == 3 and all("--no-deps" in d and "-r requirements-student.txt" in d for d in downloads)
    # every notebook path it names is where JupyterLab, started in the kit folder, shows it
    paths = re.findall(r"\b((?:student|notebooks|teacher)/[\w/]+\.ipynb)", guide)
    assert {p.split("/")[0] for p in paths} == {"student", "notebooks", "teacher"}
    for path in paths:
        assert (kit / path).is_file(), path
    # plain and self-contained: opens from disk by double-click, loads nothing
    parser = _Tags()
    parser.feed(page)
    assert ("meta", {"charset": "utf-8"}) in parser.tags
    assert not {t for t, _ in parser.tags} & {"script", "link", "img", "iframe", "object"}
    assert not [a for _, a in parser.tags if "src" in a or "href" in a]
    assert "url(" not in page and "@import" not in page


def test_installers_bat_crlf_ascii_sh_posix(kit):
    bat = (kit / "install_lab.bat").read_bytes()
    assert bat.isascii()  # cmd.exe reads a .bat in the console's code page
    assert b"\n" not in bat.replace(b"\r\n", b""), "install_lab.bat 的每一行都应以 CRLF 结尾"
    text = bat.decode()
    for needed in ('pushd "%~dp0"', "%PY% install_lab.py %*", "py -%%V", "if defined PYTHON", "pause"):
        assert needed in text, needed
    sh = (kit / "install_lab.sh").read_bytes()
    assert b"\r" not in sh and sh.startswith(b"#!/bin/sh\n")
    subprocess.run(["sh", "-n", str(kit / "install_lab.sh")], check=True)
    assert 'exec "$py" install_lab.py "$@"' in sh.decode()
    py = (kit / "install_lab.py").read_text(encoding="utf-8")
    compile(py, "install_lab.py", "exec")
    for needed in ("requirements-student.txt", '"packages"', '"wheel"', "--no-deps", "--no-index",
                   "TORCH_INDEX", "https://download.pytorch.org/whl/cpu", "+cpu"):
        assert needed in py, needed
    assert not re.search(r"@[A-Z_]+@", py + text + sh.decode())  # make_dist filled every placeholder


# -- the website from disk -----------------------------------------------------------------------
def test_site_from_disk_without_network(kit, browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    blocked, errors = [], []
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith(("file:", "data:"))
               else (blocked.append(r.request.url), r.abort()))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))  # e.g. a refused font
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
        # Chinese drawn from disk too (on a PC without a CJK font: in the book's own font)
        _, boxes = chinese_in_boxes(page, "article p, .admonition-title, table.dataframe th")
        assert not boxes, boxes[:5]
        assert errors == [], errors
        assert blocked == [], blocked
    finally:
        context.close()


# -- a lab PC without network: packages/, install_lab.sh, the student edition with answers --------
CHECK = re.compile(r'attnbook\.check\("(\d\d-\d+)", answer\)')

# runs in the fresh venv: the notebooks side by side (half the time of one after the other here)
DRIVER = """\
import asyncio, importlib.metadata, json, pathlib, sys
import nbformat
from nbclient import NotebookClient


async def run(path):
    nb = nbformat.read(path, as_version=4)
    await NotebookClient(nb, timeout=600, kernel_name="python3",
                         resources={"metadata": {"path": str(path.parent)}}).async_execute()
    nbformat.write(nb, path)


async def main():
    await asyncio.gather(*(run(pathlib.Path(p)) for p in sys.argv[1:]))


asyncio.run(main())
print(json.dumps(sorted(d.metadata["Name"] for d in importlib.metadata.distributions())))
"""


def solutions(teacher: pathlib.Path) -> dict[str, str]:
    """Exercise key → the teacher's reference solution (a hide-cell ending in attnbook.check)."""
    found = {}
    for cell in json.loads(teacher.read_text(encoding="utf-8"))["cells"]:
        source = "".join(cell["source"])
        match = CHECK.search(source)
        if match and "hide-cell" in cell.get("metadata", {}).get("tags", []):
            found[match.group(1)] = source
    return found


def answer(student: pathlib.Path, teacher: pathlib.Path, prefix: str) -> list[str]:
    """Replace ``answer = None`` in each exercise cell by the reference solution; the exercise keys."""
    nb = json.loads(student.read_text(encoding="utf-8"))
    reference = solutions(teacher)
    keys = []
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        match = CHECK.search(source)
        if cell["cell_type"] != "code" or not match:
            continue
        key = match.group(1)
        assert re.search(r"^answer = None\b", source, re.M), (student.name, key)
        solution = reference[key].rstrip()
        body = solution[:CHECK.search(solution).start()].rstrip().removesuffix("_ =").rstrip()
        cell["source"] = re.sub(r"^answer = None\b.*$", lambda _: body, source, count=1, flags=re.M)
        keys.append(key)
    assert keys and sorted(keys) == sorted(reference), (student.name, keys, sorted(reference))
    assert all(k.startswith(prefix) for k in keys)
    # the kernel is this venv's python (not a kernelspec found elsewhere on the machine)
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": f"import sys\nassert sys.prefix == {str(student.parents[2] / '.venv')!r}, "
                                     "sys.prefix"})
    student.write_text(json.dumps(nb, ensure_ascii=False), encoding="utf-8")
    return keys


def fill_packages(kit: pathlib.Path) -> pathlib.Path:
    """packages/ by the guide's own download line for Linux, once per pins and line (_build/.cache/).

    The line is run as written, but where the PyTorch CPU index cannot be reached (this machine:
    PyPI only) without it: torch==…+cpu then comes from pip's configured find-links."""
    guide = text_of((kit / GUIDE).read_text(encoding="utf-8"))
    (line,) = [l for l in guide.splitlines() if l.startswith("python -m pip download") and "manylinux" in l]
    words = shlex.split(line)
    assert words[:4] == ["python", "-m", "pip", "download"]
    at = words.index("--extra-index-url")
    assert words[at + 1] == TORCH_CPU_INDEX
    try:
        socket.getaddrinfo("download.pytorch.org", 443)
    except OSError:  # unreachable here (pip would retry it for every package): the config's find-links
        del words[at:at + 2]
    key = hashlib.sha256(line.encode() + (kit / "requirements-student.txt").read_bytes()).hexdigest()[:16]
    target = PACKAGES_CACHE / f"kit-packages-{key}"
    if not target.is_dir():
        for old in PACKAGES_CACHE.glob("kit-packages-*"):
            if ".part" not in old.name:  # an older pin set (another run may be filling a .part)
                shutil.rmtree(old, ignore_errors=True)
        PACKAGES_CACHE.mkdir(parents=True, exist_ok=True)
        partial = pathlib.Path(tempfile.mkdtemp(prefix=f"{target.name}.part-", dir=PACKAGES_CACHE))
        words[words.index("-d") + 1] = str(partial)
        try:
            subprocess.run([sys.executable, *words[1:], "-q", "--disable-pip-version-check"], cwd=kit,
                           check=True)
            partial.rename(target)
        except OSError:  # another run filled it first
            assert target.is_dir()
        finally:
            shutil.rmtree(partial, ignore_errors=True)
    return target


def test_lab_install_from_packages_runs_the_student_exercises(kit):
    with tempfile.TemporaryDirectory(prefix="attnbook-lab-") as tmp:  # ~1.2 GB: gone when done
        with zipfile.ZipFile(ZIP) as zf:
            zf.extractall(tmp)
        lab = pathlib.Path(tmp) / f"attnbook-offline-{VERSION}"
        (lab / "packages").symlink_to(fill_packages(kit), target_is_directory=True)
        keys = {name: answer(lab / "student" / "chapters" / name, lab / "teacher" / "chapters" / name,
                             name[:2]) for name in EXECUTED}
        # no pip config, no index, no find-links: only packages/ (what a lab PC without network has).
        # PIP_COMPILE=0 skips byte-compiling every installed file (a minute here; the lab keeps it):
        # the modules the import check and the kernels use are compiled, once, when first imported
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("PIP_") and k not in ("ATTNBOOK_STATIC", "PYTHONDONTWRITEBYTECODE")}
        env.update(PIP_CONFIG_FILE=os.devnull, PIP_COMPILE="0")
        out = subprocess.run(["sh", "install_lab.sh"], cwd=lab, env=env, capture_output=True, text=True)
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
        assert "找到 packages/：只从这个文件夹安装，不联网。" in out.stdout
        torch = next(exact(r) for r in pins() if r.name == "torch")
        assert f"torch {torch}+cpu | attnbook {VERSION}" in out.stdout, out.stdout[-1000:]
        assert ".venv/bin/jupyter lab" in out.stdout
        # a Linux lab PC without a Chinese font is told to get one (this machine may or may not have one)
        fonts = (subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
                 if shutil.which("fc-list") else "(no fontconfig tools: install_lab says nothing)")
        assert ("这台电脑没有中文字体" in out.stdout) == (not fonts.strip()), out.stdout[-800:]
        assert (lab / re.search(r"学生打开 (student/\S+\.ipynb)", out.stdout).group(1)).is_file()
        python = lab / ".venv" / "bin" / "python"
        (lab / "driver.py").write_text(DRIVER, encoding="utf-8")
        # a student's environment: live sliders (no ATTNBOOK_STATIC); a missing CJK glyph still fails
        run = subprocess.run([str(python), "driver.py",
                              *(str(lab / "student" / "chapters" / n) for n in EXECUTED)],
                             cwd=lab, env=dict(env, PYTHONWARNINGS="error:Glyph:UserWarning"),
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
        installed = {canonicalize_name(n) for n in json.loads(run.stdout.strip().splitlines()[-1])}
        assert not TOOLCHAIN & installed, TOOLCHAIN & installed
        assert {"attnbook", "torch", "jupyterlab", "ipykernel", "nbclient"} <= installed
        for name in EXECUTED:
            nb = json.loads((lab / "student" / "chapters" / name).read_text(encoding="utf-8"))
            said = {}
            for cell in nb["cells"]:
                match = CHECK.search("".join(cell["source"]))
                if match:
                    said[match.group(1)] = "".join(
                        "".join(o.get("text", "")) for o in cell["outputs"] if o["output_type"] == "stream")
            assert sorted(said) == sorted(keys[name])
            for key, text in said.items():
                assert f"✓ 练习 {key} 正确" in text, (name, key, text)
