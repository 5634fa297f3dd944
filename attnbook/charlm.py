"""A tiny character-level language model on Tang poems, and the tools of chapter 12 (mask bugs).

* ``load_tang_poems()`` reads the corpus shipped in ``attnbook/data/tang_poems.txt``.
* ``make_mask(seq_len, kind)`` builds the right causal mask and three classic wrong ones.
* ``CharTransformer`` is a small Pre-Norm decoder built from ``attnbook.MultiHeadSelfAttention``;
  the mask it uses is part of the model (``mask_kind``), so a wrong mask is wrong at training
  *and* at generation, exactly as in a real bug.
* ``train_charlm`` / ``generate`` / ``teacher_forced_loss`` / ``prefix_only_loss``.
* ``future_influence`` and ``leaks_future``: the diagnostic "change a future input token; do the
  outputs at earlier positions move?" (with a correct causal mask they must not).

Mask convention everywhere in attnbook: True/1 = keep, False/0 = block.
"""
from __future__ import annotations

import contextlib
import importlib.resources
import math
from dataclasses import dataclass, field
from typing import Iterator, Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F

from ._errors import fail
from .book import causal_mask
from .book import MultiHeadSelfAttention
from .book import sinusoidal_positional_encoding

#: The mask variants of chapter 12. "correct" is attnbook.causal_mask.
MASK_KINDS: dict[str, str] = {
    "correct": "正确：第 i 个位置看 0..i",
    "offset": "错位一格：第 i 个位置还能看 i+1",
    "transposed": "转置：第 i 个位置看 i..seq_len-1",
    "flipped": "极性反了：第 i 个位置只看 i+1..seq_len-1",
    "none": "没有 mask：每个位置看全部",
}

#: Separator between poems in the training text (the model also learns where a poem ends).
POEM_SEPARATOR = "\n"


# --------------------------------------------------------------------------------------------
# corpus
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Poem:
    """One poem of the corpus: author, title and the text (简体, full-width punctuation)."""

    author: str
    title: str
    text: str


def load_tang_poems() -> list[Poem]:
    """Read ``attnbook/data/tang_poems.txt`` (shipped with the package; see its README.md).

    Returns the poems in file order. Lines starting with ``#`` are comments.
    """
    resource = importlib.resources.files("attnbook.data").joinpath("tang_poems.txt")
    poems = []
    for number, line in enumerate(resource.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 3:
            raise ValueError(f"tang_poems.txt 第 {number} 行应为 作者<TAB>题目<TAB>正文，收到 {line!r}")
        poems.append(Poem(*parts))
    return poems


def corpus_text(poems: Sequence[Poem] | None = None) -> str:
    """All poem texts joined by ``POEM_SEPARATOR`` (and ending with it)."""
    poems = load_tang_poems() if poems is None else poems
    return "".join(p.text + POEM_SEPARATOR for p in poems)


class CharVocab:
    """Characters <-> integer ids. ``CharVocab(text)``; ids are sorted by code point (stable)."""

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise fail("text", text, "非空字符串（用来建立字表的语料）")
        self.itos: list[str] = sorted(set(text))
        self.stoi: dict[str, int] = {ch: i for i, ch in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> torch.Tensor:
        """str -> int64 tensor [len(text)]."""
        unknown = sorted({ch for ch in text if ch not in self.stoi})
        if unknown:
            raise fail("text", text, f"只含字表里的字；这些字不在语料中：{''.join(unknown)}")
        return torch.tensor([self.stoi[ch] for ch in text], dtype=torch.long)

    def decode(self, ids: Sequence[int] | torch.Tensor) -> str:
        """int ids [n] -> str."""
        if hasattr(ids, "tolist"):
            ids = ids.tolist()
        return "".join(self.itos[i] for i in ids)


# --------------------------------------------------------------------------------------------
# masks
# --------------------------------------------------------------------------------------------
def make_mask(seq_len: int, kind: str = "correct") -> torch.Tensor | None:
    """A causal mask, right or wrong. Returns bool [1, 1, seq_len, seq_len] (True = keep), or None.

    kind:
        "correct"    query i keeps keys 0..i (= attnbook.causal_mask)
        "offset"     off by one: ``torch.tril(..., diagonal=1)``, query i also keeps key i+1
        "transposed" the correct mask transposed: query i keeps keys i..seq_len-1
        "flipped"    polarity inverted (True read as "block"): query i keeps only i+1..;
                     the last row keeps nothing, so its softmax is NaN
        "none"       no mask at all (returns None)
    """
    if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 1:
        raise fail("seq_len", seq_len, "正整数")
    if kind not in MASK_KINDS:
        raise fail("kind", kind, f"{list(MASK_KINDS)} 之一")
    ones = torch.ones(seq_len, seq_len, dtype=torch.bool)
    if kind == "correct":
        return causal_mask(seq_len)
    if kind == "offset":
        return torch.tril(ones, diagonal=1)[None, None]
    if kind == "transposed":
        return causal_mask(seq_len).transpose(-2, -1)
    if kind == "flipped":
        return ~causal_mask(seq_len)
    return None


# --------------------------------------------------------------------------------------------
# model
# --------------------------------------------------------------------------------------------
class Block(nn.Module):
    """Pre-Norm decoder block: x + MHSA(LN(x), mask), then x + MLP(LN(x)).

    forward(x [batch, seq_len, d_model], mask) -> (x [batch, seq_len, d_model],
    attn_weights [batch, num_heads, seq_len, seq_len]).
    """

    def __init__(self, d_model: int, num_heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = MultiHeadSelfAttention(d_model, num_heads)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        out, attn_weights = self.attn(self.ln1(x), mask)
        x = x + out
        x = x + self.mlp(self.ln2(x))
        return x, attn_weights


class CharTransformer(nn.Module):
    """A small decoder-only character model whose causal mask is chosen by ``mask_kind``.

    CharTransformer(vocab_size, d_model=64, num_heads=4, num_layers=2, max_len=64, mask_kind="correct")
    forward(idx [batch, seq_len] int64) -> logits [batch, seq_len, vocab_size];
    with ``return_attn=True`` also the list of attn_weights, one [batch, num_heads, seq_len, seq_len]
    per layer. Positions: fixed sinusoidal encoding added to the token embeddings.
    """

    def __init__(self, vocab_size: int, d_model: int = 64, num_heads: int = 4, num_layers: int = 2,
                 max_len: int = 64, mask_kind: str = "correct") -> None:
        super().__init__()
        for name, value in (("vocab_size", vocab_size), ("d_model", d_model), ("num_heads", num_heads),
                            ("num_layers", num_layers), ("max_len", max_len)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise fail(name, value, "正整数")
        if mask_kind not in MASK_KINDS:
            raise fail("mask_kind", mask_kind, f"{list(MASK_KINDS)} 之一")
        self.vocab_size = vocab_size
        self.max_len = max_len
        self.mask_kind = mask_kind
        self.embed = nn.Embedding(vocab_size, d_model)
        self.register_buffer("pe", sinusoidal_positional_encoding(max_len, d_model), persistent=False)
        self.blocks = nn.ModuleList(Block(d_model, num_heads) for _ in range(num_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)

    def forward(self, idx: torch.Tensor, return_attn: bool = False):
        if not isinstance(idx, torch.Tensor) or idx.dim() != 2 or idx.dtype != torch.long:
            raise fail("idx", idx, "int64 张量 [batch, seq_len]")
        seq_len = idx.size(1)
        if seq_len > self.max_len:
            raise fail("idx", idx, f"seq_len 不超过 max_len={self.max_len} 的序列")
        mask = make_mask(seq_len, self.mask_kind)  # [1, 1, seq_len, seq_len] 或 None
        x = self.embed(idx) + self.pe[:seq_len]  # [batch, seq_len, d_model]
        attns = []
        for block in self.blocks:
            x, attn_weights = block(x, mask)
            attns.append(attn_weights)
        logits = self.head(self.ln_f(x))  # [batch, seq_len, vocab_size]
        return (logits, attns) if return_attn else logits


# --------------------------------------------------------------------------------------------
# training, generation, losses
# --------------------------------------------------------------------------------------------
@contextlib.contextmanager
def single_thread() -> Iterator[None]:
    """Run torch on one CPU thread inside the block (bit-for-bit reproducible), then restore."""
    before = torch.get_num_threads()
    fill = getattr(torch.utils, "deterministic", None)
    fill_before = getattr(fill, "fill_uninitialized_memory", None)
    torch.set_num_threads(1)
    if fill_before is not None:  # deterministic mode fills every new tensor with NaN: slow, not needed here
        fill.fill_uninitialized_memory = False
    try:
        yield
    finally:
        torch.set_num_threads(before)
        if fill_before is not None:
            fill.fill_uninitialized_memory = fill_before


@dataclass
class CharLMRun:
    """What ``train_charlm`` returns: the trained model (in eval mode) and its loss per step."""

    model: CharTransformer
    losses: list[float] = field(default_factory=list)
    mask_kind: str = "correct"
    seed: int = 0

    @property
    def final_loss(self) -> float:
        """Mean training loss over the last 10% of steps (less noisy than the very last step)."""
        tail = max(1, len(self.losses) // 10)
        return float(sum(self.losses[-tail:]) / tail)


def random_windows(data: torch.Tensor, seq_len: int, batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random training windows. data [n] -> (x [batch, seq_len], y [batch, seq_len]); y is x shifted by one."""
    if data.numel() <= seq_len + 1:
        raise fail("data", data, f"长度大于 seq_len + 1 = {seq_len + 1} 的一维 id 序列")
    starts = torch.randint(0, data.numel() - seq_len - 1, (batch,), generator=generator)
    offsets = torch.arange(seq_len + 1)
    chunk = data[starts[:, None] + offsets]  # [batch, seq_len + 1]
    return chunk[:, :-1], chunk[:, 1:]


def train_charlm(data: torch.Tensor, vocab_size: int, *, mask_kind: str = "correct", seed: int = 0,
                 steps: int = 150, seq_len: int = 32, batch: int = 16, lr: float = 8e-3,
                 d_model: int = 64, num_heads: int = 4, num_layers: int = 2) -> CharLMRun:
    """Train a ``CharTransformer`` on random windows of ``data`` (int64 [n]) with AdamW.

    Deterministic: the seed fixes the initial weights and the batches; torch runs on one thread.
    Returns a CharLMRun whose model is in eval mode.
    """
    if not isinstance(steps, int) or steps < 1:
        raise fail("steps", steps, "正整数")
    with single_thread():
        torch.manual_seed(seed)
        model = CharTransformer(vocab_size, d_model, num_heads, num_layers, max_len=max(64, seq_len),
                                mask_kind=mask_kind)
        generator = torch.Generator().manual_seed(seed)
        try:  # the fused CPU kernel (torch >= 2.4) is the fastest; older torch: foreach
            optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, fused=True)
        except (RuntimeError, TypeError, ValueError):
            optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, foreach=True)
        losses = []
        model.train()
        for _ in range(steps):
            x, y = random_windows(data, seq_len, batch, generator)
            logits = model(x)  # [batch, seq_len, vocab_size]
            loss = F.cross_entropy(logits.reshape(-1, vocab_size), y.reshape(-1))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            losses.append(loss.item())
        model.eval()
    return CharLMRun(model=model, losses=losses, mask_kind=mask_kind, seed=seed)


@torch.no_grad()
def generate(model: CharTransformer, vocab: CharVocab, prompt: str, n_new: int, *,
             temperature: float = 0.0, seed: int = 0, stop_at_separator: bool = True) -> str:
    """Continue ``prompt`` by ``n_new`` characters, one at a time (autoregressive).

    Each step feeds the last ``model.max_len`` characters and reads the logits of the LAST position:
    exactly what happens at inference, where the future does not exist yet.
    temperature 0 = greedy (argmax); > 0 samples with a seeded generator. Returns only the new text.
    """
    if not prompt:
        raise fail("prompt", prompt, "非空字符串（例如一首诗的第一句）")
    generator = torch.Generator().manual_seed(seed)
    ids = vocab.encode(prompt).tolist()
    new: list[int] = []
    with single_thread():
        for _ in range(n_new):
            context = torch.tensor([ids[-model.max_len:]], dtype=torch.long)  # [1, t]
            logits = model(context)[0, -1]  # [vocab_size]
            if temperature > 0:
                probs = torch.softmax(logits / temperature, dim=-1)
                next_id = int(torch.multinomial(probs, 1, generator=generator))
            else:
                next_id = int(logits.argmax())
            ids.append(next_id)
            new.append(next_id)
            if stop_at_separator and vocab.itos[next_id] == POEM_SEPARATOR:
                break
    return vocab.decode(new)


def eval_windows(data: torch.Tensor, seq_len: int, n: int, seed: int = 1234) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed set of ``n`` evaluation windows (x, y), each [n, seq_len]."""
    return random_windows(data, seq_len, n, torch.Generator().manual_seed(seed))


@torch.no_grad()
def teacher_forced_loss(model: CharTransformer, x: torch.Tensor, y: torch.Tensor) -> float:
    """The training view: the whole window x [batch, seq_len] in one pass, loss of every position."""
    with single_thread():
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1)).item()


@torch.no_grad()
def per_position_loss(model: CharTransformer, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Teacher-forced loss of each position, averaged over the batch: float [seq_len]."""
    with single_thread():
        logits = model(x)  # [batch, seq_len, vocab_size]
        loss = F.cross_entropy(logits.transpose(1, 2), y, reduction="none")  # [batch, seq_len]
    return loss.mean(dim=0)


@torch.no_grad()
def prefix_only_loss(model: CharTransformer, x: torch.Tensor, y: torch.Tensor) -> float:
    """The generation view: position t is predicted from x[:, :t+1] alone (no future exists).

    One forward pass per prefix length; loss averaged over all positions. For a model with a
    correct causal mask this equals ``teacher_forced_loss`` (up to float rounding).
    """
    seq_len = x.size(1)
    total = 0.0
    with single_thread():
        for t in range(seq_len):
            logits = model(x[:, : t + 1])[:, -1]  # [batch, vocab_size]
            total += F.cross_entropy(logits, y[:, t], reduction="sum").item()
    return total / y.numel()


def repeat_rate(text: str) -> float:
    """Share of characters equal to the character right before them (叠字率); 0 for len < 2."""
    if len(text) < 2:
        return 0.0
    return sum(a == b for a, b in zip(text, text[1:])) / (len(text) - 1)


# --------------------------------------------------------------------------------------------
# the diagnostic: change the future, watch the past
# --------------------------------------------------------------------------------------------
def _logits_of(model: nn.Module, idx: torch.Tensor) -> torch.Tensor:
    out = model(idx)
    if isinstance(out, (tuple, list)):
        out = out[0]
    if not isinstance(out, torch.Tensor) or out.dim() != 3 or out.shape[:2] != idx.shape:
        raise fail("model", model, "一个模型：model(idx [batch, seq_len]) 返回 logits [batch, seq_len, vocab_size]")
    return out


def _vocab_size_of(model: nn.Module) -> int:
    size = getattr(model, "vocab_size", None)
    if isinstance(size, int):
        return size
    for module in (model.modules() if isinstance(model, nn.Module) else ()):
        if isinstance(module, nn.Embedding):
            return module.num_embeddings
    raise fail("model", model, "带 vocab_size 属性或 nn.Embedding 的模型（否则请传入 vocab_size）")


@torch.no_grad()
def future_influence(model: nn.Module, seq_len: int, *, vocab_size: int | None = None,
                     n_trials: int = 2, seed: int = 0, tokens: torch.Tensor | None = None) -> torch.Tensor:
    """How much does changing input token j move the logits at position i?

    For each trial: a random sequence of ``seq_len`` token ids (or the given ``tokens`` [seq_len],
    then one trial); for each position j, a copy with token j replaced by a different random id.
    All copies go through the model in one batch.
    Returns float [seq_len (i, output), seq_len (j, changed input)]: the largest absolute change of
    any logit at position i, over the trials. With a correct causal mask the strict upper triangle
    (j > i: a FUTURE token changed) is exactly 0.
    """
    if not isinstance(seq_len, int) or isinstance(seq_len, bool) or seq_len < 2:
        raise fail("seq_len", seq_len, "至少为 2 的整数")
    vocab_size = _vocab_size_of(model) if vocab_size is None else vocab_size
    if vocab_size < 2:
        raise fail("vocab_size", vocab_size, "至少为 2 的整数")
    if not callable(model):
        raise fail("model", model, "一个模型：model(idx [batch, seq_len]) 返回 logits [batch, seq_len, vocab_size]")
    is_module = isinstance(model, nn.Module)
    was_training = model.training if is_module else False
    if is_module:
        model.eval()  # 关掉 dropout，否则输出本身就带随机性
    stack = contextlib.ExitStack()
    stack.enter_context(single_thread())
    generator = torch.Generator().manual_seed(seed)
    if tokens is not None:
        tokens = torch.as_tensor(tokens, dtype=torch.long)
        if tokens.shape != (seq_len,) or (tokens < 0).any() or (tokens >= vocab_size).any():
            raise fail("tokens", tokens, f"一维 id 序列 [seq_len={seq_len}]，每个 id 在 0..{vocab_size - 1} 之间")
        n_trials = 1
    influence = torch.zeros(seq_len, seq_len)
    try:
        for _ in range(n_trials):
            if tokens is None:
                base = torch.randint(0, vocab_size, (seq_len,), generator=generator)  # [seq_len]
            else:
                base = tokens
            shift = torch.randint(1, vocab_size, (seq_len,), generator=generator)
            batch = base.repeat(seq_len + 1, 1)  # 第 0 行原样，第 j+1 行改动位置 j
            positions = torch.arange(seq_len)
            batch[positions + 1, positions] = (base + shift) % vocab_size  # 保证换成另一个字
            logits = _logits_of(model, batch)  # [seq_len + 1, seq_len, vocab_size]
            change = (logits[1:] - logits[:1]).abs().amax(dim=-1)  # [j, i]
            change = torch.nan_to_num(change, nan=float("inf"))
            influence = torch.maximum(influence, change.T)  # [i, j]
    finally:
        if is_module:
            model.train(was_training)
        stack.close()
    return influence


def leaks_future(model: nn.Module, seq_len: int, *, vocab_size: int | None = None,
                 atol: float = 1e-5, n_trials: int = 2, seed: int = 0) -> bool:
    """True if some output at position i changes when an input token at a LATER position j > i changes.

    A model trained for next-token prediction must return False: at generation time the future does
    not exist. ``atol`` absorbs float rounding (a correct mask gives exactly 0 here).
    """
    influence = future_influence(model, seq_len, vocab_size=vocab_size, n_trials=n_trials, seed=seed)
    future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)
    return bool((influence[future] > atol).any())


# --------------------------------------------------------------------------------------------
# figures (pure: data -> Figure / Axes)
# --------------------------------------------------------------------------------------------
KIND_COLORS = {"correct": "#4C78A8", "offset": "#F58518", "transposed": "#E45756", "flipped": "#72B7B2",
               "none": "#54A24B"}
KIND_NAMES = {"correct": "正确 mask", "offset": "错位一格", "transposed": "转置", "flipped": "极性反了",
              "none": "没有 mask"}


def plot_loss_curves(results: Sequence[CharLMRun], *, ax=None, smooth: int = 10):
    """Training loss against step, one thin line per seed, colour per mask kind. Returns Axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 3.2), layout="constrained")
    seen = set()
    for r in results:
        losses = torch.tensor(r.losses)
        if smooth > 1 and len(losses) >= smooth:
            losses = torch.nn.functional.avg_pool1d(losses[None, None], smooth, stride=1)[0, 0]
        label = None if r.mask_kind in seen else KIND_NAMES.get(r.mask_kind, r.mask_kind)
        seen.add(r.mask_kind)
        steps = torch.arange(len(losses)) + (smooth if smooth > 1 else 1)
        ax.plot(steps.numpy(), losses.numpy(), color=KIND_COLORS.get(r.mask_kind, "gray"), lw=1.2,
                alpha=0.85, label=label)
    ax.set_xlabel("训练步数")
    ax.set_ylabel("训练 loss（交叉熵）")
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False)
    return ax


def plot_influence(influence: torch.Tensor, *, ax=None, title: str | None = None, labels=None, colorbar: bool = True):
    """Heatmap of ``future_influence`` (rows: output position i; columns: changed input j).

    Cells above the diagonal (j > i) are the future: they must be 0. Returns Axes.
    """
    import matplotlib.pyplot as plt
    import numpy as np

    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.2), layout="constrained")
    value = np.log10(1e-6 + influence.detach().cpu().numpy().clip(max=1e6))
    seq_len = value.shape[0]
    image = ax.imshow(value, cmap="cividis", vmin=-6, vmax=1.5)
    ax.plot([-0.5, seq_len - 0.5], [-0.5, seq_len - 0.5], color="white", lw=0.8, ls="--")
    ax.set_xlabel("被改动的输入位置 j")
    ax.set_ylabel("输出位置 i")
    if labels is not None:
        ax.set_xticks(range(seq_len), list(labels))
        ax.set_yticks(range(seq_len), list(labels))
    if title:
        ax.set_title(title)
    if colorbar:
        bar = ax.figure.colorbar(image, ax=ax, shrink=0.8)
        bar.set_label("log10 |logits 的变化|")
    return ax


def attention_figure(model: CharTransformer, vocab: CharVocab, line: str, *, layer: int = 0, title: str | None = None):
    """The attn_weights of every head of one layer on ``line``: a 1 × num_heads row of heatmaps.

    Returns the Figure. Cells above the diagonal are the future: with a correct mask they are 0.
    """
    import matplotlib.pyplot as plt

    from .plots import heatmap

    idx = vocab.encode(line)[None]  # [1, seq_len]
    with torch.no_grad(), single_thread():
        _, attns = model(idx, return_attn=True)
    if not 0 <= layer < len(attns):
        raise fail("layer", layer, f"0 到 {len(attns) - 1} 之间的层号")
    weights = torch.nan_to_num(attns[layer][0], nan=0.0)  # [num_heads, seq_len, seq_len]
    num_heads = weights.size(0)
    fig, axes = plt.subplots(1, num_heads, figsize=(2.0 * num_heads + 0.4, 2.5), layout="constrained")
    for h, ax in enumerate(axes):
        heatmap(weights[h], row_labels=line, col_labels=line, ax=ax, annotate=False, colorbar=False,
                xlabel=None, ylabel=None, title=f"头 {h}")
        ax.tick_params(labelsize=7)
    if title:
        fig.suptitle(title)
    return fig


# Plumbing the chapters may call without showing it (figures, tables, data and task generators,
# speed-ups the chapter checks against its own code); tests/test_teaching_rule.py reads this list.
__plumbing__ = (
    "CharVocab",
    "KIND_COLORS",
    "KIND_NAMES",
    "attention_figure",
    "corpus_text",
    "eval_windows",
    "load_tang_poems",
    "plot_influence",
    "plot_loss_curves",
    "random_windows",
)
