#!/usr/bin/env bash
# The book's notebook run: every notebook, as Colab's reader opens it (the reader edition,
# notebooks/), on Colab's library versions (tests/colab-requirements.txt), re-executed by nbval and
# compared with the outputs the source notebooks store.
#
#   bash tools/colab_env_test.sh              # build .venv-colab if needed, then run
#   bash tools/colab_env_test.sh --rebuild    # start from a new .venv-colab
#   bash tools/colab_env_test.sh chapters/04_cat_eats_fish.ipynb   # only some notebooks
#   COLAB_VENV=/tmp/venv-colab bash tools/colab_env_test.sh          # the venv elsewhere
#
# 1. .venv-colab gets exactly the versions in tests/colab-requirements.txt (rebuilt when that
#    file changes), plus nbval and pytest, which run the notebooks.
# 2. attnbook is installed the way Colab's setup cell does it: a normal (non-editable) pip install
#    of the package with its declared dependencies, from a copy of the repository's package files
#    (Colab clones the repository; copying keeps build/ and egg-info out of the working tree).
# 3. tools/colab_env_test.py (run inside .venv-colab) checks that attnbook.Slider.widget() works
#    with ipywidgets 7.7 in a live kernel and redraws, then writes the run edition: the reader
#    edition's cells, each code cell with the outputs its source cell stores (a reader edition
#    whose code is not the source's fails here).
# 4. nbval, in .venv-colab, executes every run-edition notebook top to bottom (two at a time, each
#    in its own kernel: NBVAL_WORKERS=2, pytest-xdist's loadfile; the longest first) and compares each
#    output with the stored one (tests/nbval_sanitize.cfg: only truly volatile text is replaced),
#    in the book's environment (tools/book.py: sliders as precomputed frames, a missing glyph is an
#    error) and on PyTorch's non-vectorised CPU kernels (ATEN_CPU_CAPABILITY=default), which are
#    not the ones `make execute` wrote the outputs with: every compared output must come out digit
#    for digit on another numeric path and another set of library versions.
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

# the slider check and the run edition, from an empty directory (`import attnbook` finds the
# installed copy); then nbval runs the run edition there, in the book's environment
venv_python=$(cd "$VENV" && pwd)/bin/python
(cd "$run_dir" && env -u ATTNBOOK_STATIC "$venv_python" "$OLDPWD/tools/colab_env_test.py" \
    --root "$OLDPWD" --prepare "$run_dir/book" "$@")
t3=$(date +%s)
rc=0
# (the sanitizer file is copied in, so that every path pytest sees is in the run folder: its
# rootdir, with no configuration file of the repository's)
cp tests/nbval_sanitize.cfg "$run_dir/book/"
# a kernel that dies while starting (as when another process takes its port first) is started again:
# tests/nbval_kernel_start.py, as the run folder's conftest.py
cp tests/nbval_kernel_start.py "$run_dir/book/conftest.py"
(cd "$run_dir/book" && env $(python3 "$OLDPWD/tools/book.py" --env) ATEN_CPU_CAPABILITY=default \
    PYDEVD_DISABLE_FILE_VALIDATION=1 "$venv_python" -m pytest -p no:cacheprovider --nbval \
    --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg -n "${NBVAL_WORKERS:-2}" --dist loadfile \
    $(cat notebooks.txt)) || rc=$?
t4=$(date +%s)

echo "Colab 环境：建立/检查 $VENV $((t1 - t0)) s，安装 attnbook $((t2 - t1)) s，滑块检查与运行版 $((t3 - t2)) s，nbval $((t4 - t3)) s"
exit $rc
