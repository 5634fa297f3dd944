"""Chapter 13: the Tang-poem corpus (attnbook.toy), the masks, the tiny model and the leak diagnostic
(attnbook.book), the figures (attnbook.pages.ch13)."""
from __future__ import annotations

import collections
import importlib.resources
import re

import pytest
import torch
import torch.nn as nn
from fontTools.ttLib import TTFont

import attnbook
from attnbook.book import (
    CharLMRun,
    CharTransformer,
    future_influence,
    generate,
    leaks_future,
    make_mask,
    per_position_loss,
    prefix_only_loss,
    repeat_rate,
    teacher_forced_loss,
    train_charlm,
)
from attnbook.infra.errors import AttnBookError
from attnbook.pages.ch13 import attention_figure, plot_influence, plot_loss_curves
from attnbook.toy import (
    POEM_SEPARATOR,
    CharVocab,
    corpus_text,
    eval_windows,
    load_tang_poems,
    random_windows,
)


# ---------------------------------------------------------------------------------------------
# corpus
# ---------------------------------------------------------------------------------------------
def test_corpus_is_shipped_and_large_enough():
    poems = load_tang_poems()
    text = corpus_text(poems)
    assert len(poems) >= 150
    assert sum(len(p.text) for p in poems) >= 8000
    assert text.count(POEM_SEPARATOR) == len(poems)
    readme = importlib.resources.files("attnbook.data").joinpath("README.md").read_text(encoding="utf-8")
    assert "tang_poems.txt" in readme and "public domain" in readme and "唐诗三百首" in readme


def test_every_poem_has_a_regular_form_and_no_duplicates():
    poems = load_tang_poems()
    for p in poems:
        assert p.author and p.title, p
        assert re.fullmatch(r"[\u4e00-\u9fff，。？！]+", p.text), p
        lines = [s for s in re.split("[，。？！]", p.text) if s]
        assert len(lines) in (4, 8), p
        assert {len(s) for s in lines} in ({5}, {7}), p
        assert p.text[-1] in "。？！", p
    texts = collections.Counter(p.text for p in poems)
    assert max(texts.values()) == 1
    first_lines = collections.Counter(p.text.split("，")[0] for p in poems)
    assert max(first_lines.values()) == 1


def test_font_covers_every_character_of_the_corpus():
    cmap = TTFont(attnbook.font_path()).getBestCmap()
    missing = sorted({ch for ch in corpus_text() if ch != "\n" and ord(ch) not in cmap})
    assert not missing, f"字体子集缺少：{''.join(missing)}（运行 tools/make_font_subset.py）"


def test_vocab_round_trip_and_chinese_error():
    vocab = CharVocab("床前明月光，\n")
    ids = vocab.encode("明月光")
    assert ids.dtype == torch.long and ids.shape == (3,)
    assert vocab.decode(ids) == "明月光"
    assert len(vocab) == 7
    with pytest.raises(AttnBookError, match="text.*不在语料中：猫"):
        vocab.encode("猫")
    with pytest.raises(AttnBookError, match="text"):
        CharVocab("")


# ---------------------------------------------------------------------------------------------
# masks
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seq_len", [1, 2, 5, 8])
def test_masks(seq_len):
    right = make_mask(seq_len, "correct")
    assert torch.equal(right, attnbook.causal_mask(seq_len))
    offset = make_mask(seq_len, "offset")
    transposed = make_mask(seq_len, "transposed")
    flipped = make_mask(seq_len, "flipped")
    for m in (offset, transposed, flipped):
        assert m.shape == (1, 1, seq_len, seq_len) and m.dtype == torch.bool
    assert int((offset & ~right).sum()) == seq_len - 1  # one extra diagonal
    assert int(transposed.sum()) == int(right.sum())  # same count, wrong direction
    assert not flipped[0, 0, -1].any()  # last row: nothing to attend to
    assert make_mask(seq_len, "none") is None


def test_mask_bad_arguments():
    with pytest.raises(AttnBookError, match="kind"):
        make_mask(4, "upper")
    with pytest.raises(AttnBookError, match="seq_len"):
        make_mask(0)


# ---------------------------------------------------------------------------------------------
# model
# ---------------------------------------------------------------------------------------------
def tiny(kind: str, num_layers: int = 2, seed: int = 0) -> CharTransformer:
    torch.manual_seed(seed)
    return CharTransformer(vocab_size=13, d_model=16, num_heads=2, num_layers=num_layers, max_len=12,
                                  mask_kind=kind).eval()


def test_model_shapes_and_errors():
    model = tiny("correct")
    idx = torch.randint(0, 13, (3, 10))
    logits, attns = model(idx, return_attn=True)
    assert logits.shape == (3, 10, 13)
    assert len(attns) == 2 and attns[0].shape == (3, 2, 10, 10)
    assert torch.allclose(attns[0].sum(-1), torch.ones(3, 2, 10))
    assert (attns[0].triu(diagonal=1) == 0).all()
    with pytest.raises(AttnBookError, match="idx"):
        model(torch.zeros(3, 13, dtype=torch.long))  # longer than max_len
    with pytest.raises(AttnBookError, match="idx"):
        model(torch.zeros(3, 5))  # float ids
    with pytest.raises(AttnBookError, match="mask_kind"):
        CharTransformer(13, mask_kind="triu")
    with pytest.raises(AttnBookError, match="num_heads"):
        CharTransformer(13, num_heads=0)


def test_flipped_mask_gives_nan_that_spreads():
    model = tiny("flipped")
    logits, attns = model(torch.randint(0, 13, (1, 6)), return_attn=True)
    assert attns[0][0].isnan().any(dim=-1).any(dim=0).tolist() == [False] * 5 + [True]
    assert logits.isnan().all()


# ---------------------------------------------------------------------------------------------
# the diagnostic
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind, leaks", [("correct", False), ("offset", True), ("transposed", True),
                                         ("flipped", True), ("none", True)])
def test_leaks_future_on_untrained_models(kind, leaks):
    assert leaks_future(tiny(kind), seq_len=8) is leaks


def test_future_influence_structure():
    seq_len = 8
    right = future_influence(tiny("correct"), seq_len)
    assert right.shape == (seq_len, seq_len)
    assert (right.triu(diagonal=1) == 0).all()  # exactly zero, not just small
    assert (right.diagonal() > 0).all()  # a token does change its own position's output
    for layers in (1, 2, 3):
        influence = future_influence(tiny("offset", num_layers=layers), seq_len)
        i, j = torch.nonzero(influence > 1e-6, as_tuple=True)
        assert int((j - i).max()) == layers  # the leak grows by one position per layer


def test_future_influence_with_given_tokens_and_errors():
    model = tiny("offset")
    tokens = torch.tensor([1, 2, 3, 4, 5])
    influence = future_influence(model, 5, tokens=tokens)
    assert influence.shape == (5, 5) and influence[0, 1] > 0
    with pytest.raises(AttnBookError, match="tokens"):
        future_influence(model, 5, tokens=torch.tensor([1, 2, 3]))
    with pytest.raises(AttnBookError, match="seq_len"):
        future_influence(model, 1)


class _PositionWise(nn.Module):
    """No attention at all: every position on its own. Cannot leak."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(9, 4)
        self.out = nn.Linear(4, 9)

    def forward(self, idx):
        return self.out(self.embed(idx))


class _ReverseCumsum(_PositionWise):
    """Each position sums the embeddings of itself and everything AFTER it: leaks."""

    def forward(self, idx):
        e = self.embed(idx)
        return self.out(e.flip(1).cumsum(1).flip(1))


class _TorchEncoder(nn.Module):
    """PyTorch's own encoder layer with a boolean attn mask (True = BLOCKED in nn.MultiheadAttention)."""

    def __init__(self, mask_from_attnbook: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(9, 8)
        self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0, batch_first=True)
        self.out = nn.Linear(8, 9)
        self.mask_from_attnbook = mask_from_attnbook

    def forward(self, idx):
        seq_len = idx.size(1)
        keep = attnbook.causal_mask(seq_len)[0, 0]  # attnbook: True = keep
        # right: PyTorch wants True = blocked, so pass ~keep; wrong: pass attnbook's mask as is
        mask = keep if self.mask_from_attnbook else ~keep
        return self.out(self.layer(self.embed(idx), src_mask=mask))


def test_leaks_future_works_on_any_model():
    assert leaks_future(_PositionWise(), 6, vocab_size=9) is False
    assert leaks_future(_ReverseCumsum(), 6, vocab_size=9) is True
    assert leaks_future(_TorchEncoder(mask_from_attnbook=False), 6, vocab_size=9) is False
    # the polarity mix-up of 辨误第 11 条: attnbook's keep-mask handed to PyTorch, which reads True as "block"
    assert leaks_future(_TorchEncoder(mask_from_attnbook=True), 6, vocab_size=9) is True
    with pytest.raises(AttnBookError, match="vocab_size"):
        leaks_future(_PositionWise(), 6)  # no vocab_size attribute: it must be passed


def test_future_influence_switches_dropout_off_and_restores_the_mode():
    per_position = nn.Sequential(nn.Embedding(9, 8), nn.Dropout(0.5), nn.Linear(8, 9)).train()
    assert leaks_future(per_position, 6, vocab_size=9) is False  # no false alarm from dropout
    assert per_position.training  # back in training mode
    leaky = CharTransformer(9, d_model=16, num_heads=2, max_len=8, mask_kind="offset").eval()
    assert leaks_future(leaky, 8) is True and not leaky.training
    with torch.no_grad():  # a degenerate model (constant logits) hides the leak: the documented limit
        leaky.head.weight.zero_()
        leaky.head.bias.zero_()
    assert leaks_future(leaky, 8) is False


def test_leaks_future_rejects_a_non_model():
    with pytest.raises(AttnBookError, match="model"):
        leaks_future(lambda idx: idx.float(), 4, vocab_size=5)
    with pytest.raises(AttnBookError, match="model"):
        leaks_future(nn.Identity(), 4, vocab_size=5)


# ---------------------------------------------------------------------------------------------
# training, losses, generation
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def corpus():
    text = corpus_text(load_tang_poems()[:20])
    vocab = CharVocab(text)
    return vocab, vocab.encode(text)


def test_training_is_deterministic_and_learns(corpus):
    vocab, data = corpus
    kwargs = dict(steps=12, seq_len=16, batch=4, d_model=16, num_heads=2, num_layers=1)
    a = train_charlm(data, len(vocab), seed=3, **kwargs)
    b = train_charlm(data, len(vocab), seed=3, **kwargs)
    c = train_charlm(data, len(vocab), seed=4, **kwargs)
    assert a.losses == b.losses  # same machine, same seed: the same run
    assert a.losses != c.losses
    assert a.losses[-1] < a.losses[0]
    assert not a.model.training
    assert a.final_loss == pytest.approx(a.losses[-1])  # 10% of 12 steps -> the last one


def test_teacher_forced_equals_prefix_only_exactly_when_the_mask_is_right(corpus):
    vocab, data = corpus
    x, y = eval_windows(data, 10, 3)
    right = CharTransformer(len(vocab), d_model=16, num_heads=2, max_len=10).eval()
    assert teacher_forced_loss(right, x, y) == pytest.approx(prefix_only_loss(right, x, y), abs=1e-5)
    torch.manual_seed(0)
    leaky = CharTransformer(len(vocab), d_model=16, num_heads=2, max_len=10, mask_kind="offset").eval()
    assert abs(teacher_forced_loss(leaky, x, y) - prefix_only_loss(leaky, x, y)) > 1e-4
    per_pos = per_position_loss(right, x, y)
    assert per_pos.shape == (10,)
    assert per_pos.mean().item() == pytest.approx(teacher_forced_loss(right, x, y), abs=1e-5)


def test_generate(corpus):
    vocab, _ = corpus
    torch.manual_seed(0)
    model = CharTransformer(len(vocab), d_model=16, num_heads=2, max_len=8).eval()
    out = generate(model, vocab, "床前明月光，", 20, stop_at_separator=False)
    assert isinstance(out, str) and len(out) == 20  # longer than max_len: the context window slides
    # never more context than max_len (the training window): a model that rejects longer input still works
    assert len(generate(model, vocab, "床前明月光，" * 2, 3, stop_at_separator=False)) == 3
    assert out == generate(model, vocab, "床前明月光，", 20, stop_at_separator=False)
    sampled = generate(model, vocab, "床前", 10, temperature=1.0, seed=1, stop_at_separator=False)
    assert sampled == generate(model, vocab, "床前", 10, temperature=1.0, seed=1, stop_at_separator=False)
    # avoid: those characters are never written (chapter 13 never writes its placeholder □)
    banned = out[0] + sampled[0]
    for temperature in (0.0, 1.0):
        assert not set(banned) & set(generate(model, vocab, "床前", 20, temperature=temperature, seed=1,
                                                     stop_at_separator=False, avoid=banned))
    with pytest.raises(AttnBookError, match="prompt"):
        generate(model, vocab, "", 5)
    with pytest.raises(AttnBookError, match="text"):
        generate(model, vocab, "猫", 5)


def test_repeat_rate():
    assert repeat_rate("") == 0.0
    assert repeat_rate("山山山") == 1.0
    assert repeat_rate("萋萋满别情") == 0.25


def test_windows_and_errors():
    data = torch.arange(50)
    x, y = random_windows(data, 8, 4, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8)
    assert torch.equal(y, x + 1)
    with pytest.raises(AttnBookError, match="data"):
        random_windows(torch.arange(5), 8, 2, torch.Generator())
    with pytest.raises(AttnBookError, match="steps"):
        train_charlm(data, 50, steps=0)


def test_figures_are_pure():
    import matplotlib.pyplot as plt

    attnbook.setup()
    vocab = CharVocab("床前明月光，疑是地上霜。\n")
    model = CharTransformer(len(vocab), d_model=16, num_heads=2, max_len=12).eval()
    fig = attention_figure(model, vocab, "床前明月光，", layer=1, title="t")
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(AttnBookError, match="layer"):
        attention_figure(model, vocab, "床前", layer=2)
    ax = plot_influence(future_influence(model, 6), labels="床前明月光，", title="t")
    plt.close(ax.figure)
    result = CharLMRun(model=model, losses=[3.0, 2.0, 1.0] * 10, mask_kind="offset")
    ax = plot_loss_curves([result])
    assert ax.get_legend() is not None
    plt.close(ax.figure)
