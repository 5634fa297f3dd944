"""Reading a reader's answer: whatever they typed becomes text or a float array, or a Chinese reason why not.

Two entry points, both total (they never raise anything but :class:`Unreadable`):

* :func:`as_text` for choice answers: ``"b"``, ``"Ｂ"`` (full-width, from a Chinese IME), ``" B。"``,
  ``["B"]`` and ``np.str_("B")`` all become ``"B"``-like text (NFKC, stripped, no trailing punctuation).
* :func:`as_array` for numeric answers: numbers, numeric strings (also full-width digits,
  thousands separators such as ``"98,496"``, fractions such as ``"1/8"``, lists typed as "4、5、6、7", shapes as
  "2×8×10×64", a unit or "约" around one number; see :func:`parse_text`), nested lists/tuples, NumPy arrays and tensors (any dtype, with or
  without grad, on any device) become a float64 array.
"""
from __future__ import annotations

import ast
import math
import numbers
import re
import unicodedata
from fractions import Fraction
from typing import Any

import numpy as np

#: Characters dropped from both ends of a text answer (after NFKC): spaces, quotes, brackets and the
#: punctuation a sentence ends with, in ASCII and Chinese forms.
_STRIP = " \t\r\n\u3000'\"`“”‘’「」『』()[]{}【】《》<>.,;:!?。，、；：！？…~～"
#: A number written with thousands separators, as the book prints parameter counts ("787,968").
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?")
#: The same with spaces between the groups of three digits ("98 496"); any other space separates list items.
_THOUSANDS_SPACED = re.compile(r"[+-]?\d{1,3}(?: \d{3})+(?:\.\d*)?")
#: Whitespace between the end of one number (or of a nested list) and the start of the next, as NumPy
#: prints arrays ("[2 8 10 64]", "[[1 2]\n [3 4]]"): it separates items, so it becomes ", ".
_ITEM_GAP = re.compile(r"(?:(?<=[\d.\])])|(?<=True)|(?<=False))\s+(?=[-+\d.\[(]|True|False)")
#: Punctuation that may end an answer (kept out of _STRIP's brackets, which the list reading needs).
_END = " \t\r\n\u3000。.!?！？;；:：…"
#: An approximation word in front of a number: "约3.969", "≈0.2955", "~ 0.3" (NFKC makes ～ a ~).
_APPROX = re.compile(r"^(?:大约是?|大概是?|约为|约等于|约|≈|≒|~|至少|≥|>=|第)\s*")
#: A unit after a number: "98496个", "3.969倍", "21 步".
_UNIT = re.compile(r"\s*[\u4e00-\u9fff]+$")
#: Words of magnitude: "1万" is 10000, not 1 with a unit.
_MAGNITUDE = set("十百千万亿兆")
#: Hanzi or an approximation sign in an answer that is no number.
_WORDS = re.compile(r"[\u4e00-\u9fff≈≒]")
#: Whole numbers joined by multiplication signs, as the book writes shapes: "2 × 8 × 10 × 64", "2x8", "2*8".
_TIMES = re.compile(r"\d+(?:\s*[×xX*]\s*\d+)+")
_TIMES_SIGN = re.compile(r"\s*[×xX*]\s*")
#: What ``print`` puts around numbers: "tensor([4, 5])", "torch.Size([2, 8])", "array([0.57, 0.43], dtype=float32)".
#: The wrapper's name goes (its parentheses stay and group what they held) …
_WRAPPER = re.compile(r"\b(?:torch\.|np\.|numpy\.)?(?:tensor|Size|array)(?=\()")
#: … and so do the keyword arguments print adds after the numbers (dtype=…, device=…, grad_fn=<…>).
_WRAPPER_KEYWORDS = re.compile(r",\s*(?:dtype|device|requires_grad|grad_fn)\s*=\s*(?:<[^<>]*>|[^,()\[\]]*)")
#: Two bracketed lists separated by ";", "和" or "与" ("[3,7,12];[3,7,7]", "[3,7,12] 和 [3,7,7]") are two items.
_LIST_SEMICOLON = re.compile(r"(?<=[\])])\s*(?:;|和|与)\s*(?=[\[(])")
#: A square root written with the radical sign: "√256" is 16, "1/√64" is 1/8.
_ROOT = re.compile(r"(?:√|sqrt)\s*(?:\(([^()]*)\)|(\d+(?:\.\d*)?))")
#: A fraction inside a list ("27/50, 8/25", "[1/2, 1/2]"): its value (a lone "1/8" is read by Fraction).
_SLASH = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)(?![\w.])")
#: A power written with superscripts ("4²", "10³", "10⁻³"), read before NFKC would make "4²" into "42".
_SUPERSCRIPT = re.compile(r"(\d+(?:\.\d+)?)\s*(⁻?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)")
_SUPER_DIGITS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
#: A Chinese fraction "8分之1" / "八分之一" (denominator first): 1/8.
_CN_FRACTION = re.compile(r"([0-9０-９]+|[一二三四五六七八九十])\s*分之\s*([0-9０-９]+|[一二三四五六七八九十])")
_CN_DIGITS = {c: str(i) for i, c in enumerate("一二三四五六七八九十", start=1)}
#: A percentage: "57%" is 0.57.
_PERCENT = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*%")
#: Nested lists deeper than this are not an answer to any exercise of the book.
_MAX_DEPTH = 8
#: Larger answers are not read element by element (their shape alone is wrong for every exercise).
_MAX_ITEMS = 100_000


class Unreadable(Exception):
    """The answer cannot be read as the kind of value the exercise asks for; ``str(self)`` says why, in Chinese."""


def show(value: Any, limit: int = 60) -> str:
    """A short, safe description of ``value`` for feedback (never raises, never prints a huge tensor)."""
    try:
        shape = getattr(value, "shape", None)
        if shape is not None and not isinstance(value, (str, bytes)):
            size = int(np.prod(tuple(shape))) if len(tuple(shape)) else 1
            if size > 8:
                return f"{type(value).__name__}，形状 {tuple(int(s) for s in shape)}"
        if callable(value) and not isinstance(value, type):
            return f"函数 {getattr(value, '__name__', type(value).__name__)}"
        text = repr(value)
    except Exception:  # a reader's object whose repr fails
        return f"一个 {type(value).__name__} 对象"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def clean_text(text: str) -> str:
    """NFKC (full-width → ASCII), then strip spaces, quotes, brackets and trailing punctuation."""
    # a leading "." stays: ".2955" is 0.2955 (only a trailing one is punctuation)
    return unicodedata.normalize("NFKC", text).lstrip(_STRIP.replace(".", "")).rstrip(_STRIP)


def as_text(value: Any) -> str | None:
    """Text answers as clean text; a one-element list/tuple/array of text counts as that text.

    Returns None when ``value`` is not text at all (a number, a function, …).
    """
    for _ in range(_MAX_DEPTH):
        if isinstance(value, (list, tuple)) and len(value) == 1:
            value = value[0]
        elif isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "US":
            value = value.reshape(()).item()
        else:
            break
    if isinstance(value, bytes):
        try:
            value = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
    if isinstance(value, str):  # np.str_ is a str
        return clean_text(value)
    return None


def lead(text: str) -> str:
    """``text`` with a leading space if it starts with a digit, a Latin letter or a bracket.

    Chinese typesetting in this book puts a space between hanzi and Latin text or digits:
    f"答案应是{lead(form)}" gives "答案应是 4 个数" and "答案应是一个数".
    """
    return " " + text if text[:1].isascii() and text[:1] not in ("", " ") else text


def _peel(text: str) -> str:
    """``text`` without a leading approximation word ("约", "≈") and a trailing unit ("个", "倍") around one answer.

    A unit with a magnitude ("1万") is kept, so that it is refused rather than read as 1.
    """
    for _ in range(4):
        before = text
        text = text.lstrip(_END.replace(".", "")).rstrip(_END)  # ".57": the dot belongs to the number
        text = _APPROX.sub("", text)
        unit = _UNIT.search(text)
        if unit and not set(unit.group()) & _MAGNITUDE and unit.start() > 0:
            text = text[: unit.start()]
        if text == before:
            break
    return text


def written_as_product(text: Any) -> bool:
    """True for text such as "2×8×10×64", "2 x 8" or "2*8": whole numbers joined by a multiplication sign."""
    if not isinstance(text, str):
        return False
    return bool(_TIMES.fullmatch(_peel(clean_text(text))))


def parse_text(text: str, _depth: int = 0) -> Any:
    """The value a typed answer stands for: a number, True/False, or nested lists of them; else :class:`Unreadable`.

    Reads what a reader types: "[0.3, 0.33]", NumPy's "[[1 2]\n [3 4]]", "4、5、6、7", "98,496", "1/8",
    a shape "2×8×10×64" (as the list [2, 8, 10, 64]), "约3.969" / "98496个" (the number), and rows on
    separate lines ("1 2\n3 4" is two rows).
    """
    if _depth > _MAX_DEPTH:
        raise Unreadable("收到的列表嵌套得太深，不像这题的答案")
    if not clean_text(text):
        raise Unreadable("收到的文字是空的" + (f"（{show(text)}）" if text.strip() else "") + "：还没有写出答案")
    text_in = _SUPERSCRIPT.sub(_power_value, text)
    text_in = _CN_FRACTION.sub(lambda m: f"{_CN_DIGITS.get(m.group(2), m.group(2))}/{_CN_DIGITS.get(m.group(1), m.group(1))}",
                               text_in)
    stripped = unicodedata.normalize("NFKC", text_in).replace("−", "-").replace("、", ",")
    stripped = _WRAPPER_KEYWORDS.sub("", _WRAPPER.sub("", stripped))  # printed tensors: the numbers they show
    stripped = _LIST_SEMICOLON.sub(", ", stripped)
    stripped = _ROOT.sub(_root_value, stripped)
    if re.search(r"[,\[\]()\s]", stripped.strip()):  # fractions inside a list: their values
        stripped = _SLASH.sub(lambda m: _plain(float(m.group(1)) / float(m.group(2))) if float(m.group(2)) else m.group(0),
                              stripped)
    stripped = _PERCENT.sub(lambda m: repr(float(Fraction(m.group(1).lstrip("+")) / 100)), stripped)
    if re.search(r"(?<=\S)\s*[=≈]", stripped):  # "2×8×10×10=1600", "sin0.3≈0.2955": the value after the last sign
        stripped = re.split(r"[=≈]", stripped)[-1]
    stripped = _peel(stripped.strip())
    if stripped[:1] in "[(" and stripped[-1:] in "])":  # "[0.3, 0.33, 0.37]" typed as text
        try:
            return ast.literal_eval(_ITEM_GAP.sub(", ", _products_as_lists(stripped)))
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            raise Unreadable(f"收到了文字 {show(text)}，但这题要的是数值（去掉外面的引号）") from None
    rows = [row for row in re.split(r"[\n;]", clean_text(stripped)) if row.strip(_STRIP)]
    if len(rows) > 1:  # "1 2\n3 4" or "1 2; 3 4": one row per line
        values = [parse_text(row, _depth + 1) for row in rows]
        if all(not isinstance(v, (list, tuple)) for v in values):
            return values  # one number per line: a list
        lengths = [len(v) if isinstance(v, (list, tuple)) else 1 for v in values]
        if len(set(lengths)) > 1:
            raise Unreadable(f"收到的文字分成了 {len(rows)} 行，各行的数的个数依次是 {'、'.join(map(str, lengths))}，"
                             "看不出是几行几列；请写成嵌套列表，例如 [[1, 2], [3, 4]]")
        return [list(v) for v in values]
    cleaned = re.sub(r"\s+", " ", _peel(clean_text(stripped)).replace("_", ""))
    if cleaned in ("True", "False"):
        return cleaned == "True"
    cleaned = re.sub(r" ?/ ?", "/", cleaned)  # "1 / 8" is the fraction 1/8
    if _TIMES.fullmatch(cleaned):  # a shape written as the book writes it: "2 × 8 × 10 × 64"
        cleaned = _TIMES_SIGN.sub(",", cleaned)
    if _THOUSANDS_SPACED.fullmatch(cleaned):  # "98 496": only spaces between groups of three digits
        cleaned = cleaned.replace(" ", "")
    if _THOUSANDS.fullmatch(cleaned):  # "98,496" and "98，496" (NFKC makes the full-width comma ASCII)
        cleaned = cleaned.replace(",", "")
    elif "," in cleaned or " " in cleaned:  # "0.57, 0.43, 0" or "4 5 6 7": a list typed without brackets
        try:                                # ("1 1" is two numbers, not 11: the exercise's shape check judges it)
            return parse_text(f"[{_products_as_lists(cleaned)}]", _depth + 1)
        except Unreadable:
            raise Unreadable(_not_a_number(text)) from None
    try:
        return float(Fraction(cleaned))
    except (ValueError, ZeroDivisionError, OverflowError):
        pass
    if cleaned.count("/") == 1:  # "1/2.8284271247461903" (a root that is no whole number)
        top, bottom = cleaned.split("/")
        try:
            return float(top) / float(bottom)
        except (ValueError, ZeroDivisionError, OverflowError):
            pass
    try:
        return float(cleaned)  # "nan", "inf"
    except (ValueError, OverflowError):
        raise Unreadable(_not_a_number(text)) from None


def _power_value(m: re.Match) -> str:
    """The value of "4²" or "10⁻³" as text; the match unchanged if it overflows or divides by zero ("0⁻¹")."""
    try:
        return _plain(float(m.group(1)) ** int(m.group(2).translate(_SUPER_DIGITS)))
    except (OverflowError, ZeroDivisionError):
        return m.group(0)


def _root_value(m: re.Match) -> str:
    """The value of "√64", "√(768/12)", "sqrt(16*16)" as text; the match unchanged if it is no plain arithmetic."""
    value = _arithmetic(m.group(1)) if m.group(1) is not None else float(m.group(2))
    return m.group(0) if value is None or value < 0 else _plain(math.sqrt(value))


def _arithmetic(text: str) -> float | None:
    """The value of plain arithmetic on numbers ("768/12", "16*16", "1/64", "2^6"), or None."""
    text = text.replace("×", "*").replace("^", "**").strip()
    if not text or len(text) > 60:
        return None
    try:
        value = _float_value(ast.parse(text, mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, OverflowError, RecursionError):
        return None
    return value if math.isfinite(value) else None


_BINARY = {ast.Add: float.__add__, ast.Sub: float.__sub__, ast.Mult: float.__mul__, ast.Div: float.__truediv__,
           ast.Pow: float.__pow__}


def _float_value(node: ast.AST) -> float:
    """+ − × ÷ and ** on numbers, in floats (so 9**9**9 overflows at once instead of computing a huge integer)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _float_value(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        result = _BINARY[type(node.op)](_float_value(node.left), _float_value(node.right))
        if isinstance(result, complex):
            raise ValueError("complex")
        return result
    raise ValueError("not plain arithmetic")


def _plain(x: float) -> str:
    """A number as text that Fraction reads: "8" for 8.0 (so "1/√64" becomes the fraction "1/8")."""
    return str(int(x)) if x.is_integer() else repr(x)


def _products_as_lists(text: str) -> str:
    """Each shape written as a product inside a list ("3×7×12, 3×7×7") as a bracketed list ("[3,7,12], [3,7,7]")."""
    return _TIMES.sub(lambda m: "[" + _TIMES_SIGN.sub(",", m.group()) + "]", text)


def _not_a_number(text: str) -> str:
    if _WORDS.search(unicodedata.normalize("NFKC", text)):  # "1万", "约 三"：a word the reader added
        return f"收到了文字 {show(text)}，但这题要的是数值：只用阿拉伯数字写出这个数，去掉单位或“约”字"
    return f"收到了文字 {show(text)}，但这题要的是数值"


def _number_from_text(text: str, depth: int) -> np.ndarray:
    return as_array(parse_text(text, depth), _depth=depth + 1)


def _from_tensor(value: Any) -> np.ndarray:
    import torch

    t = value.detach()
    if t.is_complex():
        raise Unreadable(f"收到了复数张量（{t.dtype}），但这题要的是实数")
    if t.numel() > _MAX_ITEMS:
        raise Unreadable(f"收到了 {t.numel()} 个数（{show(value)}），远多于这题要的个数")
    if t.layout != torch.strided:
        t = t.to_dense()
    t = t.cpu()
    if t.dtype == torch.bool or not t.is_floating_point() or t.dtype in (torch.bfloat16, torch.float16):
        t = t.to(torch.float64)
    return t.numpy().astype(float)


def _from_ndarray(value: np.ndarray, depth: int) -> np.ndarray:
    if value.size > _MAX_ITEMS:
        raise Unreadable(f"收到了 {value.size} 个数（{show(value)}），远多于这题要的个数")
    kind = value.dtype.kind
    if kind in "biuf":
        return value.astype(float)
    if kind == "c":
        raise Unreadable("收到了复数，但这题要的是实数")
    if kind in "USO":
        return _from_sequence(value.tolist(), depth)
    raise Unreadable(f"收到了 dtype 为 {value.dtype} 的数组，但这题要的是数值")


def _from_sequence(value: Any, depth: int) -> np.ndarray:
    if not isinstance(value, (list, tuple)):
        return as_array(value, _depth=depth + 1)
    if len(value) > _MAX_ITEMS:
        raise Unreadable(f"收到了 {len(value)} 个数的列表，远多于这题要的个数")
    items = [as_array(item, _depth=depth + 1) for item in value]
    shapes = {item.shape for item in items}
    if len(shapes) > 1:
        lengths = "、".join(str(len(item)) if item.ndim else "1" for item in items)
        raise Unreadable(f"收到的嵌套列表长短不一（各项的长度依次是 {lengths}），排不成一个整齐的数组")
    if not items:
        return np.zeros((0,))
    return np.stack(items)


def as_array(value: Any, *, _depth: int = 0) -> np.ndarray:
    """A float64 array from a number, numeric text, nested lists/tuples, an array or a tensor."""
    if _depth > _MAX_DEPTH:
        raise Unreadable("收到的列表嵌套得太深，不像这题的答案")
    if value is None:
        raise Unreadable("答案里有 None：每一项都应是一个数")
    if isinstance(value, (bool, np.bool_)):
        return np.asarray(float(value))
    if isinstance(value, numbers.Real) or isinstance(value, np.number):
        if isinstance(value, (complex, np.complexfloating)):
            raise Unreadable(f"收到了复数 {show(value)}，但这题要的是实数")
        try:
            return np.asarray(float(value))
        except (TypeError, ValueError, OverflowError):
            raise Unreadable(f"{show(value)} 不能当作一个数") from None
    if isinstance(value, numbers.Complex):
        raise Unreadable(f"收到了复数 {show(value)}，但这题要的是实数")
    if isinstance(value, (str, bytes)):
        text = value.decode("utf-8", "replace") if isinstance(value, bytes) else value
        return _number_from_text(text, _depth)
    if type(value).__module__.startswith("torch") and hasattr(value, "detach"):
        try:
            return _from_tensor(value)
        except Unreadable:
            raise
        except Exception:  # meta tensors, exotic subclasses …
            raise Unreadable(f"没法读出这个张量的数值：{show(value)}") from None
    if isinstance(value, np.ndarray):
        return _from_ndarray(value, _depth)
    if isinstance(value, (list, tuple)):
        return _from_sequence(value, _depth)
    if isinstance(value, (dict, set, frozenset)) or callable(value):
        raise Unreadable(f"收到的是 {type(value).__name__}（{show(value)}），不是数值")
    try:  # anything else that knows how to become an array (pandas, jax, ...) or a float
        array = np.asarray(value)
    except Exception:
        array = None
    if array is not None and array.dtype.kind in "biufUSO" and array.dtype != object:
        return _from_ndarray(array, _depth)
    try:
        number = float(value)
    except Exception:
        raise Unreadable(f"收到的是 {type(value).__name__}（{show(value)}），不是数值") from None
    if math.isnan(number) and not isinstance(value, float):
        raise Unreadable(f"收到的是 {type(value).__name__}（{show(value)}），不是数值")
    return np.asarray(number)


def shape_words(shape: tuple[int, ...]) -> str:
    """A shape in words a reader knows: () → 一个数, (3,) → 3 个数, (2, 3) → 2 行、每行 3 个数."""
    if shape == ():
        return "一个数"
    if len(shape) == 1:
        return f"{shape[0]} 个数"
    if len(shape) == 2:
        return f"{shape[0]} 行、每行 {shape[1]} 个数（嵌套列表）"
    return "形状为 " + " × ".join(str(s) for s in shape) + " 的数组"
