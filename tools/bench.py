"""``make bench``: measure build, test, page and code performance against the project's floors.

Prints a table and writes bench/report.md (with the machine described) and
bench/notebook_times.json (used by the teacher's guide). Timings are noisy: medians of repeats,
and ratios measured in the same run.

    python tools/bench.py            # everything (about 30 minutes on 2 cores)
    python tools/bench.py --quick    # skip the cold build, make test and the triple nbval
    python tools/bench.py --nbval-once   # everything, but not the triple nbval on the pinned venv (make test ran the notebooks once)
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = ROOT / ".venv" / "bin"
sys.path.insert(0, str(ROOT / "tools"))
from book import BOOK_ENV, NOTEBOOKS  # noqa: E402  the one list and environment
from execute_notebooks import execute  # noqa: E402
from make_pdf import CHROMIUM, CHROMIUM_ARGS  # noqa: E402  the browser the tests start

ENV = {**os.environ, **BOOK_ENV}


CPU_SECONDS = {"last": 0.0}  # user + system seconds of the processes the last run() waited for


def run(cmd: str) -> float:
    """Wall seconds of ``cmd``; its CPU seconds go to CPU_SECONDS["last"] (comparable across core counts)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, shell=True, cwd=ROOT, env=ENV, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU_SECONDS["last"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall


def machine() -> str:
    cpu = "unknown CPU"
    try:  # "AMD EPYC" names many generations: family/model/stepping tell them apart
        info = dict(line.split(":", 1) for line in Path("/proc/cpuinfo").read_text().split("\n\n")[0]
                    .splitlines() if ":" in line)
        info = {k.strip(): v.strip() for k, v in info.items()}
        cpu = (f"{info.get('model name', cpu)} (family {info.get('cpu family', '?')}, "
               f"model {info.get('model', '?')}, stepping {info.get('stepping', '?')})")
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    import torch

    return (f"{cpu}, {os.cpu_count()} cores, {mem:.0f} GiB RAM, {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}, torch {torch.__version__}, "
            f"PyTorch CPU kernels {torch.backends.cpu.get_cpu_capability()} "
            "(notebooks run torch on 1 thread via attnbook.setup(); the MHA ratio uses all cores)")


def kernel_floor(repeats: int = 3) -> float:
    """Kernel start + `import torch, matplotlib` in a fresh kernel (what every notebook pays)."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import torch, matplotlib.pyplot")])
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        NotebookClient(nb, kernel_name="python3", timeout=120).execute()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def notebook_times() -> dict[str, float]:
    out = {}
    for path in NOTEBOOKS:
        out[str(path.relative_to(ROOT))] = round(execute(path, write=False), 1)
    return out


def exempt_cells() -> dict[str, int]:
    """{notebook: number of cells tagged nbval-ignore-output} (each must assert its claim)."""
    import nbformat

    counts = {}
    for path in sorted(ROOT.glob("chapters/*.ipynb")) + sorted(ROOT.glob("appendix/*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        counts[path.relative_to(ROOT).as_posix()] = sum(
            "nbval-ignore-output" in c.metadata.get("tags", []) for c in nb.cells)
    return counts


def page_sizes() -> tuple[str, int, int]:
    site = ROOT / "_build" / "html"
    largest, largest_size, total = "", 0, 0
    for page in site.rglob("*.html"):
        rel = page.relative_to(site).as_posix()
        if rel.startswith(("_static/", "_sources/")):
            continue
        size = page.stat().st_size
        for img in re.findall(r'<img[^>]*src="(?!data:)([^"]+)"', page.read_text(encoding="utf-8")):
            target = (page.parent / img).resolve()
            if target.exists():
                size += target.stat().st_size
        if size > largest_size:
            largest, largest_size = rel, size
    for f in site.rglob("*"):
        if f.is_file():
            total += f.stat().st_size
    return largest, largest_size, total


def offsite_requests() -> int:
    """Load every page in headless Chromium, count requests to any other host."""
    import functools
    import http.server
    import threading

    from playwright.sync_api import sync_playwright

    site = ROOT / "_build" / "html"
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    handler = functools.partial(Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{httpd.server_address[1]}"
    offsite = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()

        def route(r):
            if r.request.url.startswith((base, "data:")):
                r.continue_()
            else:
                offsite.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        for html in sorted(site.rglob("*.html")):
            rel = html.relative_to(site).as_posix()
            if rel.startswith(("_static/", "_sources/")):
                continue
            page.goto(f"{base}/{rel}", wait_until="load")
            page.wait_for_timeout(200)
        browser.close()
    httpd.shutdown()
    return len(offsite)


def slider_redraw(n: int = 21) -> float:
    """Median time of n programmatic redraws of a live slider (uncached frames)."""
    import math

    import matplotlib.pyplot as plt
    import torch

    import attnbook

    attnbook.setup()
    d = attnbook.cat_eats_fish()

    def figure(q, scaled):
        Q = d["Q"].clone()
        Q[0, 0] = q
        s = Q @ d["K"].T / (math.sqrt(2) if scaled else 1.0)
        w = torch.softmax(s, dim=-1)
        fig, (a, b) = plt.subplots(1, 2, figsize=(7.2, 2.8), layout="constrained")
        attnbook.heatmap(w, row_labels=d["tokens"], col_labels=d["tokens"], ax=a, colorbar=False)
        b.bar(d["tokens"], w[0].numpy())
        return fig

    grid = [round(-1 + 0.2 * i, 1) for i in range(n)]
    box = attnbook.slider(figure, {"q": grid, "scaled": [True, False]}, initial={"q": grid[0]}).widget()
    times = []
    for index in range(1, n):
        start = time.perf_counter()
        box.attnbook_controls["q"].value = index
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def mha_ratio(repeats: int = 15) -> tuple[float, float]:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    import attnbook

    torch.set_num_threads(os.cpu_count() or 1)  # torch's default; setup() elsewhere sets 1
    torch.manual_seed(0)
    batch, n, d_model, heads = 8, 256, 512, 8
    ours = attnbook.MultiHeadSelfAttention(d_model, num_heads=heads).eval()
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    x = torch.randn(batch, n, d_model)

    def sdpa(x):
        Q, K, V = (ours.split_heads(w(x)) for w in (ours.W_q, ours.W_k, ours.W_v))
        out = F.scaled_dot_product_attention(Q, K, V)
        return ours.out_proj(out.transpose(1, 2).reshape(batch, n, d_model))

    fns = {"ours": lambda: ours(x), "ref": lambda: ref(x, x, x), "sdpa": lambda: sdpa(x)}
    times = {name: [] for name in fns}
    with torch.no_grad():
        torch.testing.assert_close(ours(x)[0], ref(x, x, x)[0], atol=1e-4, rtol=1e-4)
        for fn in fns.values():
            fn()  # warm-up
        # interleaved, so that allocator state and machine load fall on all three alike
        for _ in range(repeats):
            for name, fn in fns.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)
    med = {name: statistics.median(t) for name, t in times.items()}
    return med["ours"] / med["ref"], med["ours"] / med["sdpa"]


def nbval_three_times() -> list[bool]:
    """nbval on the pinned venv (.venv), over the source notebooks, three times: make test's notebook
    run compares them on Colab's library versions and the non-vectorised kernels; this one on the
    versions requirements.txt pins (what `make execute` and the site build use), and shows flakiness."""
    cmd = ("{bin}/python -m pytest -q -n 2 --dist loadfile --nbval --nbval-current-env "
           "--nbval-sanitize-with tests/nbval_sanitize.cfg {nbs}").format(
        bin=BIN, nbs=" ".join(str(p.relative_to(ROOT)) for p in NOTEBOOKS))
    results = []
    for _ in range(3):
        results.append(subprocess.run(cmd, shell=True, cwd=ROOT, env=ENV,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0)
    return results


def versions_section() -> list[str]:
    """The last `make test-versions` result (_build/versions/result.json), if there is one: not run here."""
    path = ROOT / "_build" / "versions" / "result.json"
    if not path.exists():
        return []
    result = json.loads(path.read_text(encoding="utf-8"))
    lines = ["", f"## Last `make test-versions` ({result['generated']}, not rerun by bench)", "",
             "| venv | torch | with | CPU kernels | notebooks passed | seconds |", "|---|---|---|---|---|---|"]
    for r in result["runs"]:
        failed = [name for name, nb in r["notebooks"].items() if not nb["ok"]]
        libs = ", ".join(f"{m} {r['versions'][m]}" for m in ("numpy", "pandas", "matplotlib"))
        lines.append(f"| {r['name']} | {r['torch']} | {libs} | {r['cpu_capability']} | {r['passed']}/{r['total']}"
                     f"{' (failed: ' + ', '.join(failed) + ')' if failed else ''} | {r['seconds']:.0f} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--nbval-once", action="store_true",
                        help="skip the three nbval runs on the pinned venv (make test runs the notebooks once)")
    args = parser.parse_args()
    # the notebooks timed here run in kernels of this process: the book's environment, as `make execute`
    # sets it (static sliders; ATTNBOOK_RECORD=0, so no attnbook_results.jsonl lands next to a notebook
    # for the nbval runs below to read back into the homework's report)
    os.environ.update(BOOK_ENV)
    rows = []

    def row(figure, value, floor, ok):
        mark = "✅" if ok is True else ("❌" if ok is False else "—")
        rows.append((figure, value, floor, mark))
        print(f"{mark} {figure}: {value}  (floor {floor})", flush=True)

    if not args.quick:
        run("rm -rf _build")
        t = run("make html")
        row("cold `make html` (all notebooks executed, venv present)",
            f"{t:.0f} s ({CPU_SECONDS['last']:.0f} CPU-s)", "≤ 240 s", t <= 240)
    t = run("make html")
    row("warm rebuild, nothing changed", f"{t:.1f} s", "≤ 20 s", t <= 20)
    if not args.quick:
        t = run("make test")
        row("`make test` (venv present)", f"{t:.0f} s ({CPU_SECONDS['last']:.0f} CPU-s)", "≤ 480 s", t <= 480)
        # the row above follows `make html`, so the site build inside `make test` finds Sphinx's
        # environment and rewrites nothing; a clean clone (CI) has no _build and builds every page
        run("rm -rf _build")
        t = run("make test")
        row("`make test` with no `_build` (as on CI's clean clone; venvs present)",
            f"{t:.0f} s ({CPU_SECONDS['last']:.0f} CPU-s)", "reported", None)

    times = notebook_times()
    (ROOT / "bench" / "notebook_times.json").write_text(
        json.dumps(times, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, seconds in times.items():
        row(f"notebook `{name}` top to bottom", f"{seconds:.1f} s", "≤ 60 s", seconds <= 60)
    for name, count in exempt_cells().items():
        part_1_to_3 = re.search(r"chapters/(0\d|1[01])_", name) is not None
        row(f"cells of `{name}` exempt from the nbval comparison (`nbval-ignore-output`)", str(count),
            "0 (Parts I–III)" if part_1_to_3 else "reported", count == 0 if part_1_to_3 else None)
    floor_s = kernel_floor()
    row("floor under every notebook: kernel start + `import torch, matplotlib`", f"{floor_s:.1f} s", "reported", None)

    largest, size, total = page_sizes()
    row(f"largest page with its images (`{largest}`)", f"{size / 1e6:.2f} MB", "≤ 3 MB", size <= 3e6)
    row("whole site `_build/html`", f"{total / 1e6:.1f} MB", "reported", None)
    n = offsite_requests()
    row("requests to other hosts, all pages", str(n), "0", n == 0)
    t = slider_redraw()
    row("live slider redraw, median of 20", f"{t * 1000:.0f} ms", "≤ 200 ms", t <= 0.2)
    # each in a fresh process: the heap left by the steps above shifts the ratio by up to 0.2
    ratios = [json.loads(subprocess.run(
        [sys.executable, "-c", "import json, sys; sys.path.insert(0, 'tools'); import bench; "
                               "print(json.dumps(bench.mha_ratio()))"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout) for _ in range(3)]
    r_mha = statistics.median(r[0] for r in ratios)
    r_sdpa = statistics.median(r[1] for r in ratios)
    spread = f"(3 processes: {', '.join(f'{r[0]:.2f}' for r in ratios)})"
    row("MultiHeadSelfAttention ÷ nn.MultiheadAttention forward", f"{r_mha:.2f} {spread}", "≤ 1.25", r_mha <= 1.25)
    row("MultiHeadSelfAttention ÷ SDPA with the same projections", f"{r_sdpa:.2f}", "reported", None)
    if args.nbval_once and not args.quick:
        row("nbval over all notebooks on the pinned venv, three runs in a row",
            "not run (--nbval-once; make test above ran the notebooks once, on Colab's versions)",
            "all green", None)
    elif not args.quick:
        runs = nbval_three_times()
        row("nbval over all notebooks on the pinned venv, three runs in a row",
            " / ".join("green" if r else "RED" for r in runs), "all green", all(runs))

    report = ["# make bench report", "", f"Machine: {machine()}", "",
              f"Generated by `tools/bench.py{' --quick' if args.quick else ''}{' --nbval-once' if args.nbval_once else ''}` on "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.", "",
              "| figure | measured | floor | |", "|---|---|---|---|"]
    report += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in rows]
    report += versions_section()
    (ROOT / "bench" / "report.md").write_text("\n".join(report) + "\n", encoding="utf-8")
    print("\n写入 bench/report.md")
    return 0 if all(r[3] != "❌" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
