"""Chapter 09's 找 bug exercises (09-3 … 09-7): five small attention functions, each with one masking bug.

Each bug has the shape of one that public code really shipped (the chapter cites the reports). The
reader's fix is judged by **behaviour**, never by its text. The task every function must solve
(the contract; the judge never calls the function with anything else):

    attention(Q, K, V, lengths) -> out        (or (out, attn_weights))
    Q, K, V: [batch, num_heads, seq_len, d_k], the same shape, float32; lengths: [batch] (long),
    1 <= lengths[b] <= seq_len. The batch is LEFT-padded: the last lengths[b] positions of sentence b
    are real tokens. Causal self-attention over the real tokens, scores scaled by 1/sqrt(d_k); a
    query with no visible key (a padding position in front) outputs 0, as
    F.scaled_dot_product_attention does with a boolean mask (torch >= 2.5).

Every exercise has its own judge. It checks first **the property that its bug breaks**, then the
correctness every fix shares, and says which is which, in Chinese:

* ① 09-3 polarity: each real token's weights fall exactly on the keys it may see (itself and the
  real tokens before it); blocked keys (the future, padding) get none;
* ② 09-4 padding: padding keys get no weight, and changing the padding positions' Q, K, V leaves the
  real tokens' outputs unchanged;
* ③ 09-5 scale: the weights are softmax(q·k / sqrt(d_k)) with d_k = Q.size(-1), measured on inputs
  with different num_heads and d_k (so dividing by sqrt(d_model), by d_k or by a constant is caught);
* ④ 09-6 diagonal: every real token sees itself;
* ⑤ 09-7 fully masked queries: they output 0 (not NaN, not uniform), and a backward pass with the
  loss over real tokens only gives finite gradients for Q, K and V (the lesson of the chapter).

Shared correctness: no future leak (weights and a perturbation of every position), no weight on
padding keys, rows of real tokens sum to 1, outputs equal the reference (SDPA) on four input shapes
and gradients equal those of :func:`fixed` on three of them, inputs left unchanged (no in-place edits). The weights are read with the V = I trick
of chapter 09, in a form that keeps the contract: V = eye(seq_len, d_k) with d_k >= seq_len.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import torch
import torch.nn.functional as F

from ..book import causal_mask
from ._answers import show
from ._core import Expected, exercise


@dataclass(frozen=True)
class Probe:
    """One input the judge feeds to the reader's function (always within the contract)."""

    batch: int
    num_heads: int
    seq_len: int
    d_k: int
    lengths: tuple[int, ...]
    seed: int

    def inputs(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        g = torch.Generator().manual_seed(self.seed)
        shape = (self.batch, self.num_heads, self.seq_len, self.d_k)
        Q, K, V = (torch.randn(shape, generator=g) for _ in range(3))
        return Q, K, V, torch.tensor(self.lengths)

    def words(self) -> str:
        return (f"batch = {self.batch}、num_heads = {self.num_heads}、seq_len = {self.seq_len}、d_k = {self.d_k}、"
                f"lengths = {list(self.lengths)}")


#: The inputs of the judge. All but the third have d_k >= seq_len, so that V = eye(seq_len, d_k) reads
#: the weights; the third has d_k < seq_len (a function that confuses the two dimensions fails there).
#: The last pads every sentence (max(lengths) < seq_len, as with fixed-length buckets or a KV-cache
#: batch): a fix that measures the left padding from the longest sentence instead of from seq_len
#: passes the first three (part3 review W1) and fails there.
PROBES = (
    Probe(batch=3, num_heads=2, seq_len=6, d_k=8, lengths=(6, 4, 1), seed=0),
    Probe(batch=2, num_heads=3, seq_len=5, d_k=7, lengths=(5, 2), seed=1),
    Probe(batch=2, num_heads=1, seq_len=7, d_k=3, lengths=(7, 3), seed=2),
    Probe(batch=2, num_heads=2, seq_len=6, d_k=8, lengths=(4, 2), seed=3),
)
#: The probes on which the judge also runs the backward pass.
GRAD_PROBES = (0, 2, 3)
TOL = 1e-4  # float32 outputs against a float64 reference
#: A blocked position that gets less weight than this (but not 0) was blocked with a finite fill value.
FAINT = 1e-3
TOO_SMALL_FILL = "被遮位置的分数不够小：填充值是不是一个不够小的有限数（例如 −12）？"
#: Said with NaN rows and NaN gradients: the reader may have a torch.where whose condition is stale
#: (part3 review C1: bug ② fixed in masked_fill, but torch.where still tests the causal mask alone).
STALE_WHERE = ("如果你已经用 torch.where 处理这些行，检查它的条件：它没有认出这些行一个键都看不到"
               "（例如条件里的掩码 any(-1) 对左侧的填充行仍是 True）。")


def _percent(share: float) -> str:
    """A share of the weight as a percentage with two significant digits (0.84 → 84%, 0.000006 → 0.0006%)."""
    return f"{share:.0%}" if share >= 0.01 else f"{100 * share:.2g}%"


def _real(lengths: torch.Tensor, seq_len: int) -> torch.Tensor:
    """Left padding: bool [batch, seq_len], True where the token is real."""
    return torch.arange(seq_len) >= seq_len - lengths[:, None]


def _keep(lengths: torch.Tensor, seq_len: int) -> torch.Tensor:
    """The intended mask, bool [batch, 1, seq_len, seq_len], True = may attend."""
    return _real(lengths, seq_len)[:, None, None, :] & causal_mask(seq_len)


def reference(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """The behaviour every fix must have: SDPA with the intended boolean mask (fully masked rows -> 0)."""
    return F.scaled_dot_product_attention(Q, K, V, attn_mask=_keep(lengths, Q.size(-2)))


def fixed(Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A correct function written out (the model answer of every bug)."""
    seq_len, d_k = Q.size(-2), Q.size(-1)
    keep = _keep(lengths, seq_len)  # [batch, 1, seq_len, seq_len]
    scores = Q @ K.transpose(-2, -1) / math.sqrt(d_k)
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    weights = torch.where(keep.any(-1, keepdim=True), weights, 0.0)
    return weights @ V


def _weights64(Q: torch.Tensor, K: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """Reference weights in float64, [batch, num_heads, seq_len, seq_len] (fully masked rows 0)."""
    Q, K = Q.double(), K.double()
    keep = _keep(lengths, Q.size(-2))
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
    weights = torch.softmax(scores.masked_fill(~keep, float("-inf")), dim=-1)
    return torch.where(keep.any(-1, keepdim=True), weights, 0.0)


# ---- running the reader's function ---------------------------------------------------------------------


class Broken(Exception):
    """The function cannot be judged at all (it raised, or returned something else); Chinese message."""


def _first_line(error: BaseException) -> str:
    try:
        text = str(error).strip().splitlines()
    except Exception:  # an exception whose message itself fails
        return ""
    return (text[0] if text else "")[:200]


class Runner:
    """Calls the reader's function on copies of the inputs and remembers what it did to them."""

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.mutated: set[str] = set()

    def _output(self, result: Any, V: torch.Tensor) -> torch.Tensor:
        if isinstance(result, (tuple, list)) and result:
            result = result[0]  # (out, attn_weights) is fine too
        if not isinstance(result, torch.Tensor):
            raise Broken(f"函数应返回输出张量 out（或 (out, attn_weights)），收到的是 {type(result).__name__}："
                         f"{show(result)}。")
        if tuple(result.shape) != tuple(V.shape):
            raise Broken(f"输出的形状应与 V 相同：{tuple(V.shape)}（[batch, num_heads, seq_len, d_k]），"
                         f"收到 {tuple(result.shape)}。")
        if result.is_complex() or not result.is_floating_point():
            raise Broken(f"输出应是浮点张量，收到的 dtype 是 {result.dtype}。")
        if result.dtype in (torch.float16, torch.bfloat16):  # fourth Part III review N8: rounding, not a mask bug
            raise Broken(f"输出的 dtype 是 {result.dtype}：输入是 float32，输出也应是 float32"
                         "（16 位浮点的舍入误差比这里的检查容差大，没法判断掩码对不对）。")
        if result.layout != torch.strided or result.device.type != "cpu":
            raise Broken(f"输出应是 CPU 上的普通（稠密）张量，收到的是 {result.layout}、{result.device} 上的张量。")
        return result

    def __call__(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor, *,
                 grad: bool = False) -> torch.Tensor:
        try:
            return self._call(Q, K, V, lengths, grad=grad)
        except Broken as broken:
            where = (f"（判题的输入：batch = {Q.size(0)}、num_heads = {Q.size(1)}、seq_len = {Q.size(2)}、"
                     f"d_k = {Q.size(3)}、lengths = {lengths.tolist()}）")
            raise Broken(f"{broken}{where}") from None

    def _call(self, Q: torch.Tensor, K: torch.Tensor, V: torch.Tensor, lengths: torch.Tensor, *,
              grad: bool) -> torch.Tensor:
        """out as float64 (detached unless ``grad``); Q, K, V are passed as copies (non-leaf when ``grad``)."""
        args = [t * 1.0 if grad else t.clone() for t in (Q, K, V)] + [lengths.clone()]
        before = [t.detach().clone() for t in args]
        try:
            result = self.fn(*args)
        except Broken:
            raise
        except Exception as error:  # the reader's code may fail in any way
            hint = ""
            if isinstance(error, TypeError) and "argument" in _first_line(error):
                hint = "函数应写成 attention(Q, K, V, lengths)，接受四个参数。"
            raise Broken(f"函数运行时报错 {type(error).__name__}：{_first_line(error)}。{hint}".rstrip()) from None
        for name, old, new in zip(("Q", "K", "V", "lengths"), before, args):
            if new.shape != old.shape or not torch.equal(new.detach(), old):
                self.mutated.add(name)
        out = self._output(result, V)
        return out.double() if grad else out.detach().double()


# ---- what the judge measures -------------------------------------------------------------------------


@dataclass
class Symptom:
    kind: str
    text: str


def _pairs(mask: torch.Tensor, limit: int = 2) -> list[tuple[int, int, int]]:
    """Up to ``limit`` (sentence, query, key) triples where mask [batch, num_heads, L, L] is True."""
    found = mask.any(dim=1).nonzero().tolist()  # over heads
    return [tuple(p) for p in found[:limit]]


def _rows(mask: torch.Tensor, limit: int = 2) -> list[tuple[int, int]]:
    """Up to ``limit`` (sentence, query) pairs where mask [batch, num_heads, L] is True."""
    return [tuple(p) for p in mask.any(dim=1).nonzero().tolist()[:limit]]


def _say_pairs(pairs: list[tuple[int, int, int]]) -> str:
    return "、".join(f"第 {b} 句的 (查询 {i}, 键 {j})" for b, i, j in pairs)


def _say_rows(rows: list[tuple[int, int]]) -> str:
    return "、".join(f"第 {b} 句的查询 {i}" for b, i in rows)


def _scale_of(W: torch.Tensor, Q: torch.Tensor, K: torch.Tensor, live: torch.Tensor) -> float | None:
    """The factor c with W ≈ softmax(c · q·k) over the keys a row weights, or None if W is not of that form."""
    scores = Q.double() @ K.double().transpose(-2, -1)  # [batch, num_heads, L, L]，不缩放
    found = []
    for b, h, i in live.nonzero().tolist():
        w, s = W[b, h, i], scores[b, h, i]
        used = w > 1e-6
        if int(used.sum()) < 2:
            continue
        x, y = s[used], w[used].log()
        x_c, y_c = x - x.mean(), y - y.mean()
        if float((x_c ** 2).sum()) < 1e-6:
            continue
        c = float((x_c * y_c).sum() / (x_c ** 2).sum())
        if float((y_c - c * x_c).abs().max()) > 1e-3:
            return None  # not a softmax of scaled dot products (e.g. a 0/1 bias was added)
        found.append(c)
    if not found:
        return None
    found.sort()
    return found[len(found) // 2]


def _scale_words(c: float, probe: Probe) -> str:
    """Name the scaling a reader used, from the factor c measured on ``probe``."""
    d_k, d_model, L = probe.d_k, probe.d_k * probe.num_heads, probe.seq_len
    known = {1.0: "没有缩放", 1 / d_k: "除以的是 d_k（没开平方）", 1 / math.sqrt(d_model): "除以的是 √d_model（num_heads × d_k）",
             1 / math.sqrt(L): "除以的是 √seq_len（Q.size(-2)），不是 √d_k", math.sqrt(d_k): "乘了 √d_k，方向反了",
             1 / d_model: "除以的是 d_model"}
    for value, words in known.items():
        if abs(c / value - 1) < 1e-3:
            # measured on one input: a constant written into the code gives the same factor there (sixth review M1)
            return f"（{words}；也可能是写死的常数，在这个输入上正好等于它）" if value != 1.0 else f"（{words}）"
    return ""


def _examine(fn: Callable) -> list[Symptom]:
    """Every symptom the function shows on the judge's inputs (raises Broken if it cannot be run)."""
    run = Runner(fn)
    symptoms: list[Symptom] = []

    def add(kind: str, text: str) -> None:
        if all(s.kind != kind for s in symptoms):
            if index > 0 and probe.words() not in text:  # name an input the reader may not think of (fifth review M2)
                body, end = (text[:-1], "。") if text.endswith("。") else (text, "")
                text = f"{body}（判题的输入：{probe.words()}）{end}"
            symptoms.append(Symptom(kind, text))

    for index, probe in enumerate(PROBES):
        Q, K, V, lengths = probe.inputs()
        B, H, L = probe.batch, probe.num_heads, probe.seq_len
        real = _real(lengths, L)  # [batch, L]
        keep = _keep(lengths, L).expand(B, H, L, L)  # [batch, num_heads, L, L]
        dead = ~keep.any(-1)  # [batch, num_heads, L]：一个键都不该看的查询（左侧填充位）
        live = ~dead
        future = torch.ones(L, L, dtype=torch.bool).triu(1).expand(B, H, L, L)
        pad_key = ~real[:, None, None, :].expand(B, H, L, L)
        if index == 0:
            pad_cause = "填充掩码没有用上，或者用在了查询（行）上。"
        else:  # the earlier inputs passed this check: the mask is used, but marks the wrong positions here
            pad_cause = ("前几组输入上没有这个问题，所以填充掩码用上了，只是在这组输入上把一些填充位当成了真实的词"
                         + ("；这组输入里每一句都有填充，最长的句子也比 seq_len 短" if max(probe.lengths) < L else "")
                         + "。")

        out = run(Q, K, V, lengths)
        ref = fixed(Q.double(), K.double(), V.double(), lengths)
        if not out[live].isfinite().all():
            add("nan_live", f"有真实的词输出了 NaN 或 inf（例如{_say_rows(_rows(~out.isfinite().all(-1) & live))}）："
                            "它本该至少看得见自己。")
        dead_out = out[dead]
        if dead_out.numel() and not dead_out.isnan().any() and dead_out.abs().max() > 1e-6 and L > probe.d_k:
            add("dead", "整行被遮的查询（左侧的填充位）应当输出 0（与 SDPA 相同），你的输出不是 0。")

        if probe.d_k >= L:  # 用 V = eye(L, d_k) 读出权重：输出的前 L 列就是权重
            eye = torch.eye(L, probe.d_k).expand(B, H, L, probe.d_k).contiguous()
            W = run(Q, K, eye, lengths)[..., :L]  # [batch, num_heads, L_q, L_k]
            W0 = W.nan_to_num(0.0)
            W_ref = _weights64(Q, K, lengths)
            tiny = 1e-6
            looked = (W0.abs() > tiny) & live[..., None]
            # 右侧填充的掩码（第 9 章的 padding_mask）用在了左侧填充的批次上：权重恰好落在镜像的位置
            right = torch.arange(L) < lengths[:, None]  # [batch, L]
            mirror = (right[:, None, None, :] & causal_mask(L)).expand(B, H, L, L)
            mirrored = bool((~real).any()) and bool(((W0.abs() > tiny) == mirror).all())
            if mirrored:
                add("pad", "你的掩码把每句的前 lengths[b] 个位置当成了真实的词，但本题是左侧填充："
                           "真实的词在最后 lengths[b] 个位置，填充位在前面。"
                           "（第 9 章的 padding_mask 是为右侧填充写的。）")
            if (looked & future).any():
                leaked = (W0 * future).sum(-1)[live].max().item()
                where = _say_pairs(_pairs(looked & future))
                if leaked < FAINT:
                    add("leak", f"未来位置分到了极小但不是 0 的权重（例如{where}，一行里最多 {_percent(leaked)}）："
                                f"{TOO_SMALL_FILL}")
                else:
                    add("leak", f"未来泄漏：真实的词看到了它后面的词（例如{where} 的权重不是 0）。"
                                "因果掩码没起作用，或者极性反了。")
            if (looked & pad_key & ~future).any():
                worst = (W0 * pad_key).sum(-1)[live].max().item()
                where = _say_pairs(_pairs(looked & pad_key & ~future))
                if worst < FAINT:
                    add("pad", f"填充位（键）分到了极小但不是 0 的权重（例如{where}，一行里最多 {_percent(worst)}）："
                               f"{TOO_SMALL_FILL}")
                else:
                    add("pad", f"填充位（键）分到了权重（例如{where}，一行里最多 {_percent(worst)}）：{pad_cause}")
            self_weight = torch.diagonal(W0, dim1=-2, dim2=-1)  # [batch, num_heads, L]
            blind = (self_weight <= 1e-30) & live
            # 左侧填充的边界差了一位：每句第一个真实的词（位置 L − lengths[b]）也被当成了填充位，
            # 它看不见自己，后面的真实词也看不见它（第 8 轮审读：曾被报成“对角线被遮了”）
            first = torch.arange(L)[None, :] == (L - lengths)[:, None]  # [batch, L]
            first_q = first[:, None, :].expand(B, H, L)
            first_k = first[:, None, None, :].expand(B, H, L, L)
            off_by_one = (bool(blind.any()) and not bool((blind & ~first_q).any())
                          and bool((W0[keep & first_k & live[..., None]] <= 1e-30).all()))
            if off_by_one:
                mirrored = True  # 漏看的键与看不见自己都是它的后果，不再另报
                add("pad", f"每句第一个真实的词也被当成了填充位（例如{_say_rows(_rows(blind))}）：它看不见自己，"
                           "后面的词也看不见它。真实的词是最后 lengths[b] 个位置，从 seq_len − lengths[b] 开始："
                           "检查掩码边界上的比较（差了一位）。")
            if mirrored:
                pass  # 已由“右侧填充的掩码”或“边界差一位”一条说明；对角线和漏看的键都是它的后果
            elif blind.any():
                add("diag", f"有真实的词看不见自己（例如{_say_rows(_rows(blind))}，对自己的权重是 0）："
                            "对角线被遮了，而每个真实的词都应看得见自己。")
            eye_L = torch.eye(L, dtype=torch.bool)
            missed = (W0 <= 1e-30) & keep & ~eye_L & live[..., None]
            if missed.any() and not mirrored:
                add("missing", f"有真实的词没看到它该看的键（例如{_say_pairs(_pairs(missed))} 的权重是 0）："
                               "掩码遮多了，或者极性反了。")
            sums = W0.sum(-1)
            off = ((sums - 1).abs() > TOL) & live & ~W.isnan().any(-1)
            if off_by_one:
                off &= ~first_q  # 这些行整行被遮，已由“边界差一位”一条说明
            if off.any():
                b, i = _rows(off, 1)[0]
                total = sums[b, :, i][(sums[b, :, i] - 1).abs().argmax()].item()  # 偏得最多的那个头
                add("sum", f"有的真实词权重之和不是 1（例如第 {b} 句的查询 {i}，和为 {total:.6g}）："
                           "它该看的键被多遮了，或者 softmax 之后把不该置 0 的行置了 0。")
            W_dead = W[dead]  # [n_dead, L]
            if W_dead.numel():
                if W_dead.isnan().any():
                    add("dead", "整行被遮的查询（左侧的填充位）输出了 NaN：softmax 面对一整行 −∞。"
                                "即使这些行不进损失，NaN 也会进入梯度，并在下一层传给真实的词。"
                                f"{STALE_WHERE}")
                elif (W_dead - 1 / L).abs().max().item() < 1e-5:
                    add("dead", "整行被遮的查询（左侧的填充位）把权重平均分给了所有键（例如用 −1e9 或 torch.finfo(dtype).min "
                                "填充，或在 softmax 之前把整行分数换成同一个数）。这不影响真实词的输出，只是不符合本题的约定：这些行应输出 0（与 SDPA 配布尔掩码时相同）。"
                                "用 SDPA 时，只有布尔掩码或 −inf 的加性掩码会让 SDPA 把这些行输出 0。")
                elif (W_dead - torch.eye(L).expand(B, H, L, L)[dead]).abs().max().item() < 1e-5:
                    add("dead", "整行被遮的查询（左侧的填充位）看了它自己（“补救 1”：keep | eye）。训练里这样做没问题，"
                                "但本题约定这些行输出 0（与 SDPA 相同）。")
                elif W_dead.abs().max().item() > 1e-6:
                    add("dead", "整行被遮的查询（左侧的填充位）应当输出 0（与 SDPA 相同），你的输出不是 0。")
            c = _scale_of(W, Q, K, live & W.isfinite().all(-1))
            want = 1 / math.sqrt(probe.d_k)
            if c is not None and abs(c / want - 1) > 1e-3:
                add("scale", f"缩放不对：在 num_heads = {H}、d_k = {probe.d_k} 的输入上，你的权重相当于把 q·k 乘以 {c:.3g}"
                             f"{_scale_words(c, probe)}：与每个头的 √d_k 对应的缩放不一致。")
            elif c is None and index == 0:
                add("scale?", "权重不是 softmax(q·k × 某个常数) 的样子（例如分数上加了 0/1 这样的偏置），"
                              "没法检查缩放：先让掩码和 softmax 都对。")
            if not any(s.kind in ("leak", "pad", "diag", "missing", "sum", "scale", "scale?", "nan_live")
                       for s in symptoms):
                wrong = ((W - W_ref).abs() > TOL) & live[..., None]
                if wrong.any():
                    add("values", f"掩码和缩放都对，但权重与参考实现不一致（例如{_say_pairs(_pairs(wrong))}）："
                                  "检查打分 Q @ K.transpose(-2, -1) 和 softmax 的维度（dim=-1）。")

        if index == 0:  # 扰动：改动位置 t 的词，前面的真实词的输出不该变；改动填充位，真实词的输出不该变
            for t in range(1, L):
                Q2, K2, V2 = Q.clone(), K.clone(), V.clone()
                g = torch.Generator().manual_seed(100 + t)
                for x in (Q2, K2, V2):
                    x[:, :, t] = torch.randn(x[:, :, t].shape, generator=g)
                before = live[:, :, :t]
                changed = ((run(Q2, K2, V2, lengths) - out)[:, :, :t].nan_to_num(0.0).abs().amax(-1) > 1e-5) & before
                if changed.any():
                    add("leak", f"未来泄漏：改动第 {t} 个位置的词，它前面的真实词（例如{_say_rows(_rows(changed))}）的输出"
                                "跟着变了。即使权重是 0，归一化时也不该算进未来的分数。")
                    break
        pad_pos = ~real[:, None, :, None]  # [batch, 1, L, 1]
        if pad_pos.any():
            g = torch.Generator().manual_seed(200 + index)
            Q2, K2, V2 = (torch.where(pad_pos, torch.randn(x.shape, generator=g) * 3, x) for x in (Q, K, V))
            changed = ((run(Q2, K2, V2, lengths) - out).nan_to_num(0.0).abs().amax(-1) > 1e-5) & live
            if changed.any():
                add("pad", f"改动填充位上的 Q、K、V，真实的词（例如{_say_rows(_rows(changed))}）的输出跟着变了：{pad_cause}")

        if (out - ref).nan_to_num(1e9).abs().max() > TOL and not symptoms:
            diff = (out - ref).abs().max().item()
            add("ref", f"输出与参考实现（带正确布尔掩码的 F.scaled_dot_product_attention）不一致：在 {probe.words()} "
                       f"的输入上最多相差 {diff:.2g}。")

        if index in GRAD_PROBES:  # 反向传播：损失只算真实的词，Q、K、V 的梯度都应是有限数，并与参考实现一致
            leaves = [x.clone().requires_grad_() for x in (Q, K, V)]
            g = torch.Generator().manual_seed(300 + index)
            weight = torch.randn(out.shape, generator=g, dtype=torch.float64)
            out_g = run(*leaves, lengths, grad=True)
            if not out_g.requires_grad:
                add("grad_ref", "输出和输入之间没有梯度（out.requires_grad 是 False）：函数里用了 .detach()、.numpy() "
                                "或 torch.no_grad()，这样的注意力没法训练。")
            else:
                try:  # 与本章“整行被遮”一节相同：损失只取真实的词那几行
                    (out_g * weight).transpose(1, 2)[real].sum().backward()
                except Exception as error:
                    raise Broken(f"对输出做反向传播时报错 {type(error).__name__}：{_first_line(error)}。") from None
                grads = [x.grad if x.grad is not None else torch.zeros_like(x) for x in leaves]
                bad = [name for name, g_ in zip("QKV", grads) if not g_.isfinite().all()]
                if bad:
                    forward_ok = out[dead].isfinite().all() and out[live].isfinite().all()
                    why = ("前向输出里没有 NaN，说明 NaN 被事后换成了 0（例如 nan_to_num），或者 −∞ 是用加法加到分数上的："
                           "反向时 0 × NaN 仍是 NaN。" if forward_ok else "")
                    add("grad", f"反向传播后 {'、'.join(bad)} 的梯度里有 NaN 或 inf（损失只算真实的词，见本章“整行被遮”一节）。"
                                f"{why}")
                else:
                    ref_leaves = [x.double().requires_grad_() for x in (Q, K, V)]
                    (fixed(*ref_leaves, lengths) * weight).transpose(1, 2)[real].sum().backward()
                    off = max((g_.double() - r.grad).abs().max().item() for g_, r in zip(grads, ref_leaves))
                    if off > 1e-3 and not symptoms:
                        add("grad_ref", "前向输出对了，但梯度与参考实现不一致：是不是用了 .detach()、.data 或 torch.no_grad()？")

    if run.mutated:
        names = "、".join(sorted(run.mutated, key="QKVlengths".index))
        symptoms.append(Symptom("mutates", f"函数原地改动了传入的 {names}（例如 Q.mul_、Q /= …、masked_fill_）："
                                           "调用它的代码里的张量也跟着变了。请改成不改动输入的写法。"))
    return symptoms


# ---- one judge per bug -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Bug:
    number: str
    name: str
    kinds: frozenset[str]
    fixed: str  # said when the property holds


BUGS = {
    "09-3": Bug("①", "布尔掩码的极性", frozenset({"leak", "pad", "diag", "missing", "nan_live"}),
                "掩码的极性对了（True = 保留）：每个真实的词只看自己和前面的真实词，未来和填充位的权重都是 0。"),
    "09-4": Bug("②", "填充掩码", frozenset({"pad"}),
                "填充掩码用上了：填充位作为键分不到权重，改动填充位也不影响真实词的输出。"),
    "09-5": Bug("③", "多头的缩放因子", frozenset({"scale", "scale?"}),
                "缩放对了：分数除以 √d_k，d_k = Q.size(-1) 是每个头的维度。"),
    "09-6": Bug("④", "对角线", frozenset({"diag"}),
                "对角线保留了：你的掩码当成真实词的每个位置都看得见自己。"),
    "09-7": Bug("⑤", "整行被遮的查询", frozenset({"dead", "grad", "grad_ref"}),
                "整行被遮的查询输出 0（不是 NaN，也不是平均），只对真实的词算损失时，Q、K、V 的梯度也全是有限数。"),
}
FLOAT_MASK = ("权重不像 softmax(q·k × 常数) 的样子：分数上像是加了偏置。例如把 0/1 的浮点掩码交给了 SDPA："
              "浮点掩码是加到分数上的，不会把位置遮掉。")
SHARED = ("输出在四组 batch、num_heads、seq_len、d_k 的输入上（其中一组每句都有填充）与参考实现（SDPA）一致，"
          "梯度在其中三组上与参考实现一致")


def _lines(symptoms: list[Symptom]) -> str:
    return "".join(f"\n  - {s.text}" for s in symptoms)


def judge_for(key: str) -> Callable[[Any], tuple[bool, str]]:
    """The judge of exercise ``key`` (09-3 … 09-7): its bug's property first, then the shared correctness."""
    bug = BUGS[key]

    def judge(fn: Any) -> tuple[bool, str]:
        if not callable(fn):
            return False, f"答案应是一个函数 attention(Q, K, V, lengths)，收到的是 {type(fn).__name__}：{show(fn)}。"
        try:
            symptoms = _examine(fn)
        except Broken as broken:
            return False, str(broken)
        if key == "09-3":  # ① 里这条说的是浮点掩码的原因：它被加到了分数上
            symptoms = [Symptom(s.kind, FLOAT_MASK) if s.kind == "scale?" else s for s in symptoms]
        elif key != "09-5" and len(symptoms) > 1:  # “没法检查缩放”只对 ③ 有用，其余题目里它只是噪声
            symptoms = [s for s in symptoms if s.kind != "scale?"]
        mine = [s for s in symptoms if s.kind in bug.kinds]
        others = [s for s in symptoms if s.kind not in bug.kinds]
        if not symptoms:
            return True, f"bug {bug.number} 修好了：{bug.fixed}其余检查也都通过：{SHARED}。"
        if mine:
            text = f"bug {bug.number}（{bug.name}）还没修好：{_lines(mine)}"
            return False, text + (f"\n另外还有：{_lines(others)}" if others else "")
        return False, f"bug {bug.number}（{bug.name}）修好了：{bug.fixed}但还有别的问题：{_lines(others)}"

    return judge


TITLES = {
    "09-3": "找 bug ①：布尔掩码的极性",
    "09-4": "找 bug ②：造好了却没用上的填充掩码",
    "09-5": "找 bug ③：多头的缩放因子",
    "09-6": "找 bug ④：连对角线一起遮的因果掩码",
    "09-7": "找 bug ⑤：整行被遮的查询",
}


def _register(key: str, title: str) -> None:
    number = "①②③④⑤".index(BUGS[key].number) + 1

    @exercise(key, title)
    def _make() -> Expected:
        return Expected(value=fixed, judge=judge_for(key),
                        unanswered=f"把 fix_{number} 换成你修好的函数，再运行这个单元格。")


for _key, _title in TITLES.items():
    _register(_key, _title)
