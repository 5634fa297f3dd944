"""The book's small data sets and task generators: generated in code or shipped with the package
(nothing is downloaded). The taught code (attnbook/book.py) and the chapters' pages draw their data
from here; this module imports only attnbook's infrastructure.

* 猫吃鱼 (chapters 04–07): the article's hand-calculation example, ``cat_eats_fish()``.
* 唐诗 (chapter 13): ``load_tang_poems()`` reads ``attnbook/data/tang_poems.txt``; ``corpus_text``,
  ``CharVocab`` (characters <-> ids), ``random_windows`` (the training windows ``train_charlm``
  draws) and ``eval_windows`` (a fixed held-out set).
* The induction task (chapter 14): ``induction_batch`` (what ``train_induction`` trains on) and
  ``eval_batch`` (a fixed held-out batch), both ``InductionBatch``.
"""
from __future__ import annotations

import importlib.resources
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from .infra.errors import fail

__all__ = [
    "CAT_EATS_FISH_TOKENS", "CharVocab", "InductionBatch", "LETTERS", "POEM_SEPARATOR", "Poem",
    "cat_eats_fish", "corpus_text", "eval_batch", "eval_windows", "induction_batch",
    "load_tang_poems", "random_windows", "token_labels",
]


# ---------------------------------------------------------------------------------------------
# 猫吃鱼 (chapters 04–07)
# ---------------------------------------------------------------------------------------------
#: 猫吃鱼: the article's hand-calculation example (§2.3). d_k = d_v = 2.
CAT_EATS_FISH_TOKENS = ["猫", "吃", "鱼"]


def cat_eats_fish(dtype: torch.dtype = torch.float64) -> dict[str, torch.Tensor | list[str]]:
    """The article's Q, K, V table for 猫 / 吃 / 鱼, each ``[3, 2]``.

    Returns ``{"tokens": ["猫", "吃", "鱼"], "Q": ..., "K": ..., "V": ...}``; float64 by default so
    hand calculation and code agree to many digits.
    """
    Q = torch.tensor([[1.0, 0.2], [0.5, 0.8], [0.1, 0.5]], dtype=dtype)
    K = torch.tensor([[0.8, 0.1], [0.3, 0.6], [0.9, 0.4]], dtype=dtype)
    V = torch.tensor([[0.5, -0.2], [0.2, 0.7], [-0.4, 0.3]], dtype=dtype)
    return {"tokens": list(CAT_EATS_FISH_TOKENS), "Q": Q, "K": K, "V": V}


# ---------------------------------------------------------------------------------------------
# 唐诗 (chapter 13): the corpus, its characters, training and evaluation windows
# ---------------------------------------------------------------------------------------------
#: Separator between poems in the training text (the model also learns where a poem ends).
POEM_SEPARATOR = "\n"


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


def random_windows(data: torch.Tensor, seq_len: int, batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Random training windows. data [n] -> (x [batch, seq_len], y [batch, seq_len]); y is x shifted by one."""
    if data.numel() <= seq_len + 1:
        raise fail("data", data, f"长度大于 seq_len + 1 = {seq_len + 1} 的一维 id 序列")
    starts = torch.randint(0, data.numel() - seq_len - 1, (batch,), generator=generator)
    offsets = torch.arange(seq_len + 1)
    chunk = data[starts[:, None] + offsets]  # [batch, seq_len + 1]
    return chunk[:, :-1], chunk[:, 1:]


def eval_windows(data: torch.Tensor, seq_len: int, n: int, seed: int = 1234) -> tuple[torch.Tensor, torch.Tensor]:
    """A fixed set of ``n`` evaluation windows (x, y), each [n, seq_len]."""
    return random_windows(data, seq_len, n, torch.Generator().manual_seed(seed))


# ---------------------------------------------------------------------------------------------
# The induction task (chapter 14)
# ---------------------------------------------------------------------------------------------
#: Token i is shown as the i-th capital letter.
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass
class InductionBatch:
    """A batch of the induction task.

    tokens: long ``[batch, seq_len]``: a random prefix, then a segment A, then A again.
    loss_mask: bool ``[batch, seq_len]``: True at position t when the token at t+1 can be
        predicted by copying (t runs over the second copy of A except its last token).
    seg_start: long ``[batch]``: where the first copy of A starts.
    seg_len: long ``[batch]``: the length L of A (the second copy starts at seg_start + L).
    """

    tokens: torch.Tensor
    loss_mask: torch.Tensor
    seg_start: torch.Tensor
    seg_len: torch.Tensor

    def labels(self, row: int = 0) -> list[str]:
        """The tokens of one sequence as letters, e.g. ``["Q", "X", ...]``."""
        return token_labels(self.tokens[row])


def token_labels(tokens: torch.Tensor | Sequence[int]) -> list[str]:
    """Token ids ``[seq_len]`` -> letters (A for 0, B for 1, …; ids ≥ 26 become ``t26`` …)."""
    return [LETTERS[i] if 0 <= i < len(LETTERS) else f"t{i}" for i in torch.as_tensor(tokens).tolist()]


def induction_batch(
    batch: int,
    *,
    seq_len: int = 24,
    vocab_size: int = 26,
    min_len: int = 4,
    max_len: int = 10,
    generator: torch.Generator | None = None,
) -> InductionBatch:
    """Random sequences ``prefix + A + A`` with ``len(A) = L`` drawn from ``[min_len, max_len]``.

    The L tokens of A are distinct; the prefix (length ``seq_len - 2L``) uses only tokens that are
    not in A, so every token of the second copy has exactly one earlier occurrence. Because L
    varies, the distance to that occurrence varies: position alone cannot solve the task.
    """
    if not isinstance(batch, int) or batch < 1:
        raise fail("batch", batch, "正整数")
    if not isinstance(min_len, int) or not isinstance(max_len, int) or not 2 <= min_len <= max_len:
        raise fail("min_len/max_len", (min_len, max_len), "满足 2 ≤ min_len ≤ max_len 的整数")
    if 2 * max_len > seq_len:
        raise fail("seq_len", seq_len, f"至少 2 × max_len = {2 * max_len}（要放得下两份 A）")
    if vocab_size <= max_len:
        raise fail("vocab_size", vocab_size, f"大于 max_len = {max_len}（A 的词互不相同，前缀还要用 A 以外的词）")
    g = generator
    L = torch.randint(min_len, max_len + 1, (batch,), generator=g)  # [batch]
    P = seq_len - 2 * L  # 前缀长度 [batch]
    perm = torch.argsort(torch.rand(batch, vocab_size, generator=g), dim=1)  # 每行一个随机排列
    t = torch.arange(seq_len)[None, :]  # [1, seq_len]
    in_A = torch.where(t < (P + L)[:, None], t - P[:, None], t - (P + L)[:, None])  # A 中的下标
    seg_tok = perm.gather(1, in_A.clamp(min=0))  # [batch, seq_len]
    # 前缀：从排列的后 vocab_size - L 个词（不在 A 中）里有放回地抽
    r = (torch.rand(batch, seq_len, generator=g) * (vocab_size - L)[:, None]).long()
    prefix_tok = perm.gather(1, L[:, None] + r)
    tokens = torch.where(t < P[:, None], prefix_tok, seg_tok)
    loss_mask = (t >= (P + L)[:, None]) & (t <= seq_len - 2)
    return InductionBatch(tokens=tokens, loss_mask=loss_mask, seg_start=P, seg_len=L)


def eval_batch(batch: int = 256, seed: int = 12345, **kwargs: Any) -> InductionBatch:
    """A fixed held-out batch (its own generator, never seen in training)."""
    return induction_batch(batch, generator=torch.Generator().manual_seed(seed), **kwargs)
