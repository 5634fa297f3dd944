"""Chapter 12 (训练不稳定的排查清单): the batched training of many runs, and the chapter's figures.

The task is *copying*: the model reads ``x_1 … x_n SEP`` and must then write ``x_1 … x_n`` again,
one token at a time (a causal language model, loss only on the copied half). Random guessing
costs ln(num_symbols) nats per token; a model that has learned to copy gets close to 0.

Two ways to train, with the same mathematics:

- ``train_one`` — the plain PyTorch loop (``torch.optim.Adam``, ``clip_grad_norm_``) that
  the chapter shows (a ``#@save`` cell, so it lives in :mod:`attnbook.book`); one model, one seed.
- :func:`train_runs` — many runs of one architecture side by side in a single batched
  computation (``torch.func.vmap`` over stacked parameters, Adam and clipping written out per
  run). Each run has its own seed, learning rate, warmup and clipping. This is only a speed-up
  (the chapter checks that it agrees with :func:`train_one`); runs never interact.

Everything is seeded: the seed fixes both the initial weights and the stream of batches, so
two runs with the same seed and different settings see exactly the same data (a paired comparison).
"""
from __future__ import annotations

import atexit
import copy
import math
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
import torch

# The task, the model, the learning-rate schedule and the ruler are taught in chapter 12 (#@save cells).
from ..book import CopyTask, TinyTransformer, lr_at
from ..infra.errors import check_bool, check_int, check_positive, fail
from ..infra.runtime import torch_state


def _check_run(run: dict[str, Any]) -> dict[str, Any]:
    allowed = {"seed", "lr", "warmup", "clip", "bad_steps", "scale"}
    if not isinstance(run, dict) or not set(run) <= allowed or "seed" not in run:
        raise fail("runs", run, f"字典，键取自 {sorted(allowed)}，至少包含 seed，例如 {{'seed': 0, 'lr': 1e-3}}")
    out = {"lr": 1e-3, "warmup": 0, "clip": None, "bad_steps": (), **run}
    out["bad_steps"] = tuple(out["bad_steps"])
    if "scale" in out:
        check_bool(out["scale"], "scale", hint="（True 除以 √d_k，False 不除）")
    check_int(out["seed"], "seed", minimum=0)
    check_positive(out["lr"], "lr", hint="，例如 1e-3")
    check_int(out["warmup"], "warmup", minimum=0, hint="（预热的步数，0 表示不预热）")
    if out["clip"] is not None:
        check_positive(out["clip"], "clip", hint="（梯度范数的上限）或 None（不裁剪）")
    return out


@dataclass
class RunResult:
    """One training run: its settings, loss and gradient-norm (before clipping) at every step."""

    settings: dict[str, Any]
    loss: np.ndarray  # [steps]
    grad_norm: np.ndarray  # [steps]
    #: {step: {"m": ‖m̂‖, "sqrt_v": ‖√v̂‖, "update": ‖Δθ‖}} after the update of each watched step
    adam: dict[int, dict[str, float]] = field(default_factory=dict)
    #: the parameters at the end of training ({name: tensor}, a TinyTransformer state_dict), or None
    #: unless train_runs(..., keep_params=True)
    params: dict[str, torch.Tensor] | None = None

    @property
    def diverged(self) -> bool:
        """NaN/inf appeared in the loss."""
        return not bool(np.isfinite(self.loss).all())

    def final_loss(self, last: int = 20) -> float:
        """Mean loss over the last ``last`` steps (inf if the run diverged)."""
        tail = self.loss[-last:]
        return float(tail.mean()) if np.isfinite(tail).all() else math.inf


def train_runs(model_kwargs: dict, runs: Sequence[dict[str, Any]], steps: int = 200, batch: int = 16,
               task: CopyTask = CopyTask(), betas: tuple[float, float] = (0.9, 0.999),
               eps: float = 1e-8, watch: Sequence[int] = (), keep_params: bool = False) -> list[RunResult]:
    """Train ``len(runs)`` TinyTransformers of one architecture side by side.

    Args:
        model_kwargs: keyword arguments of :class:`TinyTransformer` (all runs share them).
        runs: one dict per run: {"seed": int, "lr": float = 1e-3, "warmup": int = 0, "clip": float | None = None,
            "bad_steps": tuple = (), "scale": bool (optional; overrides model_kwargs, may differ between runs)}.
        steps, batch, task: as in ``train_one``.
        watch: steps after whose update Adam's state is recorded in ``RunResult.adam``: the norms of the
            bias-corrected first moment m̂, of √v̂ (second moment) and of the update lr·m̂/(√v̂+eps).
        keep_params: store each run's parameters at the end of training in ``RunResult.params`` (a
            state_dict: ``TinyTransformer(...).load_state_dict(result.params)`` rebuilds the model).

    Each run equals ``train_one(model_kwargs, **run, steps=steps, batch=batch, task=task)`` up to
    floating-point rounding. Internally the parameters of all runs are stacked ([runs, ...]) and the
    model is evaluated with ``torch.func.vmap``; Adam and clipping are applied per run.
    """
    with torch_state(threads=1):  # the reader's generator and thread count are left as they were
        return _train_runs(model_kwargs, runs, steps, batch, task, betas, eps, tuple(watch), bool(keep_params))


def train_many(jobs: Sequence[dict[str, Any]], workers: int | None = None) -> list[list[RunResult]]:
    """Several independent :func:`train_runs` calls, on as many processes as the machine has cores.

    Args:
        jobs: one dict of :func:`train_runs` keyword arguments per call (``model_kwargs``, ``runs``, ``steps``, …).
            Put the longest job first: the jobs are handed out in this order.
        workers: processes to use (default: the environment variable ``ATTNBOOK_WORKERS`` if set, else the cores
            this process may run on; at most ``len(jobs)``). ``make test`` sets ATTNBOOK_WORKERS=1: it already runs
            two notebook executions side by side on the machine's cores.

    Returns ``[train_runs(**job) for job in jobs]``, bit for bit: each call trains on one thread with its own
    seeds, whichever process runs it (tests/unit/test_part4_training.py checks it). On one core, or with
    ``workers=1``, the calls simply run one after another in this process.
    """
    jobs = [dict(job) for job in jobs]
    for job in jobs:
        if not {"model_kwargs", "runs"} <= set(job):
            raise fail("jobs", job, "train_runs 的关键字参数组成的字典，至少有 model_kwargs 和 runs")
    if workers is None:
        setting = os.environ.get("ATTNBOOK_WORKERS", "").strip()
        workers = int(setting) if setting.isdigit() and int(setting) > 0 else _cores()
    check_int(workers, "workers", minimum=1)
    workers = min(workers, len(jobs))
    if workers <= 1:
        return [train_runs(**job) for job in jobs]
    pool = _pool(workers)
    futures = [pool.submit(train_runs, **job) for job in jobs]
    try:
        return [future.result() for future in futures]
    except BaseException:  # an interrupted kernel (■) or a failed job: stop the other jobs too
        _POOLS.pop(workers, None)
        for process in list(getattr(pool, "_processes", {}).values()):
            process.terminate()
        pool.shutdown(wait=False, cancel_futures=True)
        raise


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


_POOLS: dict[int, Any] = {}


def _pool(workers: int):
    """A process pool kept for the kernel's lifetime (starting one costs an import of torch per process)."""
    if workers not in _POOLS:
        # spawn: a fresh interpreter, safe in a Jupyter kernel and the same on Linux, macOS and Windows
        _POOLS[workers] = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                              initializer=_ignore_interrupts)
        atexit.register(_POOLS[workers].shutdown)  # while the interpreter is whole (no "Exception ignored" at exit)
    return _POOLS[workers]


def _ignore_interrupts() -> None:
    """In a worker: Ctrl-C / the kernel's interrupt reach the whole process group; the kernel decides (above)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _train_runs(model_kwargs, runs, steps, batch, task, betas, eps, watch=(), keep_params=False):
    if not runs:
        raise fail("runs", runs, "至少一个训练配置")
    runs = [_check_run(dict(r)) for r in runs]
    from torch.func import functional_call, stack_module_state, vmap

    models = []
    for run in runs:
        kwargs = {**model_kwargs, **({"scale": run["scale"]} if "scale" in run else {})}
        with torch_state(seed=run["seed"], threads=None):  # = train_one's torch.manual_seed(seed)
            models.append(TinyTransformer(task.vocab_size, max_len=task.seq_len, **kwargs))
    params, buffers = stack_module_state(models)  # each parameter: [runs, ...]
    skeleton = copy.deepcopy(models[0]).to("meta")

    def forward(p, b, tokens):  # one run: tokens [batch, 2n] -> logits [batch, 2n, vocab_size]
        return functional_call(skeleton, (p, b), (tokens,), tie_weights=False)  # 模型里没有共享的权重

    data = {}
    for run in runs:
        key = (run["seed"], run["bad_steps"])
        if key not in data:
            data[key] = task.batches(run["seed"], steps, batch, run["bad_steps"])
    inputs = torch.stack([data[r["seed"], r["bad_steps"]][0] for r in runs], dim=1)  # [steps, runs, batch, 2n]
    targets = torch.stack([data[r["seed"], r["bad_steps"]][1] for r in runs], dim=1)

    n_runs = len(runs)
    # 所有参数拼成一块 flat [runs, P]：每个 run 一行；模型用的是它的视图
    shapes = {k: p.shape[1:] for k, p in params.items()}
    sizes = [math.prod(shape) for shape in shapes.values()]
    flat = torch.cat([p.detach().reshape(n_runs, -1) for p in params.values()], dim=1)  # [runs, P]
    beta1, beta2 = betas
    m = torch.zeros_like(flat)  # Adam 一阶矩
    v = torch.zeros_like(flat)  # Adam 二阶矩
    denom, update = torch.empty_like(flat), torch.empty_like(flat)  # 每步复用的缓冲区
    clip = torch.tensor([r["clip"] if r["clip"] is not None else math.inf for r in runs])[:, None]  # [runs, 1]
    lrs = torch.tensor([[lr_at(step, r["lr"], r["warmup"]) for r in runs] for step in range(steps)])  # [steps, runs]
    losses = torch.empty(steps, n_runs)
    grad_norms = torch.empty(steps, n_runs)
    batched_forward = vmap(forward)
    adam = [{} for _ in runs]

    for step in range(steps):
        flat.requires_grad_(True)
        pieces = flat.split(sizes, dim=1)
        p = {k: piece.view(n_runs, *shape) for (k, shape), piece in zip(shapes.items(), pieces)}
        logits = batched_forward(p, buffers, inputs[step])  # [runs, batch, 2n, vocab_size]
        loss = task.loss(logits, targets[step])  # [runs]
        (grad,) = torch.autograd.grad(loss.sum(), [flat])  # [runs, P]；各 run 互不相干，求和即各自的梯度
        with torch.no_grad():  # Adam, written in place (the buffers are [runs, P]; fewer passes over memory)
            flat = flat.detach()  # the graph is gone, so the parameters may be updated in place
            norm = grad.norm(dim=1, keepdim=True)  # [runs, 1]，裁剪前的梯度范数
            grad.mul_((clip / (norm + 1e-6)).clamp(max=1.0))  # 与 clip_grad_norm_ 相同
            m.mul_(beta1).add_(grad, alpha=1 - beta1)
            v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias1 = 1 - beta1 ** (step + 1)
            bias2 = 1 - beta2 ** (step + 1)
            torch.sqrt(v, out=denom).div_(math.sqrt(bias2)).add_(eps)  # √v̂ + ε
            torch.div(m, denom, out=update).mul_(lrs[step, :, None] / bias1)  # η·m̂ / (√v̂ + ε)
            flat.sub_(update)
            if step in watch:
                m_norm = (m / bias1).norm(dim=1)
                v_norm = (v / bias2).sqrt().norm(dim=1)
                u_norm = update.norm(dim=1)
                for i in range(n_runs):
                    adam[i][step] = {"m": float(m_norm[i]), "sqrt_v": float(v_norm[i]), "update": float(u_norm[i])}
        losses[step] = loss.detach()
        grad_norms[step] = norm[:, 0]
    final = [None] * n_runs
    if keep_params:  # 每个 run 的参数：从 flat [runs, P] 里切回各自的形状
        pieces = flat.detach().split(sizes, dim=1)
        final = [{k: piece[i].reshape(shape).clone() for (k, shape), piece in zip(shapes.items(), pieces)}
                 for i in range(n_runs)]
    return [RunResult(settings={**model_kwargs, **run}, loss=losses[:, i].numpy().copy(),
                      grad_norm=grad_norms[:, i].numpy().copy(), adam=adam[i], params=final[i])
            for i, run in enumerate(runs)]


def summarize(results: Sequence[RunResult], key: str = "loss") -> dict[str, np.ndarray]:
    """Across runs (e.g. seeds): {"min", "median", "max"} of ``key`` at every step, each [steps]."""
    stack = np.stack([getattr(r, key) for r in results])  # [runs, steps]
    return {"min": stack.min(0), "median": np.median(stack, 0), "max": stack.max(0)}


# ---------------------------------------------------------------------------------------------
# Figures (pure: data in, Figure/Axes out)
# ---------------------------------------------------------------------------------------------
def plot_band(results: Sequence[RunResult], *, ax=None, key: str = "loss", label: str | None = None,
              color: str | None = None, log: bool = False, smooth: int = 1):
    """Median over runs (line) and min–max band (shaded) of ``key`` at every step. Returns the Axes.

    smooth: moving-average window applied to every run before taking min/median/max (1 = none).
    """
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    stack = np.stack([getattr(r, key) for r in results]).astype(float)  # [runs, steps]
    if smooth > 1:
        kernel = np.ones(smooth) / smooth
        stack = np.stack([np.convolve(row, kernel, mode="valid") for row in stack])
    steps = np.arange(stack.shape[1]) + (smooth - 1)
    with np.errstate(invalid="ignore"):
        lo, mid, hi = np.nanmin(stack, 0), np.nanmedian(stack, 0), np.nanmax(stack, 0)
    line, = ax.plot(steps, mid, color=color, label=label, lw=1.6)
    ax.fill_between(steps, lo, hi, color=line.get_color(), alpha=0.25, lw=0)
    if log:
        ax.set_yscale("log")
        ax.minorticks_off()  # 对数轴的次刻度：滑块每一帧都要排版它们，占了画图时间的大半
    ax.set_xlabel("训练步数")
    return ax


_COLORS = {"pre": "#4C78A8", "post": "#E45756", True: "#4C78A8", False: "#E45756",
           "off": "#9D9D9D", "on": "#F58518"}


def scaling_figure(results: dict, d_k: int, lr: float, *, task: CopyTask = CopyTask()):
    """Loss with and without √d_k for one d_k and learning rate. results[(d_k, scale, lr)] -> RunResults (seeds)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    for scale, label in ((True, "除以 √d_k"), (False, "不除以 √d_k")):
        plot_band(results[d_k, scale, lr], ax=ax, label=label, color=_COLORS[scale])
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label=f"均匀猜测 ln {task.num_symbols}")
    ax.set_ylim(0, 3.1)  # room above the curves for the legend, one row
    ax.set_ylabel("复制部分的交叉熵")
    n = len(results[d_k, True, lr])
    ax.set_title(f"d_k = {d_k}，学习率 {lr:g}：{n} 个种子的中位数（线）与范围（阴影）")
    ax.legend(loc="upper center", ncol=3, fontsize=10, frameon=False, columnspacing=1.2, handlelength=1.6)
    return fig


def lr_sweep_figure(results: dict, d_ks: Sequence[int], lrs: Sequence[float], *, task: CopyTask = CopyTask()):
    """Final loss against learning rate, one panel per d_k, with and without √d_k.

    results[(d_k, scale, lr)] -> RunResults (seeds); each point is one seed, the line joins the medians.
    """
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(d_ks), figsize=(3.2 * len(d_ks), 2.9), layout="constrained", sharey=True)
    axes = np.atleast_1d(axes)
    for ax, d_k in zip(axes, d_ks):
        for k, (scale, label) in enumerate(((True, "除以 √d_k"), (False, "不除以 √d_k"))):
            finals = [[r.final_loss() for r in results[d_k, scale, lr]] for lr in lrs]
            ax.plot(lrs, [np.median(f) for f in finals], color=_COLORS[scale], lw=1.6, label=label)
            for lr, f in zip(lrs, finals):
                ax.scatter([lr * (0.93 if k == 0 else 1.07)] * len(f), f, color=_COLORS[scale], s=12, alpha=0.7)
        ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1)
        ax.set_xscale("log")
        ax.set_xticks(lrs, [f"{lr:g}" for lr in lrs])
        ax.minorticks_off()
        ax.set_xlabel("学习率")
        ax.set_title(f"d_k = {d_k}")
        ax.set_ylim(-0.05, 2.4)
    axes[0].set_ylabel("最后 20 步的平均损失")
    axes[0].legend(loc="lower left", fontsize=10)
    return fig


def norm_warmup_figure(results: dict, num_layers: int, warmup: int, *, task: CopyTask = CopyTask()):
    """Pre-Norm vs Post-Norm loss for one depth and warmup. results[(norm, num_layers, warmup)] -> runs."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    for norm, label in (("pre", "Pre-Norm"), ("post", "Post-Norm")):
        runs = results.get((norm, num_layers, warmup)) or results[norm, num_layers, 0]  # 没有这组预热时画不预热的
        plot_band(runs, ax=ax, label=label + ("" if (norm, num_layers, warmup) in results else "（不预热）"),
                  color=_COLORS[norm])
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label=f"均匀猜测 ln {task.num_symbols}")
    if warmup:
        ax.axvspan(0, warmup, color="0.85", lw=0, zorder=0)
    ax.set_ylim(0, 2.6)
    ax.set_ylabel("复制部分的交叉熵")
    lr = results["post", num_layers, warmup][0].settings["lr"]
    ax.set_title(f"{num_layers} 层，学习率 {lr:g}，" + (f"前 {warmup} 步线性预热（灰底）" if warmup else "不预热"))
    ax.legend(loc="upper right", fontsize=10)
    return fig


def depth_summary_figure(results: dict, settings: Sequence[tuple[int, int]], *, task: CopyTask = CopyTask()):
    """Final loss (mean of the last 20 steps) of every seed, Pre-Norm and Post-Norm, for each
    (num_layers, warmup) in ``settings``, with the chance loss ln(num_symbols) as a dotted line.
    results[(norm, num_layers, warmup)] -> RunResults."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 2.8), layout="constrained")
    for k, (norm, label) in enumerate((("pre", "Pre-Norm"), ("post", "Post-Norm"))):
        for j, (depth, warmup) in enumerate(settings):
            if (norm, depth, warmup) not in results:
                continue
            finals = [r.final_loss() for r in results[norm, depth, warmup]]
            x = j + (k - 0.5) * 0.25 + np.linspace(-0.05, 0.05, len(finals))
            ax.scatter(x, finals, color=_COLORS[norm], s=22, label=label if j == 0 else None)
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label=f"均匀猜测 ln {task.num_symbols}")
    ax.set_xticks(range(len(settings)),
                  [f"{d} 层" + (f"\n预热 {w} 步" if w else "\n不预热") for d, w in settings])
    ax.set_ylim(-0.05, 2.4)
    ax.set_ylabel("最后 20 步的平均损失")
    ax.legend(loc="lower right", fontsize=10, ncol=3)
    return fig


def horizon_figure(results: dict, *, shade: int = 0, smooth: int = 10, task: CopyTask = CopyTask()):
    """Loss of a few groups of runs over the whole training, one band per group (median line,
    min–max shading over seeds, ``smooth``-step moving average), the chance loss dotted and the
    first ``shade`` steps on a grey background. results: {label: [RunResult, ...]}. Returns the Figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    colors = ["#E45756", "#F58518", "#4C78A8", "#54A24B"]
    for (label, runs), color in zip(results.items(), colors):
        plot_band(runs, ax=ax, label=label, color=color, smooth=smooth)
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label=f"均匀猜测 ln {task.num_symbols}")
    if shade:
        ax.axvspan(0, shade, color="0.85", lw=0, zorder=0)
    ax.set_ylim(0, 2.6)
    ax.set_ylabel(f"损失（{smooth} 步滑动平均）")
    ax.legend(loc="upper right", fontsize=10)
    return fig


def clipping_figure(results: dict, seed: int, max_norm: float, *, bad_steps: Sequence[int] = (),
                    window: tuple[int, int] | None = None):
    """Gradient norm (top) and loss (bottom) of one seed, clipping off vs on at ``max_norm``.

    results[clip] -> list of RunResult (one per seed, in seed order), clip None = off.
    """
    import matplotlib.pyplot as plt

    fig, (ax_g, ax_l) = plt.subplots(2, 1, figsize=(6, 3.8), layout="constrained", sharex=True)
    for clip, label, color in ((None, "不裁剪", _COLORS["off"]), (max_norm, f"裁剪 max_norm={max_norm:g}", _COLORS["on"])):
        run = next(r for r in results[clip] if r.settings["seed"] == seed)
        steps = np.arange(len(run.loss))
        ax_g.plot(steps, run.grad_norm, color=color, lw=1.2, label=label)
        ax_l.plot(steps, run.loss, color=color, lw=1.2, label=label)
    ax_g.axhline(max_norm, color=_COLORS["on"], ls="--", lw=0.8)
    for ax in (ax_g, ax_l):
        ax.set_yscale("log")
        ax.minorticks_off()  # 次刻度排版很慢，滑块的每一帧都要画
        for s in bad_steps:
            ax.axvline(s, color="0.6", lw=4, alpha=0.3, zorder=0)
    if window is not None:
        ax_l.set_xlim(*window)
    ax_g.set_ylabel("梯度范数\n（裁剪前）")
    ax_l.set_ylabel("损失")
    ax_l.set_xlabel("训练步数（灰条：脏数据批次）")
    ax_g.set_title(f"种子 {seed}")
    ax_g.legend(loc="upper left", fontsize=10, ncol=2)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    'clipping_figure',
    'depth_summary_figure',
    'horizon_figure',
    'lr_sweep_figure',
    'norm_warmup_figure',
    'scaling_figure',
    'train_many',
    'train_runs',
)
