#!/usr/bin/env bash
# Run every notebook of the book on Colab's library versions (tests/colab-requirements.txt).
#
#   bash tools/colab_env_test.sh              # build .venv-colab if needed, then run
#   bash tools/colab_env_test.sh --rebuild    # start from a new .venv-colab
#   bash tools/colab_env_test.sh chapters/04_cat_eats_fish.ipynb   # only some notebooks
#   COLAB_VENV=/tmp/venv-colab bash tools/colab_env_test.sh          # the venv elsewhere
#
# 1. .venv-colab gets exactly the versions in tests/colab-requirements.txt (rebuilt when that
#    file changes).
# 2. attnbook is installed the way Colab's setup cell does it: a normal (non-editable) pip install
#    of the package with its declared dependencies, from a copy of the repository's package files
#    (Colab clones the repository; copying keeps build/ and egg-info out of the working tree).
# 3. tools/colab_env_test.py (run inside .venv-colab) checks that attnbook.Slider.widget() works
#    with ipywidgets 7.7 and redraws, then executes every notebook with ATTNBOOK_STATIC unset (a
#    live kernel, as in Colab: sliders become ipywidgets). Outputs are not compared and nothing
#    is written back; an error output or a missing-glyph warning fails.
# Prints the time each step took.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${COLAB_PYTHON:-python3.11}
# .venv-colab must stay out of the site build: _config.yml's exclude_patterns lists it.
VENV=${COLAB_VENV:-.venv-colab}
REQ=tests/colab-requirements.txt
STAMP=$VENV/.colab-requirements.txt

if [[ $VENV == .venv-colab ]] && ! grep -q "venv-colab" _config.yml; then
    echo "注意：_config.yml 的 exclude_patterns 没有列出 .venv-colab，建站时会把它当成书的内容" >&2
fi

if [[ "${1:-}" == "--rebuild" ]]; then
    rm -rf "$VENV"
    shift
fi

t0=$(date +%s)
if [[ ! -x $VENV/bin/python ]] || ! cmp -s "$REQ" "$STAMP"; then
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    # (the grep drops pip's notes about index folders this machine's pip.conf names but lacks)
    "$VENV/bin/python" -m pip install -q --upgrade pip 2> >(grep -v "is ignored" >&2)
    "$VENV/bin/python" -m pip install -q -r "$REQ" 2> >(grep -v "is ignored" >&2)
    cp "$REQ" "$STAMP"
fi
t1=$(date +%s)

# attnbook, as Colab installs it (non-editable, with dependencies: they are already satisfied, so
# a dependency bound that Colab's versions violate fails here).
src=$(mktemp -d)
run_dir=$(mktemp -d)
trap 'rm -rf "$src" "$run_dir"' EXIT
cp -r pyproject.toml README.md LICENSE attnbook "$src"/
find "$src" -name __pycache__ -prune -exec rm -rf {} +
"$VENV/bin/python" -m pip uninstall -q -y attnbook 2>/dev/null || true
if ! "$VENV/bin/python" -m pip install -q --no-cache-dir --no-build-isolation "$src" >"$run_dir/pip.log" 2>&1; then
    cat "$run_dir/pip.log"
    exit 1
fi
"$VENV/bin/python" -m pip check
t2=$(date +%s)

# run from an empty directory so that `import attnbook` finds the installed copy
venv_python=$(cd "$VENV" && pwd)/bin/python
(cd "$run_dir" && env -u ATTNBOOK_STATIC "$venv_python" "$OLDPWD/tools/colab_env_test.py" \
    --root "$OLDPWD" "$@")
t3=$(date +%s)

echo "Colab 环境：建立/检查 $VENV $((t1 - t0)) s，安装 attnbook $((t2 - t1)) s，运行 $((t3 - t2)) s"
