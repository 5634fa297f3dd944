"""The offline classroom kit: _build/dist/attnbook-offline-<version>.zip (``make dist``).

    python tools/make_dist.py      # needs the built site (_build/html; make pdf puts the PDF in it)

The zip holds one folder ``attnbook-offline-<version>/`` with
  site/            the built website (open site/index.html from the folder; no network needed)
  notebooks/       the chapters and the appendix notebook, with their stored outputs
  wheel/           the attnbook wheel (built here from the sources, no network)
  requirements.txt the exact pins the book's outputs were made with
  离线使用说明.md   how to read, and how to run the notebooks with a package mirror or the wheel
                   (plain python/pip commands that work on Windows, where there is no make)
The printed book is in site/ (tools/make_pdf.py copies it there, next to the intro that links it).
Entries are written in a fixed order with a fixed date, so the same inputs give the same zip.
"""
from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
DIST = ROOT / "_build" / "dist"
DATE = (2026, 1, 1, 0, 0, 0)

README = """\
# 《自注意力机制详解》离线使用说明（版本 {version}）

这个文件夹不需要网络就能用：网站、公式、插图和滑块都在里面。

## 1. 阅读网站

用浏览器打开 `site/index.html`（双击即可）。公式由网站自带的 MathJax 渲染，滑块的每一帧都已预先算好，
拖动即可看到变化；不需要 Python，也不需要联网。`site/自注意力机制详解.pdf` 是可打印的全书
（首页有下载链接）。

## 2. 在自己的电脑上运行笔记本

需要 Python 3.11（3.10–3.13 均可）。在本文件夹里打开终端（Windows：在文件夹地址栏输入 `cmd` 回车）。

**Windows（没有 make，逐行输入）：**

```bat
py -3.11 -m venv .venv
.venv\\Scripts\\python -m pip install -r requirements.txt -i https://pypi.tuna.tsinghua.edu.cn/simple
.venv\\Scripts\\python -m pip install --no-deps wheel\\{wheel}
.venv\\Scripts\\python -m jupyter lab notebooks
```

**macOS / Linux：**

```bash
python3.11 -m venv .venv
.venv/bin/python -m pip install -r requirements.txt -i https://pypi.tuna.tsinghua.edu.cn/simple
.venv/bin/python -m pip install --no-deps wheel/{wheel}
.venv/bin/python -m jupyter lab notebooks
```

- `-i …` 是国内的 PyPI 镜像（清华 TUNA）；能直接访问 PyPI 时可以去掉，学校有自己的镜像时换成它的地址。
- 完全没有网络时：在有网络的电脑上运行
  `python -m pip download -r requirements.txt -d packages`，把 `packages` 文件夹一起拷过来，
  再用 `python -m pip install --no-index --find-links packages -r requirements.txt` 安装。
- `wheel/` 里的 `attnbook` 是本书的辅助包（字体、画图、滑块、参考实现、练习批改），
  `--no-deps` 表示它的依赖已由 `requirements.txt` 装好。
- 已经克隆了仓库并装有 GNU make 的同学，用 `make lab` 即可，效果相同。

在 JupyterLab 里打开 `notebooks/chapters/01_context.ipynb`，从上到下运行（Shift+Enter）。
第一个代码单元只在 Colab 里安装 `attnbook`，在本地什么也不做；滑块在内核里会实时重绘。
"""


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def build_wheel(out: pathlib.Path) -> pathlib.Path:
    """Build the attnbook wheel from a clean copy of the sources (no network, no build/ in the tree)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "src"
        src.mkdir()
        for name in ("pyproject.toml", "README.md", "LICENSE"):
            shutil.copy2(ROOT / name, src / name)
        shutil.copytree(ROOT / "attnbook", src / "attnbook",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(out), str(src)], check=True)
    wheels = sorted(out.glob("attnbook-*.whl"))
    if len(wheels) != 1:
        raise SystemExit(f"应得到一个 attnbook 轮子，实际为 {wheels}")
    return wheels[0]


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes) -> None:
    info = zipfile.ZipInfo(arcname, date_time=DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    zf.writestr(info, data)


def make_dist() -> pathlib.Path:
    if not (SITE / "index.html").exists():
        raise SystemExit("没有 _build/html：先运行 make html-noexec（或 make html）")
    ver = version()
    top = f"attnbook-offline-{ver}"
    DIST.mkdir(parents=True, exist_ok=True)
    out = DIST / f"{top}.zip"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(pathlib.Path(tmp))
        files: list[tuple[str, bytes]] = []
        for path in sorted(SITE.rglob("*")):
            if path.is_file() and path.name != ".buildinfo":
                files.append((f"{top}/site/{path.relative_to(SITE).as_posix()}", path.read_bytes()))
        for pattern in ("chapters/*.ipynb", "appendix/*.ipynb"):
            for path in sorted(ROOT.glob(pattern)):
                files.append((f"{top}/notebooks/{path.relative_to(ROOT).as_posix()}", path.read_bytes()))
        files.append((f"{top}/wheel/{wheel.name}", wheel.read_bytes()))
        files.append((f"{top}/requirements.txt", (ROOT / "requirements.txt").read_bytes()))
        files.append((f"{top}/离线使用说明.md",
                      README.format(version=ver, wheel=wheel.name).encode("utf-8")))
        for name in ("LICENSE", "LICENSE-TEXT.md"):
            files.append((f"{top}/{name}", (ROOT / name).read_bytes()))
        partial = out.with_suffix(".zip.part")
        with zipfile.ZipFile(partial, "w") as zf:
            for arcname, data in files:
                _add(zf, arcname, data)
        partial.replace(out)
    return out


def main() -> None:
    start = time.perf_counter()
    out = make_dist()
    sys.stdout.write(f"离线包：{out.relative_to(ROOT)}（{out.stat().st_size / 1e6:.1f} MB，"
                     f"{time.perf_counter() - start:.0f} 秒）\n")


if __name__ == "__main__":
    main()
