#!/bin/sh
# 安装运行本书笔记本的环境（Linux / macOS），详见 离线使用说明.html。在本文件夹里运行：
#   sh install_lab.sh                              从 PyPI（或环境变量 PIP_INDEX_URL 的镜像）安装
#   sh install_lab.sh https://镜像地址/simple      从校内镜像安装
#   PYTHON=/路径/python3.12 sh install_lab.sh      指定用哪个 Python（@PYTHON_MIN@ 或更新）
# 本文件夹里有 packages/（pip download 备好的轮子）时不联网，只从它安装。
# 这里只找 Python；建 .venv、安装、检查由 install_lab.py 完成（Windows 的 install_lab.bat 也调用它）。
set -eu
cd "$(dirname "$0")"

ok() {
    command -v "$1" >/dev/null 2>&1 &&
        "$1" -c 'import sys; sys.exit(sys.version_info < (@PYTHON_MIN_TUPLE@))' >/dev/null 2>&1
}

if [ -n "${PYTHON:-}" ]; then
    if ok "$PYTHON"; then
        exec "$PYTHON" install_lab.py "$@"
    fi
    echo "PYTHON=$PYTHON 不是 Python @PYTHON_MIN@ 或更新的版本。" >&2
    exit 1
fi
for py in python3.11 python3.12 python3.13 python3.14 python3 python; do
    if ok "$py"; then
        exec "$py" install_lab.py "$@"
    fi
done
echo "没有找到 Python @PYTHON_MIN@ 或更新的版本：先安装它，或用 PYTHON=/路径/python3 sh install_lab.sh 指定。" >&2
exit 1
