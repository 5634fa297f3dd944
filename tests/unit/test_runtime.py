"""attnbook.infra.runtime: torch_state() restores torch's generator and thread count, and no helper that
trains or samples moves the reader's random stream or leaves the thread count changed."""
from __future__ import annotations

import pytest
import torch

from attnbook import book
from attnbook.infra.runtime import torch_state
from attnbook.pages.ch10 import random_tokens
from attnbook.pages.ch12 import train_runs
from attnbook.pages.ch13 import attention_figure
from attnbook.pages.ch15 import benchmark, make_inputs, memory_table, methods
from attnbook.toy import CharVocab, corpus_text, eval_batch, eval_windows, load_tang_poems


@pytest.fixture()
def two_threads():
    """Two threads before the call (setup() elsewhere leaves 1), so a helper that sets 1 and forgets fails."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def _leaves_state_alone(call) -> None:
    torch.manual_seed(2024)
    rng = torch.random.get_rng_state()
    threads = torch.get_num_threads()
    call()
    assert torch.get_num_threads() == threads, "线程数没有恢复"
    assert torch.equal(torch.random.get_rng_state(), rng), "全局随机状态被改动了"


def test_torch_state_draws_what_manual_seed_draws_and_restores(two_threads):
    torch.manual_seed(5)
    expected = torch.randn(4)
    torch.manual_seed(99)
    rng = torch.random.get_rng_state()
    with torch_state(seed=5):
        assert torch.get_num_threads() == 1
        assert torch.equal(torch.randn(4), expected)
    assert torch.get_num_threads() == 2
    assert torch.equal(torch.random.get_rng_state(), rng)


def test_torch_state_restores_after_an_error(two_threads):
    rng = torch.random.get_rng_state()
    with pytest.raises(RuntimeError), torch_state(seed=1, threads=1):
        torch.randn(3)
        raise RuntimeError("boom")
    assert torch.get_num_threads() == 2 and torch.equal(torch.random.get_rng_state(), rng)


def test_torch_state_none_keeps_the_stream_and_the_threads(two_threads):
    torch.manual_seed(7)
    first = torch.randn(2)
    torch.manual_seed(7)
    with torch_state(threads=None):
        assert torch.get_num_threads() == 2
        assert torch.equal(torch.randn(2), first)  # no seed: draws from the current state
    assert torch.equal(torch.randn(2), first)  # ... and the draw inside was undone


@pytest.mark.parametrize("kwargs, arg", [({"seed": -1}, "seed"), ({"seed": 1.5}, "seed"),
                                         ({"threads": 0}, "threads"), ({"threads": True}, "threads")])
def test_torch_state_rejects_bad_arguments(kwargs, arg, assert_reader_error):
    def call():
        with torch_state(**kwargs):
            pass
    assert_reader_error(call, arg)


SMALL = dict(d_model=16, num_heads=2, num_layers=1, d_ff=32)


def _corpus():
    text = corpus_text(load_tang_poems()[:20])
    vocab = CharVocab(text)
    return vocab, vocab.encode(text)


def _attention_figure():
    import matplotlib.pyplot as plt

    vocab, data = _corpus()
    with torch_state(seed=0):
        model = book.CharTransformer(len(vocab), 16, 2, 1, max_len=16)
    plt.close(attention_figure(model, vocab, "床前明月光，", layer=0))


HELPERS = {
    # the exercise checker builds its answers on the spot: that must not reseed the reader's generator
    "check 03-1": lambda: __import__("attnbook.exercises", fromlist=["load_all"]).load_all()["03-1"].make(),
    "check 12 (future reach)": lambda: __import__("attnbook.exercises.ch13", fromlist=["_reach"])._reach(2),
    "pages.ch12.train_runs": lambda: train_runs(SMALL, [{"seed": 0}, {"seed": 1}], steps=2, batch=2),
    "pages.ch13.attention_figure": _attention_figure,
    "toy.eval_windows": lambda: eval_windows(_corpus()[1], 8, 2),
    "pages.ch15.methods": lambda: methods(16, 4),
    "pages.ch15.benchmark": lambda: benchmark([16], d_model=8, window=4, repeats=1),
    "pages.ch15.memory_table": lambda: memory_table([16], d_model=8, window=4),
    "pages.ch15.make_inputs": lambda: make_inputs(8, 4),
    "toy.eval_batch": lambda: eval_batch(4),
    "pages.ch10.random_tokens": lambda: random_tokens(2, 4, 5, seed=0),
    # taught code (#@save cells, attnbook/book.py)
    "book.train_model": lambda: book.train_model("sinusoidal", seed=0, train_len=4, steps=2, d_model=8),
    "book.train_induction": lambda: book.train_induction(0, steps=2, batch=4, d_model=8),
}

# The taught training loops (#@save cells of chapters 12 and 13) seed their model inside torch_state.
TAUGHT_LOOPS = {
    "book.train_one": lambda: book.train_one(SMALL, seed=0, steps=2, batch=2),
    "book.train_charlm": lambda: book.train_charlm(_corpus()[1], len(_corpus()[0]), steps=2, seq_len=8, batch=2,
                                                   d_model=8, num_heads=2, num_layers=1),
}


@pytest.mark.parametrize("name", list(HELPERS))
def test_helper_leaves_generator_and_threads_as_they_were(name, two_threads):
    _leaves_state_alone(HELPERS[name])


@pytest.mark.parametrize("name", list(TAUGHT_LOOPS))
def test_taught_training_loop_leaves_generator_as_it_was(name, two_threads):
    _leaves_state_alone(TAUGHT_LOOPS[name])


def test_setup_sets_one_thread_and_seeds(two_threads):
    import attnbook

    attnbook.setup(seed=3, threads=1)
    assert torch.get_num_threads() == 1
    first = torch.randn(2)
    attnbook.setup(seed=3, threads=None)  # None: the count is left as it is
    assert torch.get_num_threads() == 1 and torch.equal(torch.randn(2), first)


def test_setup_asks_for_deterministic_algorithms_without_loading_the_compiler():
    import subprocess
    import sys

    code = ("import sys, torch, attnbook; attnbook.setup(); "
            "print(torch.are_deterministic_algorithms_enabled(), "
            "torch.is_deterministic_algorithms_warn_only_enabled(), 'torch._inductor' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["True", "True", "False"]
