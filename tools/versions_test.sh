#!/usr/bin/env bash
# `make test-versions`: run every notebook of the book on three PyTorch releases.
#
#   bash tools/versions_test.sh                       # oldest, pinned and newest; both CPU kernel sets
#   bash tools/versions_test.sh newest                # only some of the three
#   bash tools/versions_test.sh oldest chapters/15_when_not_to_use.ipynb   # only some notebooks
#   bash tools/versions_test.sh --rebuild newest      # new venvs (e.g. PyTorch has released again)
#   VERSIONS_ISA=default bash tools/versions_test.sh  # one CPU kernel set only (native | default)
#
# The three environments, each a venv in .venv-versions/<name> (Python 3.11, as the book's .venv):
#
#   oldest  the lower bound pyproject.toml claims (torch>=2.5): its oldest release, 2.5.0, with
#           numpy / pandas / matplotlib / pillow of its time (autumn 2024), numpy still 1.x.
#   pinned  requirements.txt's torch 2.13.0 with requirements.txt's numpy, pandas, matplotlib, …
#   newest  the newest torch on the package index (`pip index versions torch`, asked when the
#           venv is built) with the newest numpy, pandas, matplotlib, pillow.
#
# From PyPI, Linux torch is a CUDA build of several GB (nvidia-* wheels); it runs on the CPU here.
# This is why the target is not part of `make test`. The venvs stay (rebuilt when their list
# changes or with --rebuild); nothing is cached by pip.
#
# In each venv: attnbook is installed as Colab's setup cell does it (non-editable, build isolation,
# with its declared dependencies, from a copy of the package files; a bound in pyproject.toml that
# the versions violate fails here), then tools/versions_test.py runs every notebook (tools/book.py's
# NOTEBOOKS) twice, on the vectorised CPU kernels and on ATEN_CPU_CAPABILITY=default, with
# ATTNBOOK_STATIC=1 and PYTHONWARNINGS=error:Glyph:UserWarning. Outputs are not compared and
# nothing is written back; an error output fails. The result, per torch version and kernel set,
# per notebook pass/fail and seconds, goes to _build/versions/result.json (bench/report.md shows it).
set -euo pipefail
cd "$(dirname "$0")/.."
{  # read to the closing brace before running: editing this file mid-run cannot derail it

PYTHON=${VERSIONS_PYTHON:-python3.11}
ROOT_VENVS=.venv-versions      # _config.yml's exclude_patterns and .gitignore list it
OUT=_build/versions
ISAS=${VERSIONS_ISA:-native default}

OLDEST_TORCH=2.5.0
# The libraries of torch 2.5's time (autumn 2024; Colab then had about these): numpy 1.26, the last
# 1.x (torch 2.5's wheels take numpy 1.x and 2.x), pandas 2.2, matplotlib 3.8, pillow 10.4.
OLDEST_REQ="torch==$OLDEST_TORCH
numpy==1.26.4
pandas==2.2.2
matplotlib==3.8.0
pillow==10.4.0
ipywidgets==8.1.5"
KERNEL_REQ="ipykernel
nbclient
nbformat"

rebuild=0
names=()
notebooks=()
for arg in "$@"; do
    case $arg in
        --rebuild) rebuild=1 ;;
        oldest|pinned|newest) names+=("$arg") ;;
        *.ipynb) notebooks+=("$arg") ;;
        *) echo "不认识的参数：$arg（应为 oldest / pinned / newest、--rebuild 或笔记本路径）" >&2; exit 2 ;;
    esac
done
[[ ${#names[@]} -gt 0 ]] || names=(oldest pinned newest)

# The claimed lower bound and the oldest venv must agree: raising `torch>=` in pyproject.toml
# means choosing the companions of that release here too.
bound=$(sed -n 's/^ *"torch>=\([0-9.]*\)".*/\1/p' pyproject.toml)
if [[ $OLDEST_TORCH != "$bound".* && $OLDEST_TORCH != "$bound" ]]; then
    echo "pyproject.toml 声称 torch>=$bound，而本脚本的最老版本是 $OLDEST_TORCH：请一起改" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# This machine's pip.conf may carry a constraints file that caps torch at the release on its disk;
# the other releases must get through, so every install here uses an empty one.
: >"$tmp/no-constraints.txt"
export PIP_CONSTRAINT=$tmp/no-constraints.txt PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# pip's notes about find-links folders absent here, and that `pip index` is experimental
quiet() { "$@" 2> >(grep -v -e "is ignored" -e "pip index is currently an experimental" >&2); }
# ipykernel 7 warns at every kernel start that it runs over TCP without encryption (as in the Makefile)
quiet_kernels() { "$@" 2> >(grep --line-buffered -v "running over TCP without encryption" >&2); }

requirements() {  # the requirement list of one venv, on stdout
    case $1 in
        oldest) printf '%s\n%s\n' "$OLDEST_REQ" "$KERNEL_REQ" ;;
        pinned)
            grep -E -i '^(torch|numpy|pandas|matplotlib|pillow|ipywidgets|ipykernel|ipython|jupyter_client|traitlets|nbclient|nbformat)==' requirements.txt ;;
        newest)
            local newest
            newest=$(quiet "$PYTHON" -m pip index versions torch --python-version 3.11 --only-binary=:all: \
                     | sed -n 's/^torch (\([^)]*\)).*/\1/p')
            [[ -n $newest ]] || { echo "问不到包索引上最新的 torch" >&2; return 1; }
            printf 'torch==%s\nnumpy\npandas\nmatplotlib\npillow\nipywidgets\n%s\n' "${newest%%+*}" "$KERNEL_REQ" ;;
    esac
}

# attnbook as Colab installs it: a copy of the package files (keeps build/ and egg-info out of the tree)
src=$tmp/attnbook-src
mkdir -p "$src" "$OUT"
cp -r pyproject.toml README.md LICENSE attnbook "$src"/
find "$src" -name __pycache__ -prune -exec rm -rf {} +

runs=()
status=0
for name in "${names[@]}"; do
    venv=$ROOT_VENVS/$name
    t0=$(date +%s)
    requirements "$name" >"$tmp/req-$name.txt"
    if [[ $rebuild == 1 || ! -x $venv/bin/python ]] || ! cmp -s "$tmp/req-$name.txt" "$venv/.requirements.txt"; then
        echo "== $name：建立 $venv（$(grep '^torch' "$tmp/req-$name.txt")）"
        rm -rf "$venv"
        mkdir -p "$ROOT_VENVS"
        "$PYTHON" -m venv "$venv"
        quiet "$venv/bin/python" -m pip install -q --upgrade pip
        quiet "$venv/bin/python" -m pip install -q -r "$tmp/req-$name.txt"
        cp "$tmp/req-$name.txt" "$venv/.requirements.txt"
    fi
    t1=$(date +%s)
    "$venv/bin/python" -m pip uninstall -q -y attnbook 2>/dev/null || true
    if ! "$venv/bin/python" -m pip install -q "$src" >"$tmp/pip.log" 2>&1; then
        cat "$tmp/pip.log"
        status=1
        continue
    fi
    "$venv/bin/python" -m pip check
    t2=$(date +%s)
    echo "== $name：venv $((t1 - t0)) s，安装 attnbook $((t2 - t1)) s"

    venv_python=$(cd "$venv" && pwd)/bin/python
    for isa in $ISAS; do
        result=$(pwd)/$OUT/$name-$isa.json
        rm -f "$result"
        if [[ $isa == default ]]; then isa_env=(ATEN_CPU_CAPABILITY=default); else isa_env=(-u ATEN_CPU_CAPABILITY); fi
        # from an empty directory, so that `import attnbook` finds the installed copy
        (cd "$tmp" && quiet_kernels env "${isa_env[@]}" "$venv_python" "$OLDPWD/tools/versions_test.py" \
            --root "$OLDPWD" --name "$name" --out "$result" "${notebooks[@]}") || status=1
        [[ -f $result ]] && runs+=("$result")
    done
done

# _build/versions/result.json: this invocation's runs, merged into the previous result (a rerun of
# some notebooks, `versions_test.sh newest chapters/08_multi_head.ipynb`, updates those entries of
# that torch and kernel set; a run on another torch replaces its entry). Notebooks no longer in the
# book are dropped. Then a summary.
"$PYTHON" - "$OUT/result.json" "$(python3 tools/book.py --notebooks)" "${runs[@]}" <<'EOF'
import json, os, sys, time
out, book, parts = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
old = json.load(open(out, encoding="utf-8"))["runs"] if os.path.exists(out) else []
key = lambda r: (r["name"], r["ATEN_CPU_CAPABILITY"])
merged = {key(r): r for r in old}
for p in parts:
    run = json.load(open(p, encoding="utf-8"))
    before = merged.get(key(run))
    if before and before["torch"] == run["torch"]:
        run["notebooks"] = {**before["notebooks"], **run["notebooks"]}
    merged[key(run)] = run
runs = []
for run in merged.values():
    run["notebooks"] = {nb: r for nb, r in run["notebooks"].items() if nb in book}
    run["passed"] = sum(r["ok"] for r in run["notebooks"].values())
    run["total"] = len(run["notebooks"])
    run["seconds"] = round(sum(r["seconds"] for r in run["notebooks"].values()), 1)
    runs.append(run)
order = ["oldest", "pinned", "newest"]
runs.sort(key=lambda r: (order.index(r["name"]), r["ATEN_CPU_CAPABILITY"] or ""))
json.dump({"generated": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": runs},
          open(out, "w", encoding="utf-8"), indent=2, ensure_ascii=False)
print(f"\n{'环境':<8} {'torch':<16} {'CPU 内核':<10} {'通过':>7} {'秒':>7}   （{out}）")
for r in runs:
    failed = [nb for nb, x in r["notebooks"].items() if not x["ok"]]
    print(f"{r['name']:<8} {r['torch']:<16} {r['cpu_capability']:<10} "
          f"{r['passed']:>3}/{r['total']:<3} {r['seconds']:>7.0f}   {' '.join(failed)}")
EOF
exit $status
}
