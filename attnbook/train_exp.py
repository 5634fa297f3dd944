"""Training experiments of chapter 11 (训练不稳定的排查清单), small enough for a laptop CPU.

The task is *copying*: the model reads ``x_1 … x_n SEP`` and must then write ``x_1 … x_n`` again,
one token at a time (a causal language model, loss only on the copied half). Random guessing
costs ln(num_symbols) nats per token; a model that has learned to copy gets close to 0.

Two ways to train, with the same mathematics:

- :func:`train_one` — the plain PyTorch loop (``torch.optim.Adam``, ``clip_grad_norm_``) that
  the chapter shows; one model, one seed.
- :func:`train_runs` — many runs of one architecture side by side in a single batched
  computation (``torch.func.vmap`` over stacked parameters, Adam and clipping written out per
  run). Each run has its own seed, learning rate, warmup and clipping. This is only a speed-up
  (the chapter checks that it agrees with :func:`train_one`); runs never interact.

Everything is seeded: the seed fixes both the initial weights and the stream of batches, so
two runs with the same seed and different settings see exactly the same data (a paired comparison).
"""
from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ._errors import fail
from .transformer import TinyTransformer
from ._threads import one_thread

__all__ = ["CopyTask", "RunResult", "clipping_figure", "depth_summary_figure", "layer_report", "lr_at",
           "norm_warmup_figure", "plot_band", "scaling_figure", "summarize", "train_runs"]


@dataclass(frozen=True)
class CopyTask:
    """Copy ``n`` random symbols after a separator.

    Tokens: symbols 0 … num_symbols-1, separator SEP = num_symbols; vocab_size = num_symbols + 1.
    A full sequence is ``x_1 … x_n SEP x_1 … x_n`` (length 2n + 1). The model input is its first
    2n tokens, the target the last 2n (next-token prediction); only the last n targets (the copy)
    count in the loss.
    """

    n: int = 6
    num_symbols: int = 8

    @property
    def vocab_size(self) -> int:
        return self.num_symbols + 1

    @property
    def seq_len(self) -> int:
        """Length of the model input: 2n."""
        return 2 * self.n

    @property
    def chance_loss(self) -> float:
        """Cross-entropy of a uniform guess over the symbols: ln(num_symbols)."""
        return math.log(self.num_symbols)

    def batches(self, seed: int, steps: int, batch: int,
                bad_steps: Sequence[int] = ()) -> tuple[torch.Tensor, torch.Tensor]:
        """All batches of one run: (inputs, targets), each long [steps, batch, 2n].

        bad_steps: steps whose batch is "dirty data": the copied half of the targets is replaced
        by random symbols (a reproducible way to provoke a loss spike).
        """
        g = torch.Generator().manual_seed(10_000 + seed)
        x = torch.randint(0, self.num_symbols, (steps, batch, self.n), generator=g)
        sep = torch.full((steps, batch, 1), self.num_symbols)
        full = torch.cat([x, sep, x], dim=-1)  # [steps, batch, 2n + 1]
        inputs, targets = full[..., :-1], full[..., 1:].clone()
        for step in bad_steps:
            if not 0 <= step < steps:
                raise fail("bad_steps", list(bad_steps), f"0 到 steps-1={steps - 1} 之间的步数")
            targets[step, :, self.n:] = torch.randint(0, self.num_symbols, (batch, self.n), generator=g)
        return inputs, targets

    def loss(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """Mean cross-entropy over the copied half. logits [..., batch, 2n, vocab_size]; targets [..., batch, 2n].

        Returns [...] (one loss per leading index, e.g. per run).
        """
        lead = logits.shape[:-3]
        logits = logits[..., self.n:, :]  # [..., batch, n, vocab_size]
        targets = targets[..., self.n:]  # [..., batch, n]
        ce = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), reduction="none")
        return ce.view(*lead, -1).mean(dim=-1)




def lr_at(step: int, lr: float, warmup: int) -> float:
    """Learning rate of step ``step`` (0-based): linear warmup from lr/warmup to lr, then constant."""
    if warmup <= 0:
        return lr
    return lr * min(1.0, (step + 1) / warmup)


def _check_run(run: dict[str, Any]) -> dict[str, Any]:
    allowed = {"seed", "lr", "warmup", "clip", "bad_steps", "scale"}
    if not isinstance(run, dict) or not set(run) <= allowed or "seed" not in run:
        raise fail("runs", run, f"字典，键取自 {sorted(allowed)}，至少包含 seed，例如 {{'seed': 0, 'lr': 1e-3}}")
    out = {"lr": 1e-3, "warmup": 0, "clip": None, "bad_steps": (), **run}
    out["bad_steps"] = tuple(out["bad_steps"])
    if "scale" in out and not isinstance(out["scale"], bool):
        raise fail("scale", out["scale"], "True（除以 √d_k）或 False（不除）")
    if not isinstance(out["seed"], int) or out["seed"] < 0:
        raise fail("seed", out["seed"], "非负整数")
    if not out["lr"] > 0:
        raise fail("lr", out["lr"], "正数，例如 1e-3")
    if not isinstance(out["warmup"], int) or out["warmup"] < 0:
        raise fail("warmup", out["warmup"], "非负整数（预热的步数，0 表示不预热）")
    if out["clip"] is not None and not out["clip"] > 0:
        raise fail("clip", out["clip"], "正数（梯度范数的上限）或 None（不裁剪）")
    return out


@dataclass
class RunResult:
    """One training run: its settings, loss and gradient-norm (before clipping) at every step."""

    settings: dict[str, Any]
    loss: np.ndarray  # [steps]
    grad_norm: np.ndarray  # [steps]

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
               eps: float = 1e-8) -> list[RunResult]:
    """Train ``len(runs)`` TinyTransformers of one architecture side by side.

    Args:
        model_kwargs: keyword arguments of :class:`TinyTransformer` (all runs share them).
        runs: one dict per run: {"seed": int, "lr": float = 1e-3, "warmup": int = 0, "clip": float | None = None,
            "bad_steps": tuple = (), "scale": bool (optional; overrides model_kwargs, may differ between runs)}.
        steps, batch, task: as in :func:`train_one`.

    Each run equals ``train_one(model_kwargs, **run, steps=steps, batch=batch, task=task)`` up to
    floating-point rounding. Internally the parameters of all runs are stacked ([runs, ...]) and the
    model is evaluated with ``torch.func.vmap``; Adam and clipping are applied per run.
    """
    with one_thread():
        return _train_runs(model_kwargs, runs, steps, batch, task, betas, eps)


def _train_runs(model_kwargs, runs, steps, batch, task, betas, eps):
    if not runs:
        raise fail("runs", runs, "至少一个训练配置")
    runs = [_check_run(dict(r)) for r in runs]
    from torch.func import functional_call, stack_module_state, vmap

    models = []
    for run in runs:
        torch.manual_seed(run["seed"])
        kwargs = {**model_kwargs, **({"scale": run["scale"]} if "scale" in run else {})}
        models.append(TinyTransformer(task.vocab_size, max_len=task.seq_len, **kwargs))
    params, buffers = stack_module_state(models)  # each parameter: [runs, ...]
    skeleton = copy.deepcopy(models[0]).to("meta")

    def forward(p, b, tokens):  # one run: tokens [batch, 2n] -> logits [batch, 2n, vocab_size]
        return functional_call(skeleton, (p, b), (tokens,))

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
    clip = torch.tensor([r["clip"] if r["clip"] is not None else math.inf for r in runs])[:, None]  # [runs, 1]
    lrs = torch.tensor([[lr_at(step, r["lr"], r["warmup"]) for r in runs] for step in range(steps)])  # [steps, runs]
    losses = torch.empty(steps, n_runs)
    grad_norms = torch.empty(steps, n_runs)
    batched_forward = vmap(forward)

    for step in range(steps):
        flat.requires_grad_(True)
        pieces = flat.split(sizes, dim=1)
        p = {k: piece.view(n_runs, *shape) for (k, shape), piece in zip(shapes.items(), pieces)}
        logits = batched_forward(p, buffers, inputs[step])  # [runs, batch, 2n, vocab_size]
        loss = task.loss(logits, targets[step])  # [runs]
        (grad,) = torch.autograd.grad(loss.sum(), [flat])  # [runs, P]；各 run 互不相干，求和即各自的梯度
        with torch.no_grad():
            flat = flat.detach()
            norm = grad.norm(dim=1, keepdim=True)  # [runs, 1]，裁剪前的梯度范数
            grad = grad * (clip / (norm + 1e-6)).clamp(max=1.0)  # 与 clip_grad_norm_ 相同
            m.mul_(beta1).add_(grad, alpha=1 - beta1)
            v.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
            bias1 = 1 - beta1 ** (step + 1)
            bias2 = 1 - beta2 ** (step + 1)
            denom = (v.sqrt() / math.sqrt(bias2)).add_(eps)
            flat = flat - (lrs[step, :, None] / bias1) * m / denom
        losses[step] = loss.detach()
        grad_norms[step] = norm[:, 0]
    return [RunResult(settings={**model_kwargs, **run}, loss=losses[:, i].numpy().copy(),
                      grad_norm=grad_norms[:, i].numpy().copy()) for i, run in enumerate(runs)]


def summarize(results: Sequence[RunResult], key: str = "loss") -> dict[str, np.ndarray]:
    """Across runs (e.g. seeds): {"min", "median", "max"} of ``key`` at every step, each [steps]."""
    stack = np.stack([getattr(r, key) for r in results])  # [runs, steps]
    return {"min": stack.min(0), "median": np.median(stack, 0), "max": stack.max(0)}


# ---------------------------------------------------------------------------------------------
# Measuring a model at initialisation
# ---------------------------------------------------------------------------------------------

def layer_report(model: TinyTransformer, tokens: torch.Tensor) -> "pandas.DataFrame":
    """One row per block: what enters it and what its attention does, measured on ``tokens``.

    Columns: 输入标准差 (std of the residual stream x entering the block, [batch, seq_len, d_model]),
    分数标准差 (std of the scores Q Kᵀ/√d_k — or Q Kᵀ when scale=False — over the visible entries),
    最大权重均值 (mean over queries of the largest attention weight; uniform attention gives the mean
    of 1/(number of visible keys), one-hot gives 1; with a causal mask the first query, which can only see itself, is left out).
    tokens: long [batch, seq_len].
    """
    import pandas as pd

    inputs = []
    hooks = [block.register_forward_pre_hook(lambda _m, args: inputs.append(args[0].detach()))
             for block in model.blocks]
    try:
        with torch.no_grad():
            _, attn = model(tokens, return_attn=True)
    finally:
        for h in hooks:
            h.remove()
    seq_len = tokens.size(1)
    visible = torch.ones(seq_len, seq_len, dtype=torch.bool)
    if model.causal:
        visible = torch.tril(visible)
    first = 1 if model.causal else 0  # 因果 mask 下第一个查询只能看自己，权重恒为 1
    rows = []
    with torch.no_grad():
        for i, (block, x, w) in enumerate(zip(model.blocks, inputs, attn)):
            a = block.attn
            h = block.ln1(x) if block.norm == "pre" else x  # 注意力层真正看到的输入
            Q = a.split_heads(a.W_q(h)) * a.q_gain  # [batch, num_heads, seq_len, d_k]
            K = a.split_heads(a.W_k(h))
            scores = Q @ K.transpose(-2, -1) / math.sqrt(a.d_k)  # [batch, num_heads, seq_len, seq_len]
            rows.append({"层": i + 1, "输入标准差": x.std().item(),
                         "分数标准差": scores[..., visible].std().item(),
                         "最大权重均值": w.max(dim=-1).values[..., first:].mean().item()})
    return pd.DataFrame(rows).set_index("层")


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
    ax.set_xlabel("训练步数")
    return ax


_COLORS = {"pre": "#4C78A8", "post": "#E45756", True: "#4C78A8", False: "#E45756",
           "off": "#9D9D9D", "on": "#F58518"}


def scaling_figure(results: dict, d_k: int, *, task: CopyTask = CopyTask()):
    """Loss with and without √d_k for one d_k. results[(d_k, scale)] -> list of RunResult (seeds)."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    for scale, label in ((True, "除以 √d_k"), (False, "不除以 √d_k")):
        plot_band(results[d_k, scale], ax=ax, label=label, color=_COLORS[scale])
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label="随机猜测 ln 8")
    ax.set_ylim(0, 2.6)
    ax.set_ylabel("复制部分的交叉熵")
    n = len(results[d_k, True])
    ax.set_title(f"d_k = {d_k}：{n} 个种子的中位数（线）与最小–最大范围（阴影）")
    ax.legend(loc="upper right", fontsize=8)
    return fig


def norm_warmup_figure(results: dict, num_layers: int, warmup: int, *, task: CopyTask = CopyTask()):
    """Pre-Norm vs Post-Norm loss for one depth and warmup. results[(norm, num_layers, warmup)] -> runs."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3), layout="constrained")
    for norm, label in (("pre", "Pre-Norm"), ("post", "Post-Norm")):
        plot_band(results[norm, num_layers, warmup], ax=ax, label=label, color=_COLORS[norm])
    ax.axhline(task.chance_loss, color="0.5", ls=":", lw=1, label="随机猜测 ln 8")
    if warmup:
        ax.axvspan(0, warmup, color="0.85", lw=0, zorder=0)
    ax.set_ylim(0, 2.6)
    ax.set_ylabel("复制部分的交叉熵")
    lr = results["pre", num_layers, warmup][0].settings["lr"]
    ax.set_title(f"{num_layers} 层，学习率 {lr:g}，" + (f"前 {warmup} 步线性预热（灰底）" if warmup else "不预热"))
    ax.legend(loc="upper right", fontsize=8)
    return fig


def depth_summary_figure(results: dict, depths: Sequence[int], warmups: Sequence[int]):
    """Final loss (mean of the last 20 steps) of every seed against depth; one panel per warmup."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(warmups), figsize=(6.4, 2.8), layout="constrained", sharey=True)
    axes = np.atleast_1d(axes)
    for ax, warmup in zip(axes, warmups):
        for k, (norm, label) in enumerate((("pre", "Pre-Norm"), ("post", "Post-Norm"))):
            for j, depth in enumerate(depths):
                finals = [r.final_loss() for r in results[norm, depth, warmup]]
                x = j + (k - 0.5) * 0.25 + np.linspace(-0.05, 0.05, len(finals))
                ax.scatter(x, finals, color=_COLORS[norm], s=22, label=label if j == 0 else None)
        ax.set_xticks(range(len(depths)), [str(d) for d in depths])
        ax.set_xlabel("层数")
        ax.set_title("不预热" if warmup == 0 else f"预热 {warmup} 步")
        ax.set_ylim(-0.05, 2.4)
    axes[0].set_ylabel("最后 20 步的平均损失")
    axes[0].legend(loc="upper left", fontsize=8)
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
        for s in bad_steps:
            ax.axvline(s, color="0.6", lw=4, alpha=0.3, zorder=0)
    if window is not None:
        ax_l.set_xlim(*window)
    ax_g.set_ylabel("梯度范数\n（裁剪前）")
    ax_l.set_ylabel("损失")
    ax_l.set_xlabel("训练步数（灰条：脏数据批次）")
    ax_g.set_title(f"种子 {seed}")
    ax_g.legend(loc="upper left", fontsize=8, ncol=2)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "clipping_figure",
    "depth_summary_figure",
    "norm_warmup_figure",
    "scaling_figure",
    "train_runs",
)
