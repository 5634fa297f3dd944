"""为机房（或自己的电脑）安装运行本书笔记本的环境。install_lab.bat / install_lab.sh 找到合适的
Python 后运行本文件；也可以直接运行：python install_lab.py [镜像地址]

1. 在本文件夹里建立 .venv（已有就沿用，可以重复运行）；
2. 安装 requirements-student.txt：
   - 本文件夹里有 packages/（用 pip download 备好的轮子）时只从它安装，不联网；
   - 否则从镜像（第一个参数，或 pip 自己读取的环境变量 PIP_INDEX_URL）或 PyPI 安装；
   - Linux x86_64 上只装 CPU 版 torch（PyPI 上的是几 GB 的 CUDA 版）：默认从 PyTorch 的 CPU 索引取，
     环境变量 TORCH_INDEX 可换成校内的镜像地址；TORCH_INDEX 设为空时不另加索引
     （CPU 版已在镜像或 pip 配置的 find-links 里）；
3. 安装 wheel/ 里的 attnbook 轮子（--no-deps：它的依赖第 2 步已装好）；
4. 试着导入，然后打印启动 JupyterLab 的命令。
"""
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

PYTHON_MIN = (@PYTHON_MIN_TUPLE@)
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"
KIT = Path(__file__).resolve().parent
REQUIREMENTS = KIT / "requirements-student.txt"
PACKAGES = KIT / "packages"
VENV = KIT / ".venv"
WINDOWS = os.name == "nt"


def say(text):
    print(text, flush=True)


def run(command, hint):
    say("> " + " ".join(str(part) for part in command))
    if subprocess.call([str(part) for part in command], cwd=str(KIT)) != 0:
        say("")
        say("出错了：" + hint)
        sys.exit(1)


def torch_version():
    match = re.search(r"^torch==(\S+)", REQUIREMENTS.read_text(encoding="utf-8"), re.M)
    return match.group(1)


def chinese_font():
    """Whether fontconfig (what browsers on Linux draw text with) knows a font with Chinese glyphs."""
    try:
        out = subprocess.run(["fc-list", ":lang=zh", "family"], capture_output=True, text=True).stdout
    except OSError:  # no fontconfig tools: nothing to say
        return True
    return bool(out.strip())


def main(argv):
    if hasattr(sys.stdout, "reconfigure"):  # a console or file that cannot show Chinese gets '?'
        sys.stdout.reconfigure(errors="replace")
    version = ".".join(str(n) for n in PYTHON_MIN)
    if sys.version_info < PYTHON_MIN:
        say("需要 Python {} 或更新的版本，这个是 {}（{}）。".format(
            version, platform.python_version(), sys.executable))
        return 1
    if argv and argv[0] in ("-h", "--help", "/?"):
        say(__doc__)
        return 0
    mirror = argv[0] if argv else None
    python = VENV / ("Scripts/python.exe" if WINDOWS else "bin/python")
    if not python.exists():
        run([sys.executable, "-m", "venv", VENV],
            "建立 .venv 失败。Debian/Ubuntu 上先装 venv 模块：sudo apt install python{}.{}-venv".format(
                *sys.version_info[:2]))
    install = [python, "-m", "pip", "install", "--disable-pip-version-check", "-r", REQUIREMENTS]
    linux_x86 = sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")
    if PACKAGES.is_dir():
        say("找到 packages/：只从这个文件夹安装，不联网。")
        install += ["--no-index", "--find-links", PACKAGES]
        hint = ("packages/ 里缺少轮子，或轮子不是给这台电脑的系统和 Python 版本下载的"
                "（见《离线使用说明》里“没有网络的机房”一节）。")
    else:
        if mirror:
            install += ["-i", mirror]
        hint = "下载失败：检查网络或镜像地址（install_lab 的第一个参数，或 PIP_INDEX_URL）。"
    if linux_x86:
        # X+cpu 也满足 requirements 里的 torch==X；写明 +cpu，就不会悄悄装上几 GB 的 CUDA 版
        cpu = "torch=={}+cpu".format(torch_version())
        install.append(cpu)
        torch_index = os.environ.get("TORCH_INDEX", TORCH_CPU_INDEX)
        if PACKAGES.is_dir():
            hint += " Linux 上 packages/ 里要有 {}（用 Linux 那一行下载命令）。".format(cpu)
        else:
            if torch_index:
                # an unreachable index: give up after one short try, not 5 retries per package
                install += ["--extra-index-url", torch_index, "--retries", "1", "--timeout", "15"]
            hint += (" Linux 上 torch 只装 CPU 版（{}），它在 PyTorch 的 CPU 索引 {} 上；"
                     "连不上时用环境变量 TORCH_INDEX 指定校内的镜像。".format(cpu, TORCH_CPU_INDEX))
    run(install, hint)
    wheels = sorted((KIT / "wheel").glob("attnbook-*.whl"))
    if len(wheels) != 1:
        say("wheel/ 里应有一个 attnbook 轮子，实际为 {}。".format([w.name for w in wheels]))
        return 1
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "--no-index",
         "--force-reinstall", wheels[0]], "安装 attnbook 轮子失败。")
    run([python, "-c", "import platform, attnbook, torch, jupyterlab; print('Python', "
         "platform.python_version(), '| torch', torch.__version__, '| attnbook', attnbook.__version__)"],
        "环境装好了，但导入失败（见上面的报错）。")
    if sys.platform.startswith("linux") and not chinese_font():
        say("")
        say("注意：这台电脑没有中文字体。网站（site/）自带字体，不受影响；但 JupyterLab 里的中文"
            "会显示成方框。请管理员装一个中文字体，例如 Debian/Ubuntu：sudo apt install fonts-noto-cjk；"
            "Fedora：sudo dnf install google-noto-sans-cjk-fonts。")
    start = r".venv\Scripts\jupyter lab" if WINDOWS else ".venv/bin/jupyter lab"
    say("")
    say("安装完成。启动 JupyterLab：在本文件夹（{}）里运行".format(KIT))
    say("    " + start)
    say("浏览器里左侧的文件列表就是本文件夹：学生打开 student/@FIRST_NOTEBOOK@。")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
