"""The offline classroom kit: _build/dist/attnbook-offline-<version>.zip (``make dist``).

    python tools/make_dist.py      # needs the built site (_build/html; make pdf puts the PDF in it)

The zip holds one folder ``attnbook-offline-<version>/`` with
  离线使用说明.html   how to read, install (a lab admin, one PC, a lab without network) and run;
                     plain HTML with nothing loaded from anywhere, so it opens by double-click
  site/              the built website (open site/index.html; no network needed)
  student/           the student edition: no outputs, no solutions (tools/editions.py student)
  notebooks/         the reader edition: outputs kept, solutions closed (the committed notebooks/)
  teacher/           the source notebooks, with solutions and outputs (chapters/, appendix/)
  wheel/             the attnbook wheel (built here from the sources, no network)
  requirements-student.txt   what the notebooks need (not requirements.txt, the build toolchain)
  install_lab.bat, install_lab.sh, install_lab.py   the lab admin's installer, from kit/
Each edition has the sources' folders (chapters/, appendix/), so links between notebooks work and
``jupyter lab`` started in the kit folder shows e.g. student/chapters/04_cat_eats_fish.ipynb.

The installers live in kit/ as real files (readable and diffable; the .sh is run by
tests/site/test_dist.py); make_dist fills in two things: the lowest Python, @PYTHON_MIN@ ("3.11")
and @PYTHON_MIN_TUPLE@ ("3, 11"), and @FIRST_NOTEBOOK@, the chapter the installer points students
to. The lowest Python is computed, not typed: the highest lower bound of the Requires-Python of
every pin in requirements-student.txt, read from this .venv's metadata (the .venv must hold exactly
those versions). The .bat gets CRLF line endings here, whatever git checked out.
The printed book is in site/ (tools/make_pdf.py copies it there, next to the intro that links it).
Entries are written in a fixed order with a fixed date, so the same inputs give the same zip.
"""
from __future__ import annotations

import html
import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
import zipfile

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import editions  # noqa: E402  (tools/editions.py: the reader and student editions)

ROOT = pathlib.Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
DIST = ROOT / "_build" / "dist"
KIT = ROOT / "kit"
STUDENT_REQUIREMENTS = ROOT / "requirements-student.txt"
GUIDE = "离线使用说明.html"
DATE = (2026, 1, 1, 0, 0, 0)
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
MIRROR_EXAMPLE = "https://pypi.tuna.tsinghua.edu.cn/simple"
# The newest Python for which every pin has wheels on Windows, Linux and macOS: not in any metadata
# (Requires-Python has no upper bounds), so checked by hand, by resolving requirements-student.txt
# against PyPI with pip --platform win_amd64 / manylinux_2_28_x86_64 / macosx_14_0_arm64 and
# --python-version 3.11 … 3.14 (2026-12-01). Check again when a pin or this number changes.
PYTHON_CHECKED_MAX = "3.14"

# The systems a wheelhouse (packages/) can be downloaded for from any computer: pip's --platform
# tags (Linux needs two: torch's wheels are manylinux_2_28, matplotlib's manylinux2014) and the
# environment markers pip would see there (pip itself judges markers by the computer it runs on).
TARGETS = {
    "Windows（64 位）": (["win_amd64"], {
        "sys_platform": "win32", "os_name": "nt", "platform_system": "Windows",
        "platform_machine": "AMD64"}),
    "Linux（x86_64）": (["manylinux_2_28_x86_64", "manylinux2014_x86_64"], {
        "sys_platform": "linux", "os_name": "posix", "platform_system": "Linux",
        "platform_machine": "x86_64"}),
    "macOS（Apple 芯片）": (["macosx_14_0_arm64"], {
        "sys_platform": "darwin", "os_name": "posix", "platform_system": "Darwin",
        "platform_machine": "arm64"}),
}


def version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


def student_pins(path: pathlib.Path = STUDENT_REQUIREMENTS) -> list[Requirement]:
    pins = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            pins.append(Requirement(line))
    return pins


def pinned_version(req: Requirement) -> str:
    (spec,) = req.specifier
    if spec.operator != "==":
        raise SystemExit(f"requirements-student.txt：{req} 应是精确版本（==）")
    return spec.version


def _lowest(bounds: list[SpecifierSet]) -> str | None:
    for minor in range(8, 30):
        for micro in range(0, 30):
            candidate = Version(f"3.{minor}.{micro}")
            if all(candidate in bound for bound in bounds):
                return f"3.{minor}" if micro == 0 else str(candidate)
    return None


def python_minimum(pins: list[Requirement]) -> tuple[str, list[str]]:
    """The lowest Python every pin (that applies on this machine) accepts, e.g. "3.11", and the pins
    that set it (their own Requires-Python allows nothing older)."""
    bounds = {}
    for req in pins:
        if req.marker and not req.marker.evaluate():
            continue
        try:
            dist = importlib.metadata.distribution(req.name)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(f"{req.name} 不在 .venv 里（requirements-student.txt 固定了它）：make install") from None
        if Version(dist.version).public != Version(pinned_version(req)).public:
            raise SystemExit(f"requirements-student.txt 固定 {req}，.venv 里是 {dist.version}：两者应一致")
        bounds[req.name] = SpecifierSet(dist.metadata.get("Requires-Python") or "")
    lowest = _lowest(list(bounds.values()))
    if lowest is None:
        raise SystemExit("requirements-student.txt 的版本没有共同支持的 Python")
    return lowest, [name for name, bound in bounds.items() if _lowest([bound]) == lowest]


def target_extras(pins: list[Requirement], env: dict[str, str], py_min: str) -> list[str]:
    """Pins whose marker holds on the target: named on pip download's command line (pip judges the
    markers in the file by the computer it runs on)."""
    environment = dict(default_environment(), **env, python_version=py_min,
                       python_full_version=f"{py_min}.0" if py_min.count(".") == 1 else py_min)
    return [f"{req.name}=={pinned_version(req)}" for req in pins
            if req.marker and req.marker.evaluate(environment)]


def torch_pin(pins: list[Requirement]) -> str:
    return next(pinned_version(r) for r in pins if canonicalize_name(r.name) == "torch")


def download_commands(pins: list[Requirement], py_min: str) -> dict[str, str]:
    torch = torch_pin(pins)
    commands = {}
    for name, (platforms, env) in TARGETS.items():
        words = ["python", "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
                 "--python-version", py_min]
        for tag in platforms:
            words += ["--platform", tag]
        if env["sys_platform"] == "linux":
            words += ["--extra-index-url", TORCH_CPU_INDEX]
        words += ["-d", "packages", "-r", "requirements-student.txt"]
        if env["sys_platform"] == "linux":
            words.append(f'"torch=={torch}+cpu"')
        words += ["soupsieve", *target_extras(pins, env, py_min)]
        commands[name] = " ".join(words)
    return commands


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


def installer(name: str, py_min: str, first: str) -> bytes:
    text = (KIT / name).read_text(encoding="utf-8")
    text = (text.replace("@PYTHON_MIN_TUPLE@", py_min.replace(".", ", ")).replace("@PYTHON_MIN@", py_min)
            .replace("@FIRST_NOTEBOOK@", first))
    if re.search(r"@[A-Z_]+@", text):
        raise SystemExit(f"kit/{name} 里还有没填的占位符")
    if name.endswith(".bat"):
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    return text.encode("utf-8")


def _code(text: str) -> str:
    return f"<pre><code>{html.escape(text)}</code></pre>"


def guide(*, ver: str, wheel: str, py_min: str, setters: list[str], pins: list[Requirement],
          pdf: str | None, first: str, example: str) -> str:
    """离线使用说明.html. ``first``/``example``: chapter notebooks as chapters/NN_name.ipynb."""
    torch = torch_pin(pins)
    py_mm = ".".join(py_min.split(".")[:2])  # py -3.11, python3.11
    built_with = f"{sys.version_info.major}.{sys.version_info.minor}"  # this .venv's Python
    c = _code
    downloads = "\n".join(f"<p><b>给 {html.escape(name)} 的电脑：</b></p>\n{c(cmd)}"
                        for name, cmd in download_commands(pins, py_min).items())
    pdf_line = (f"<code>site/{html.escape(pdf)}</code> 是可打印的全书（网站首页也有链接）。" if pdf else "")
    run_bat = c(f"install_lab.bat\ninstall_lab.bat {MIRROR_EXAMPLE}")
    run_sh = c(f"sh install_lab.sh\nsh install_lab.sh {MIRROR_EXAMPLE}")
    manual_windows = c(f'''py -{py_mm} -m venv .venv
.venv\\Scripts\\python -m pip install -r requirements-student.txt -i {MIRROR_EXAMPLE}
.venv\\Scripts\\python -m pip install --no-deps wheel\\{wheel}''')
    manual_macos = c(f'''python{py_mm} -m venv .venv
.venv/bin/python -m pip install -r requirements-student.txt -i {MIRROR_EXAMPLE}
.venv/bin/python -m pip install --no-deps wheel/{wheel}''')
    manual_linux = c(f'''python{py_mm} -m venv .venv
.venv/bin/python -m pip install -r requirements-student.txt "torch=={torch}+cpu" --extra-index-url {TORCH_CPU_INDEX} -i {MIRROR_EXAMPLE}
.venv/bin/python -m pip install --no-deps wheel/{wheel}''')
    offline_windows = c(r".venv\Scripts\python -m pip install --no-index --find-links packages -r requirements-student.txt")
    offline_posix = c(".venv/bin/python -m pip install --no-index --find-links packages -r requirements-student.txt")
    start_windows = c(r".venv\Scripts\jupyter lab")
    start_posix = c(".venv/bin/jupyter lab")
    body = f"""
<h1>《自注意力机制详解》离线教学包（版本 {ver}）</h1>
<p>这个文件夹不联网也能用：网站、公式、插图、滑块和笔记本都在里面。第 2 节只需要浏览器；
第 3–5 节给机房管理员（或想在自己电脑上运行笔记本的读者）；第 6 节是上课时的用法。</p>

<h2>1. 文件夹里有什么</h2>
<table>
<tr><th>路径</th><th>内容</th></tr>
<tr><td><code>site/index.html</code></td><td>全书网站，双击打开</td></tr>
<tr><td><code>student/</code></td><td><b>学生版</b>笔记本：没有输出、没有参考解答，只留练习和提示。课堂和作业用这一份</td></tr>
<tr><td><code>notebooks/</code></td><td><b>读者版</b>笔记本：保留运行结果，数字已填好，参考解答折叠。自学用</td></tr>
<tr><td><code>teacher/</code></td><td><b>教师版</b>：本书的源笔记本，带参考解答和运行结果，用来备课、核对答案。
其中的文字是 MyST 写法（例如 <code>{{glue:text}}</code>），JupyterLab 会照原样显示，读正文请看网站</td></tr>
<tr><td><code>wheel/{html.escape(wheel)}</code></td><td>本书的辅助包 attnbook（字体、画图、滑块、参考实现、练习批改）</td></tr>
<tr><td><code>requirements-student.txt</code></td><td>运行笔记本需要的包（torch、numpy、pandas、matplotlib、pillow、ipywidgets、JupyterLab 及其依赖），
版本与生成本书运行结果时相同。它不含建站和测试用的工具</td></tr>
<tr><td><code>install_lab.bat</code>、<code>install_lab.sh</code></td><td>一条命令装好环境（Windows／Linux 与 macOS；两者都调用 <code>install_lab.py</code>）</td></tr>
</table>
<p>三个版本的笔记本文件夹结构相同（<code>chapters/</code>、<code>appendix/</code>），笔记本之间的链接在各自的版本里都能打开。</p>

<h2>2. 阅读网站（不需要 Python）</h2>
<p>用浏览器打开 <code>site/index.html</code>（双击即可）。公式由网站自带的 MathJax 渲染，滑块的每一帧都已预先算好，
拖动即可看到变化。{pdf_line}</p>

<h2>3. 安装运行环境（机房管理员，或自己的电脑）</h2>
<p><b>需要 Python {py_min} 或更新的版本</b>（python.org 的安装包或 Anaconda 都可以）。
{py_min} 是 <code>requirements-student.txt</code> 里各个包要求的最低版本（{html.escape("、".join(setters[:4]))}
等 {len(setters)} 个包不再支持更老的 Python）；
写这份说明时，{py_mm}–{PYTHON_CHECKED_MAX} 在 Windows、Linux、macOS 上都有所需的全部轮子。
推荐 Python {built_with}：本书的运行结果是用它生成的。</p>
<p>先把本文件夹放到一个短路径下，例如 <code>C:\\attnbook</code>（torch 里的文件路径很长，放得太深 Windows 会报“路径过长”）。</p>
<p><b>Windows：</b>双击 <code>install_lab.bat</code>，或在本文件夹的地址栏输入 <code>cmd</code> 回车，再运行其中一行：</p>
{run_bat}
<p><b>Linux / macOS：</b>在本文件夹里打开终端，运行其中一行：</p>
{run_sh}
<p>不带参数时从 PyPI 下载（或从环境变量 <code>PIP_INDEX_URL</code> 指定的镜像）；参数是 PyPI 镜像的地址，
上面是清华 TUNA 镜像，学校有自己的镜像时换成它的地址。本文件夹里有 <code>packages/</code> 时（第 5 节），脚本只从它安装，不联网。</p>
<p>脚本依次做这些事，可以重复运行：</p>
<ol>
<li>找 Python {py_min} 或更新的版本：先看环境变量 <code>PYTHON</code>，再试 <code>py -3.11</code> … <code>py -3.14</code>（Windows）
或 <code>python3.11</code> … <code>python3</code>（Linux、macOS）。用 Anaconda 或装在别处的 Python 时先指定它，例如
<code>set PYTHON=C:\\ProgramData\\anaconda3\\python.exe</code>（Windows）或 <code>PYTHON=/opt/python3.12/bin/python3 sh install_lab.sh</code>；</li>
<li>在本文件夹里建立 <code>.venv</code>；</li>
<li>安装 <code>requirements-student.txt</code>；</li>
<li>安装 <code>wheel/</code> 里的 attnbook（<code>--no-deps</code>：它的依赖上一步已经装好）；</li>
<li>试着导入 torch 和 attnbook，打印启动 JupyterLab 的命令。</li>
</ol>
<p><b>Linux 上的 torch：</b>在 x86_64 的 Linux 上，从 PyPI 安装 <code>torch=={torch}</code> 得到的是 CUDA 版，
连同 <code>nvidia-*</code> 依赖共几 GB；本书只用 CPU，没有 NVIDIA 显卡也用不上它。
CPU 版在 PyTorch 自己的索引 <code>{TORCH_CPU_INDEX}</code> 上，版本号是 <code>{torch}+cpu</code>
（它也满足 <code>torch=={torch}</code>）。<code>install_lab.sh</code> 在 Linux x86_64 上会加上这个索引，并要求 <code>+cpu</code> 版：
索引连不上时，pip 每个包只再试一次（每次最多等 15 秒），然后停下报错，而不会悄悄下载几 GB 的 CUDA 版。
学校镜像有 PyTorch 的 CPU 轮子时，用环境变量 <code>TORCH_INDEX=镜像地址</code> 代替它；
学校镜像本身就提供 <code>{torch}+cpu</code> 时，设 <code>TORCH_INDEX=</code>（空）不另加索引。
都没有时，用第 5 节的办法在能上网的电脑上准备 <code>packages/</code>。装好的 <code>.venv</code> 约 1.4 GB。Windows 和 macOS 上 PyPI 的 torch 就是 CPU 版（macOS 上含 Apple 芯片的 MPS），不需要这一步。</p>
<p><b>中文字体：</b>网站（<code>site/</code>）自带一套中文字体，任何电脑上都显示中文；JupyterLab 用的是系统的字体。
没有中文字体的 Linux（<code>install_lab.sh</code> 装完会提示）要先装一个，例如 Debian/Ubuntu 上
<code>sudo apt install fonts-noto-cjk</code>，否则笔记本里的中文是一个个方框。Windows 和 macOS 自带中文字体。</p>
<p><b>还原卡：</b>装有还原卡或还原软件的机房，把本文件夹放在不被还原的分区，或者装好后更新还原点，否则重启后 <code>.venv</code> 就没了。</p>

<h2>4. 不用脚本，逐行安装</h2>
<p>在本文件夹里打开命令行（Windows：地址栏输入 <code>cmd</code> 回车）。<code>-i …</code> 是 PyPI 镜像，能直接访问 PyPI 时可以去掉。</p>
<p><b>Windows</b>（<code>py</code> 是 python.org 安装包带的启动器；Anaconda 用它的 <code>python</code>）：</p>
{manual_windows}
<p><b>macOS：</b></p>
{manual_macos}
<p><b>Linux（x86_64）</b>：多一个 PyTorch CPU 索引，并写明 <code>+cpu</code>（原因见上一节）：</p>
{manual_linux}

<h2>5. 没有网络的机房：先把轮子下载到 packages/</h2>
<p>在一台能上网、装有 Python（任何系统）的电脑上，在本文件夹里运行对应机房系统的那一行，
把所有轮子下载到 <code>packages/</code>：</p>
{downloads}
<ul>
<li><code>--platform</code> 和 <code>--python-version</code> 指定轮子是给哪个系统、哪个 Python 的。不写它们时，
<code>pip download</code> 下载的是<b>正在运行它的这台电脑</b>的轮子，拷到别的系统上装不了。
机房的 Python 不是 {py_min} 时，把 <code>--python-version {py_min}</code> 改成机房的版本（例如 3.12）。</li>
<li><code>--no-deps</code>：<code>requirements-student.txt</code> 已经列出了全部依赖，按清单下载即可。pip 判断
<code>; sys_platform == "win32"</code> 这类条件时看的是正在运行它的电脑，不看 <code>--platform</code>，
所以只有目标系统才需要的几个包写在命令的最后。</li>
<li>一个 <code>packages/</code> 只放一种系统的轮子；几种系统都要时分别下载到不同的文件夹，拷给机房时再改名为 <code>packages</code>。</li>
</ul>
<p>把整个文件夹（连同 <code>packages/</code>）拷到机房的每台电脑（或共享文件夹）上，再运行 <code>install_lab.bat</code>／<code>install_lab.sh</code>：
它看到 <code>packages/</code> 就只从那里安装。不用脚本时，第 4 节的第二行改为从 <code>packages/</code> 安装。Windows：</p>
{offline_windows}
<p>Linux、macOS：</p>
{offline_posix}

<h2>6. 上课：启动 JupyterLab</h2>
<p>在本文件夹里运行（装好后脚本最后也会打印这一行）。Windows：</p>
{start_windows}
<p>Linux、macOS：</p>
{start_posix}
<p>浏览器会打开 JupyterLab，左侧的文件列表就是本文件夹（<code>.venv</code> 不显示）。学生打开
<code>student/{first}</code>，从上到下运行（Shift+Enter）。同一章的三个版本：</p>
<ul>
<li><code>student/{example}</code>（学生版）</li>
<li><code>notebooks/{example}</code>（读者版）</li>
<li><code>teacher/{example}</code>（教师版）</li>
</ul>
<p>每个练习有一个 <code>answer = None</code> 的单元：把 <code>None</code> 换成答案再运行，<code>attnbook.check</code> 会打印
“✓ 练习 … 正确！”或一条中文提示。第一个代码单元只在 Colab 里安装 attnbook，在本地什么也不做；滑块在内核里会实时重绘。</p>

<h2>7. 常见问题</h2>
<ul>
<li><b>“Requires-Python &gt;={py_min}” 或 “No matching distribution found for numpy==…”：</b>Python 太老，装 {py_min} 或更新的版本。</li>
<li><b>Linux 上开始下载几 GB 的 <code>nvidia-*</code>：</b>没有用 PyTorch 的 CPU 索引，见第 3 节。</li>
<li><b>Windows 报文件路径过长：</b>把本文件夹移到 <code>C:\\attnbook</code> 这样的短路径，删掉 <code>.venv</code> 再装一次。</li>
<li><b>Debian/Ubuntu 报 “ensurepip is not available”：</b>先装 venv 模块，例如 <code>sudo apt install python{py_mm}-venv</code>。</li>
<li><b>从 <code>packages/</code> 安装时报 “No matching distribution”：</b>轮子不是给这台电脑的系统或 Python 版本下载的，按第 5 节重新下载。</li>
</ul>
"""
    return f"""<!DOCTYPE html>
<html lang="zh-CN">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>《自注意力机制详解》离线使用说明</title>
<style>
body {{ max-width: 52rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.7;
       font-family: "Microsoft YaHei", "PingFang SC", "Noto Sans CJK SC", sans-serif; color: #222; }}
h1 {{ font-size: 1.6rem; }} h2 {{ font-size: 1.25rem; margin-top: 2rem; border-bottom: 1px solid #ddd; }}
pre {{ background: #f5f5f5; padding: .6rem .8rem; line-height: 1.4; white-space: pre-wrap; overflow-wrap: anywhere; }}
code {{ font-family: Consolas, Menlo, monospace; font-size: .92em; }}
table {{ border-collapse: collapse; }} td, th {{ border: 1px solid #ccc; padding: .3rem .6rem; vertical-align: top; text-align: left; }}
</style>
</head>
<body>
{body.strip()}
</body>
</html>
"""


def _add(zf: zipfile.ZipFile, arcname: str, data: bytes, mode: int = 0o644) -> None:
    info = zipfile.ZipInfo(arcname, date_time=DATE)
    info.compress_type = zipfile.ZIP_DEFLATED
    info.create_system = 3  # Unix, so unzip applies the mode below
    info.external_attr = mode << 16
    zf.writestr(info, data)


def make_dist() -> pathlib.Path:
    if not (SITE / "index.html").exists():
        raise SystemExit("没有 _build/html：先运行 make html-noexec（或 make html）")
    stale = editions.check_reader()
    if stale:
        raise SystemExit("读者版 notebooks/ 与 chapters/ 不一致（先运行 python tools/editions.py reader）：\n"
                         + "\n".join(stale))
    ver = version()
    top = f"attnbook-offline-{ver}"
    pins = student_pins()
    py_min, setters = python_minimum(pins)
    DIST.mkdir(parents=True, exist_ok=True)
    out = DIST / f"{top}.zip"
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(pathlib.Path(tmp) / "wheel")
        student = pathlib.Path(tmp) / "student"
        editions.build("student", student)
        sources = [p.relative_to(ROOT) for p in editions.source_pages()]
        chapters = [p.relative_to("chapters").as_posix() for p in sources if p.parts[0] == "chapters"]
        pdfs = sorted(p.name for p in SITE.glob("*.pdf"))
        files: list[tuple[str, bytes, int]] = []
        for path in sorted(SITE.rglob("*")):
            if path.is_file() and path.name != ".buildinfo":
                files.append((f"{top}/site/{path.relative_to(SITE).as_posix()}", path.read_bytes(), 0o644))
        for edition, base in (("student", student), ("notebooks", editions.READER), ("teacher", ROOT)):
            for rel in sources:
                files.append((f"{top}/{edition}/{rel.as_posix()}", (base / rel).read_bytes(), 0o644))
        files.append((f"{top}/wheel/{wheel.name}", wheel.read_bytes(), 0o644))
        files.append((f"{top}/requirements-student.txt", STUDENT_REQUIREMENTS.read_bytes(), 0o644))
        for name, mode in (("install_lab.bat", 0o644), ("install_lab.sh", 0o755), ("install_lab.py", 0o755)):
            files.append((f"{top}/{name}", installer(name, py_min, f"chapters/{chapters[0]}"), mode))
        example = next((c for c in chapters if c.startswith("04_")), chapters[0])
        page = guide(ver=ver, wheel=wheel.name, py_min=py_min, setters=setters, pins=pins,
                     pdf=pdfs[0] if pdfs else None, first=f"chapters/{chapters[0]}",
                     example=f"chapters/{example}")
        files.append((f"{top}/{GUIDE}", page.encode("utf-8"), 0o644))
        for name in ("LICENSE", "LICENSE-TEXT.md"):
            files.append((f"{top}/{name}", (ROOT / name).read_bytes(), 0o644))
        partial = out.with_suffix(".zip.part")
        with zipfile.ZipFile(partial, "w") as zf:
            for arcname, data, mode in files:
                _add(zf, arcname, data, mode)
        partial.replace(out)
    return out


def main() -> None:
    start = time.perf_counter()
    out = make_dist()
    sys.stdout.write(f"离线包：{out.relative_to(ROOT)}（{out.stat().st_size / 1e6:.1f} MB，"
                     f"{time.perf_counter() - start:.0f} 秒）\n")


if __name__ == "__main__":
    main()
