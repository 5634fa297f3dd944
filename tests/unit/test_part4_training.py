"""Chapter 12: the taught TinyTransformer (attnbook.book) and the batched runs and figures (attnbook.pages.ch12)."""
from __future__ import annotations

import math

import matplotlib
import numpy as np
import pytest
import torch

import attnbook
from attnbook.book import (CopyTask, EncoderLayer, ScalableMultiHeadSelfAttention, TinyTransformer, layer_report,
                           lr_at, train_one)
from attnbook.pages.ch12 import RunResult, summarize, train_many, train_runs

matplotlib.use("Agg")

SMALL = dict(d_model=16, num_heads=2, num_layers=2, d_ff=32)


def tokens(batch=3, seq_len=10, vocab=9, seed=0):
    return torch.randint(0, vocab, (batch, seq_len), generator=torch.Generator().manual_seed(seed))


# --- TinyTransformer ------------------------------------------------------------------------------

def test_shapes_and_attention_of_every_layer():
    torch.manual_seed(0)
    model = TinyTransformer(9, d_model=32, num_heads=4, num_layers=3, max_len=16)
    x = tokens()
    logits = model(x)
    assert logits.shape == (3, 10, 9)
    logits2, attn = model(x, return_attn=True)
    torch.testing.assert_close(logits, logits2)
    assert len(attn) == 3
    for w in attn:
        assert w.shape == (3, 4, 10, 10)
        torch.testing.assert_close(w.sum(-1), torch.ones(3, 4, 10))


def test_defaults_are_the_documented_ones():
    model = TinyTransformer(7)
    assert (model.d_model, model.num_heads, model.num_layers, model.max_len) == (32, 2, 2, 64)
    assert model.norm == "pre" and model.scale and model.causal and model.d_ff == 128
    assert isinstance(model.final_ln, torch.nn.LayerNorm)
    assert isinstance(TinyTransformer(7, norm="post").final_ln, torch.nn.Identity)  # 原论文：没有最后的 LN


def test_causal_mask_hides_the_future_and_can_be_switched_off():
    torch.manual_seed(0)
    x = tokens()
    changed = x.clone()
    changed[:, 6] = (changed[:, 6] + 1) % 9
    causal = TinyTransformer(9, **SMALL)
    torch.testing.assert_close(causal(changed)[:, :6], causal(x)[:, :6])
    assert not torch.allclose(causal(changed)[:, 6:], causal(x)[:, 6:])
    _, attn = causal(x, return_attn=True)
    assert torch.all(attn[0].triu(diagonal=1) == 0)
    torch.manual_seed(0)
    full = TinyTransformer(9, causal=False, **SMALL)
    assert not torch.allclose(full(changed)[:, :6], full(x)[:, :6])


def test_extra_mask_is_combined_with_the_causal_mask():
    torch.manual_seed(0)
    model = TinyTransformer(9, **SMALL)
    keep = attnbook.padding_mask([10, 7, 4], 10)  # [batch, 1, 1, seq_len]
    _, attn = model(tokens(), mask=keep, return_attn=True)
    assert torch.all(attn[0][1, :, :, 7:] == 0)
    assert torch.all(attn[0][2, :, 5, 4:] == 0)
    assert torch.all(attn[0].triu(diagonal=1) == 0)


def test_pre_and_post_norm_blocks_compute_the_formulas():
    torch.manual_seed(0)
    x = torch.randn(2, 5, 16)
    for norm in ("pre", "post"):
        block = TinyTransformer(9, d_model=16, num_heads=2, d_ff=32, norm=norm).blocks[0]
        assert isinstance(block, EncoderLayer) and isinstance(block.self_attn, ScalableMultiHeadSelfAttention)
        out, _ = block(x)
        if norm == "pre":
            h = x + block.self_attn(block.ln1(x))[0]
            expected = h + block.ffn(block.ln2(h))
        else:
            h = block.ln1(x + block.self_attn(x)[0])
            expected = block.ln2(h + block.ffn(h))
        torch.testing.assert_close(out, expected)


def test_scaled_attention_equals_the_books_multihead_and_unscaled_skips_the_division():
    torch.manual_seed(0)
    x = torch.randn(2, 6, 32)
    scaled = ScalableMultiHeadSelfAttention(32, num_heads=2, scale=True)
    reference = attnbook.MultiHeadSelfAttention(32, num_heads=2)
    reference.load_state_dict(scaled.state_dict())
    out, w = scaled(x)
    ref_out, ref_w = reference(x)
    torch.testing.assert_close(out, ref_out)
    torch.testing.assert_close(w, ref_w)

    unscaled = ScalableMultiHeadSelfAttention(32, num_heads=2, scale=False)
    unscaled.load_state_dict(scaled.state_dict())
    _, w_unscaled = unscaled(x)
    Q = scaled.split_heads(scaled.W_q(x))
    K = scaled.split_heads(scaled.W_k(x))
    torch.testing.assert_close(w_unscaled, torch.softmax(Q @ K.transpose(-2, -1), dim=-1))


@pytest.mark.parametrize("kwargs, arg", [
    (dict(norm="middle"), "norm"),
    (dict(d_model=30, num_heads=4), "num_heads"),
    (dict(num_layers=0), "num_layers"),
    (dict(d_ff=0), "d_ff"),
])
def test_bad_constructor_arguments_raise_chinese_errors(kwargs, arg):
    with pytest.raises(attnbook.AttnBookError, match=f"`{arg}`"):
        TinyTransformer(9, **kwargs)


def test_bad_tokens_raise_chinese_errors():
    model = TinyTransformer(9, max_len=8)
    with pytest.raises(attnbook.AttnBookError, match="整数张量"):
        model(torch.randn(2, 5))
    with pytest.raises(attnbook.AttnBookError, match="max_len=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(attnbook.AttnBookError, match="vocab_size-1=8"):
        model(torch.full((1, 4), 9))


# --- task and training --------------------------------------------------------------------------------

def test_copy_task_batches_and_dirty_steps():
    task = CopyTask(n=4, num_symbols=5)
    assert (task.vocab_size, task.seq_len) == (6, 8)
    assert task.chance_loss == pytest.approx(math.log(5))
    x, y = task.batches(seed=3, steps=4, batch=2)
    assert x.shape == y.shape == (4, 2, 8)
    torch.testing.assert_close(y[..., 4:], x[..., :4])  # 后一半是副本
    assert torch.all(x[..., 4] == 5)  # SEP
    x2, y2 = task.batches(seed=3, steps=4, batch=2)
    assert torch.equal(x, x2) and torch.equal(y, y2)  # 同一种子，同一数据
    xd, yd = task.batches(seed=3, steps=4, batch=2, bad_steps=(2,))
    assert torch.equal(xd, x) and torch.equal(yd[[0, 1, 3]], y[[0, 1, 3]])
    assert not torch.equal(yd[2, :, 4:], y[2, :, 4:])
    with pytest.raises(attnbook.AttnBookError, match="bad_steps"):
        task.batches(seed=0, steps=4, batch=2, bad_steps=(4,))


def test_loss_is_chance_for_uniform_logits():
    task = CopyTask()
    logits = torch.zeros(2, 3, task.seq_len, task.vocab_size)
    _, y = task.batches(0, 1, 3)
    loss = task.loss(logits, y[0].expand(2, -1, -1))
    torch.testing.assert_close(loss, torch.full((2,), math.log(task.vocab_size)))


def test_lr_schedule():
    assert lr_at(0, 1e-2, 0) == 1e-2
    assert lr_at(0, 1e-2, 10) == pytest.approx(1e-3)
    assert lr_at(9, 1e-2, 10) == pytest.approx(1e-2)
    assert lr_at(50, 1e-2, 10) == 1e-2


def test_train_runs_equals_the_plain_loop_and_is_repeatable():
    runs = [dict(seed=0), dict(seed=1, lr=3e-3, warmup=4, clip=0.5, bad_steps=(5,)), dict(seed=2, scale=False)]
    stacked = train_runs(SMALL, runs, steps=8, batch=4)
    for run, result in zip(runs, stacked):
        plain = train_one(SMALL, steps=8, batch=4, **run) if "scale" not in run else train_one(
            {**SMALL, "scale": run["scale"]}, seed=run["seed"], steps=8, batch=4)
        np.testing.assert_allclose(result.loss, plain["loss"], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(result.grad_norm, plain["grad_norm"], rtol=1e-4, atol=1e-5)
    again = train_runs(SMALL, runs, steps=8, batch=4)
    for a, b in zip(stacked, again):
        assert np.array_equal(a.loss, b.loss)  # 逐位相同
    assert stacked[2].settings["scale"] is False and stacked[1].settings["clip"] == 0.5


def test_train_many_gives_train_runs_results_bit_for_bit_on_any_number_of_processes():
    """Chapter 12 runs independent train_runs calls side by side; the page's numbers must not depend on it."""
    jobs = [dict(model_kwargs={**SMALL, "num_layers": 3}, runs=[dict(seed=0), dict(seed=1, lr=3e-3)], steps=6,
                 batch=4, keep_params=True),
            dict(model_kwargs=SMALL, runs=[dict(seed=2, clip=0.5, bad_steps=(3,))], steps=5, batch=4, watch=(2, 4))]
    one_by_one = [train_runs(**job) for job in jobs]
    for workers in (1, 2):
        for got, want in zip(train_many(jobs, workers=workers), one_by_one, strict=True):
            for a, b in zip(got, want, strict=True):
                assert a.settings == b.settings and a.adam == b.adam
                assert np.array_equal(a.loss, b.loss) and np.array_equal(a.grad_norm, b.grad_norm)
                assert (a.params is None) == (b.params is None)
                if a.params is not None:
                    assert all(torch.equal(a.params[k], b.params[k]) for k in b.params)


def test_train_many_passes_a_jobs_error_back_in_chinese():
    with pytest.raises(attnbook.AttnBookError, match="`seed`"):  # raised in a worker process
        train_many([dict(model_kwargs=SMALL, runs=[dict(seed=0)], steps=2),
                    dict(model_kwargs=SMALL, runs=[dict(seed=-1)], steps=2)], workers=2)
    with pytest.raises(attnbook.AttnBookError, match="`jobs`"):
        train_many([dict(runs=[dict(seed=0)])])
    with pytest.raises(attnbook.AttnBookError, match="`workers`"):
        train_many([dict(model_kwargs=SMALL, runs=[dict(seed=0)], steps=1)], workers=0)
    # after a failed job the next call starts a fresh pool and works
    assert len(train_many([dict(model_kwargs=SMALL, runs=[dict(seed=0)], steps=1)] * 2, workers=2)) == 2


def test_keep_params_rebuilds_the_trained_model():
    runs = [dict(seed=0, lr=3e-3), dict(seed=1, scale=False)]
    plain = train_runs(SMALL, runs, steps=6, batch=4)
    kept = train_runs(SMALL, runs, steps=6, batch=4, keep_params=True)
    assert all(r.params is None for r in plain)
    task = CopyTask()
    for a, b in zip(plain, kept):
        assert np.array_equal(a.loss, b.loss)  # keeping the parameters changes nothing
        arch = {k: b.settings[k] for k in ("d_model", "num_heads", "num_layers", "d_ff", "scale") if k in b.settings}
        model = TinyTransformer(task.vocab_size, max_len=task.seq_len, **arch)
        model.load_state_dict(b.params)  # the keys and shapes of a TinyTransformer state_dict
        # one more step of the same run starts from these parameters: its loss is the rebuilt model's loss
        longer = train_runs(SMALL, [runs[kept.index(b)]], steps=7, batch=4)[0]
        x, y = task.batches(b.settings["seed"], 7, 4)
        with torch.no_grad():
            torch.testing.assert_close(task.loss(model(x[6]), y[6]).item(), float(longer.loss[6]),
                                       rtol=1e-4, atol=1e-5)


def test_clipping_really_limits_the_update():
    plain = train_one(SMALL, steps=3, batch=4, lr=1e-2)
    clipped = train_one(SMALL, steps=3, batch=4, lr=1e-2, clip=1e-3)
    assert plain["loss"][0] == clipped["loss"][0]  # 第一步之前没有区别
    assert not np.allclose(plain["loss"][1:], clipped["loss"][1:])


@pytest.mark.parametrize("run, arg", [
    (dict(lr=1e-3), "runs"),
    (dict(seed=0, momentum=0.9), "runs"),
    (dict(seed=-1), "seed"),
    (dict(seed=0, lr=0), "lr"),
    (dict(seed=0, warmup=1.5), "warmup"),
    (dict(seed=0, clip=-1.0), "clip"),
    (dict(seed=0, scale="yes"), "scale"),
])
def test_bad_runs_raise_chinese_errors(run, arg):
    with pytest.raises(attnbook.AttnBookError, match=f"`{arg}`"):
        train_runs(SMALL, [run], steps=1)


def test_empty_runs():
    with pytest.raises(attnbook.AttnBookError, match="`runs`"):
        train_runs(SMALL, [], steps=1)


def test_train_runs_records_adam_state_like_torch_optim():
    log = {}

    def probe(step, model, optimizer):
        group = optimizer.param_groups[0]
        b1, b2 = group["betas"]
        m = torch.cat([optimizer.state[p]["exp_avg"].flatten() for p in model.parameters()]) / (1 - b1 ** (step + 1))
        v = torch.cat([optimizer.state[p]["exp_avg_sq"].flatten() for p in model.parameters()]) / (1 - b2 ** (step + 1))
        log[step] = {"m": m.norm().item(), "sqrt_v": v.sqrt().norm().item(),
                     "update": (group["lr"] * m / (v.sqrt() + group["eps"])).norm().item()}

    train_one(SMALL, seed=2, steps=6, lr=1e-2, warmup=3, clip=0.5, bad_steps=(4,), batch=4, on_step=probe)
    (run,) = train_runs(SMALL, [dict(seed=2, lr=1e-2, warmup=3, clip=0.5, bad_steps=(4,))], steps=6, batch=4,
                        watch=(1, 5))
    assert set(run.adam) == {1, 5}
    for step in (1, 5):
        for key in ("m", "sqrt_v", "update"):
            assert run.adam[step][key] == pytest.approx(log[step][key], rel=1e-3)


def test_run_result_helpers():
    ok = RunResult({}, np.linspace(2, 0, 50), np.ones(50))
    bad = RunResult({}, np.array([1.0, np.nan]), np.ones(2))
    assert not ok.diverged and bad.diverged
    assert ok.final_loss(last=10) == pytest.approx(np.linspace(2, 0, 50)[-10:].mean())
    assert bad.final_loss() == math.inf
    s = summarize([ok, RunResult({}, np.linspace(2, 0, 50) + 1, np.ones(50))])
    np.testing.assert_allclose(s["max"] - s["min"], 1.0)


def test_layer_report_sees_unscaled_and_badly_initialised_attention():
    task = CopyTask()
    x = task.batches(0, 1, 16)[0][0]
    torch.manual_seed(0)
    good = layer_report(TinyTransformer(task.vocab_size, d_model=64, num_heads=1, num_layers=2, max_len=12), x)
    torch.manual_seed(0)
    loud = layer_report(TinyTransformer(task.vocab_size, d_model=64, num_heads=1, num_layers=2, max_len=12,
                                        scale=False), x)
    assert list(good.columns) == ["输入标准差", "分数标准差", "最大权重均值"] and len(good) == 2
    ratio = loud["分数标准差"] / good["分数标准差"]
    np.testing.assert_allclose(ratio.iloc[0], 8.0, rtol=1e-4)  # 不缩放 = 乘 √d_k = 8
    assert (loud["最大权重均值"] > good["最大权重均值"]).all()


def test_figures_are_pure_and_labelled():
    import matplotlib.pyplot as plt

    from attnbook.pages.ch12 import (
        clipping_figure,
        depth_summary_figure,
        horizon_figure,
        lr_sweep_figure,
        norm_warmup_figure,
        scaling_figure,
    )

    runs = train_runs(SMALL, [dict(seed=s, scale=sc) for sc in (True, False) for s in (0, 1)], steps=4, batch=2)
    scaling = {(8, sc, lr): [r for r in runs if r.settings["scale"] == sc] for sc in (True, False) for lr in (1e-3, 1e-2)}
    fig = scaling_figure(scaling, 8, 1e-3)
    assert "d_k = 8" in fig.axes[0].get_title()
    plt.close(fig)
    fig = lr_sweep_figure(scaling, [8], [1e-3, 1e-2])
    assert fig.axes[0].get_xscale() == "log" and fig.axes[0].get_ylabel()
    plt.close(fig)
    grid = {(n, 2, w): runs[:2] for n in ("pre", "post") for w in (0, 3)}
    for fig in (norm_warmup_figure(grid, 2, 3), depth_summary_figure(grid, [(2, 0), (2, 3)])):
        assert fig.axes[0].get_ylabel()
        chance = [line for line in fig.axes[0].lines if line.get_label().startswith("均匀猜测")]
        assert len(chance) == 1 and chance[0].get_ydata()[0] == pytest.approx(CopyTask().chance_loss)
        plt.close(fig)
    fig = horizon_figure({"a": runs[:2], "b": runs[2:]}, shade=2, smooth=2)
    assert len(fig.axes[0].get_legend().get_texts()) == 3 and fig.axes[0].get_ylabel()
    plt.close(fig)
    clip = {None: runs[:2], 1.0: runs[:2]}
    fig = clipping_figure(clip, 1, 1.0, bad_steps=(2,))
    assert fig.axes[0].get_yscale() == "log" and "种子 1" in fig.axes[0].get_title()
    plt.close(fig)


def test_chapter_11_exercises_recognise_typical_mistakes(capsys):
    assert attnbook.check("12-1", lr_at(9, 1e-2, 30))
    assert not attnbook.check("12-1", 1e-2 * 9 / 30)
    assert "差了一步" in capsys.readouterr().out
    assert attnbook.check("12-2", " pre ")
    assert not attnbook.check("12-2", "post")
    assert "norm" in capsys.readouterr().out
    assert attnbook.check("12-3", math.sqrt(128) / 3)
    assert not attnbook.check("12-3", 128 / 9)
    assert "标准差" in capsys.readouterr().out


def test_train_many_reads_its_default_worker_count_from_the_environment(monkeypatch):
    """make test sets ATTNBOOK_WORKERS=1 (its two notebook runs already share the cores)."""
    import attnbook.pages.ch12 as page

    calls = []
    monkeypatch.setattr(page, "_pool", lambda workers: calls.append(workers) or (_ for _ in ()).throw(AssertionError))
    monkeypatch.setenv("ATTNBOOK_WORKERS", "1")
    jobs = [dict(model_kwargs=SMALL, runs=[dict(seed=0)], steps=1)] * 2
    assert len(train_many(jobs)) == 2 and calls == []  # one process: no pool at all
