# 《自注意力机制详解》 — two commands: `make html` builds the site, `make test` runs every check.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
# The environment notebooks run in: tools/book.py, the one place (it also holds the notebook list).
BOOK_ENV := $(shell $(PYTHON) tools/book.py --env)
JB_FLAGS := --builder html -W -n --keep-going
# GNU make >= 4 runs `make test`'s parts side by side with grouped output (--output-sync);
# GNU make 3.81 (macOS's) has no --output-sync, so it runs them one after the other.
ifeq ($(firstword $(sort $(MAKE_VERSION) 4)),4)
SIDE_BY_SIDE := -j6 --output-sync=target
else
SIDE_BY_SIDE :=
endif

# ipykernel 7 warns at every kernel start that it runs over TCP on localhost without encryption;
# one line per kernel would bury the build log, so it is dropped from stderr (nothing else is).
QUIET_KERNELS := 2> >(grep --line-buffered -v "running over TCP without encryption" >&2)

.PHONY: help install html html-noexec test test-nbval test-site test-unit test-lab test-built print-build test-versions lab execute slides pdf dist bench clean freeze

help:
	@echo "make html     建站（首次会建立 .venv 并安装依赖、执行全部笔记本）"
	@echo "make test     全部检查：单元测试、结构、nbval、建站、浏览器测试"
	@echo "make test-versions  在最老（pyproject 声称的下限）、固定、PyPI 最新三个 torch 上跑全部笔记本（下载几 GB，不属于 make test）"
	@echo "make lab      用 JupyterLab 打开读者版笔记本（notebooks/）"
	@echo "make execute  从头执行每个笔记本一次，把输出写回文件，再生成读者版"
	@echo "make student  学生版笔记本（无输出、无解答）：_build/student/"
	@echo "make slides   把每章做成 reveal.js 幻灯片（_build/html/slides/）"
	@echo "make pdf      可打印的全书：_build/pdf/自注意力机制详解.pdf"
	@echo "make dist     离线教学包：_build/dist/attnbook-offline-<版本>.zip（网站、笔记本、轮子、说明）"
	@echo "make bench    测量建站、测试、页面与代码性能，写入 bench/report.md"
	@echo "make clean    删除 _build"

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -r requirements.txt
	$(BIN)/python -m pip install -q --no-deps -e .
	touch $@

install: $(STAMP)

# The build executes notebooks through jupyter-cache (_build/.jupyter_cache), filled first by
# tools/prefill_cache.py with jupyter-cache's local-parallel executor (every core): a rebuild with
# nothing changed executes nothing.
html: install
	$(BOOK_ENV) $(BIN)/python tools/prefill_cache.py $(QUIET_KERNELS)
	$(BOOK_ENV) $(BIN)/jupyter-book build . $(JB_FLAGS) $(QUIET_KERNELS)
	$(BIN)/python tools/make_slides.py
	@echo ""
	@echo "网站已生成，用浏览器打开：file://$(CURDIR)/_build/html/index.html"

# The site from the notebooks' stored outputs (which nbval has just shown to equal a fresh run).
html-noexec: install
	ATTNBOOK_EXECUTE=off $(BIN)/jupyter-book build . $(JB_FLAGS)
	$(BIN)/python tools/make_slides.py

# Four parts side by side (each prints its log when it ends; a machine has 2 cores, so they share
# them): the notebook run (nbval re-executes every notebook, as Colab opens it, on Colab's library
# versions, and compares its stored outputs); the unit/structure tests; the JupyterLab test of the
# editions; and the site, slides, PDF and offline kit built from the stored outputs with their
# browser and install tests. `make test` passes only if all four do: a page built from outputs that
# nbval then rejects fails the test run all the same.
test: install
	$(MAKE) --no-print-directory $(SIDE_BY_SIDE) test-nbval test-unit test-lab test-built

# `make test TIMED=1` prints the wall and CPU seconds of each step (GNU time, /usr/bin/time).
TIME_CMD := $(if $(TIMED),/usr/bin/time -f "%e s wall; %U+%S s CPU: %C",)

# Everything but the two notebook runs: unit/structure tests, the JupyterLab test, the site, slides,
# PDF and kit built from the stored outputs and their browser and install tests.
test-site: test-unit test-lab test-built

test-unit: install
	$(TIME_CMD) $(BIN)/python -m pytest  # unit, structure, classroom, equivalence, teaching rule (pyproject: -m 'not site')

# The reader edition (committed) and the student edition opened in JupyterLab.
test-lab: student
	$(TIME_CMD) $(BIN)/python -m pytest -m site tests/site/test_jupyterlab.py

# The PDF's one-page build (its own output folder, so it runs beside html-noexec).
print-build: install
	$(TIME_CMD) $(BIN)/python tools/make_pdf.py --build-only

# Site, slides, PDF and kit: the PDF's one-page build (its own folder) is made beside the site's
# build; as soon as both are done, the browser tests of the site's pages and those of the slides start
# (two browsers, side by side); beside them the PDF is printed and the kit packed, then the PDF's tests
# and the kit's install test (a fresh venv) run. Each part prints its log at the end.
SITE_TESTS := tests/site --ignore=tests/site/test_jupyterlab.py --ignore=tests/site/test_dist.py \
	--ignore=tests/site/test_pdf.py --ignore=tests/site/test_slides.py
test-built: html-noexec print-build student
	@log=$$(mktemp -d); \
	$(TIME_CMD) $(BIN)/python -m pytest -m site $(SITE_TESTS) >$$log/site.log 2>&1 & site=$$!; \
	$(TIME_CMD) $(BIN)/python -m pytest -m site tests/site/test_slides.py >$$log/slides.log 2>&1 & slides=$$!; \
	{ $(TIME_CMD) $(BIN)/python tools/make_pdf.py --no-build && $(TIME_CMD) $(BIN)/python tools/make_dist.py; } \
	    >$$log/pack.log 2>&1; rp=$$?; \
	if [ $$rp -eq 0 ]; then \
	    $(TIME_CMD) $(BIN)/python -m pytest -m site tests/site/test_pdf.py >$$log/pdf.log 2>&1 & pdf=$$!; \
	    $(TIME_CMD) $(BIN)/python -m pytest -m site tests/site/test_dist.py >$$log/kit.log 2>&1; rk=$$?; \
	    wait $$pdf; rf=$$?; \
	fi; \
	wait $$site; rs=$$?; wait $$slides; rl=$$?; \
	echo "== PDF 与离线教学包的生成 =="; cat $$log/pack.log; \
	echo "== 网站的浏览器测试 =="; cat $$log/site.log; \
	echo "== 幻灯片的浏览器测试 =="; cat $$log/slides.log; \
	echo "== PDF 的测试 =="; cat $$log/pdf.log 2>/dev/null; \
	echo "== 离线教学包的安装测试 =="; cat $$log/kit.log 2>/dev/null; rm -rf $$log; \
	test $$rp -eq 0 -a $$rs -eq 0 -a $$rl -eq 0 -a $${rf:-1} -eq 0 -a $${rk:-1} -eq 0

# The notebook run (tools/colab_env_test.sh): every notebook of the reader edition (notebooks/, what
# Colab opens), with each code cell carrying the outputs its source cell stores, re-executed by nbval
# in .venv-colab (Colab's numpy, pandas, matplotlib, IPython, ipywidgets 7.7; tests/colab-requirements.txt)
# on PyTorch's non-vectorised CPU kernels (ATEN_CPU_CAPABILITY=default), not the ones `make execute`
# wrote the outputs with: every compared output (chapters 1–11 have no exempt cell) must come out digit
# for digit on another numeric path and other library versions. Before it, a live kernel checks that a
# slider draws and redraws under ipywidgets 7.7, as in Colab.
# ATTNBOOK_WORKERS=1: chapter 12's train_many trains on one process here (results are the same bit for
# bit, tests/unit/test_part4_training.py): the other parts of `make test` already share the cores, and
# more processes would only crowd chapter 15's timings.
test-nbval:
	ATTNBOOK_WORKERS=1 $(TIME_CMD) bash tools/colab_env_test.sh

# Three torch releases (the oldest pyproject.toml claims, requirements.txt's, the newest on PyPI), each in
# .venv-versions/<name>, every notebook on both CPU kernel sets; writes _build/versions/result.json.
# Not part of `make test`: PyPI's Linux torch wheels are CUDA builds of several GB. NB= as for execute.
test-versions:
	$(TIME_CMD) bash tools/versions_test.sh $(NB)

# The reader edition (notebooks/, generated from chapters/ by tools/editions.py): plain Jupyter
# Markdown with the numbers filled in and the solutions closed. The source notebooks in chapters/
# are the teacher's copy (open them with `jupyter lab chapters`).
lab: install
	$(BIN)/jupyter lab notebooks

execute: install
	$(BIN)/python tools/save.py
	$(BIN)/python tools/execute_notebooks.py $(NB) $(QUIET_KERNELS)
	$(BIN)/python tools/editions.py reader

# The notebook editions from chapters/: the reader edition (notebooks/, committed) and the student
# edition (_build/student/: no outputs, no solutions).
editions: install
	$(BIN)/python tools/editions.py reader

student: install
	$(BIN)/python tools/editions.py student --out _build/student

slides: install
	test -f _build/html/_static/mathjax/tex-chtml.js || $(MAKE) html
	$(BIN)/python tools/make_slides.py

# The printed book: Chromium prints the single-page build (from the stored outputs).
pdf: install
	$(BIN)/python tools/make_pdf.py

# The offline classroom kit: the built site (and the PDF if made), notebooks, wheel, pins, 离线使用说明.
dist: install
	test -f _build/html/index.html || $(MAKE) --no-print-directory html-noexec
	$(BIN)/python tools/make_dist.py

bench: install
	$(BIN)/python tools/bench.py $(QUIET_KERNELS)

clean:
	rm -rf _build

freeze: install
	$(BIN)/python -m pip freeze --exclude-editable | sed 's/^torch==2.13.0+cpu/torch==2.13.0/'
