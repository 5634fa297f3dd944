"""Build the CJK font that ships inside attnbook (reproducible).

    apt-get install fonts-noto-cjk        # Debian 12: 1:20220127+repack1-1
    python tools/make_font_subset.py

Source: Noto Sans CJK SC Regular (SIL OFL 1.1), face 2 of NotoSansCJK-Regular.ttc.
Kept glyphs:
  * the 3,500 most frequent hanzi, counted from jieba's bundled dictionary
    (word frequencies summed per character; jieba is pinned in requirements.txt);
  * every character of the book's own sources (chapters, appendix, Markdown, attnbook);
  * ASCII, CJK punctuation and full-width forms.
The OFL reserves the name "Source" for this font family, and "Noto" is a trademark, so
the subset is renamed "AttnBook Sans SC". Output: attnbook/fonts/AttnBookSansSC-Regular.otf.
"""
from __future__ import annotations

import collections
import hashlib
import pathlib

import jieba
from fontTools import subset
from fontTools.ttLib import TTCollection

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCE = pathlib.Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")
FACE = "Noto Sans CJK SC"
OUT = ROOT / "attnbook" / "fonts" / "AttnBookSansSC-Regular.otf"
FAMILY = "AttnBook Sans SC"
N_COMMON = 3500


def is_hanzi(ch: str) -> bool:
    return 0x4E00 <= ord(ch) <= 0x9FFF


def common_hanzi(n: int = N_COMMON) -> list[str]:
    counts: collections.Counter[str] = collections.Counter()
    dict_path = pathlib.Path(jieba.__file__).parent / "dict.txt"
    for line in dict_path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        word, freq = parts[0], int(parts[1])
        for ch in word:
            if is_hanzi(ch):
                counts[ch] += freq
    # ties broken by code point so the list is stable
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], ord(kv[0])))
    return [ch for ch, _ in ranked[:n]]


def book_characters() -> set[str]:
    chars: set[str] = set()
    patterns = ["*.md", "*.yml", "chapters/*.ipynb", "appendix/*", "attnbook/**/*.py",
                "attnbook/data/*.txt"]
    for pattern in patterns:
        for path in ROOT.glob(pattern):
            if path.is_file():
                chars.update(path.read_text(encoding="utf-8", errors="ignore"))
    return chars


def main() -> None:
    collection = TTCollection(str(SOURCE))
    font = next(f for f in collection.fonts if f["name"].getDebugName(1) == FACE)
    cmap = font.getBestCmap()

    wanted = set(common_hanzi())
    wanted |= book_characters()
    wanted |= {chr(c) for c in range(0x20, 0x7F)}
    wanted |= {chr(c) for c in range(0x3000, 0x3040)}   # CJK punctuation
    wanted |= {chr(c) for c in range(0xFF00, 0xFF66)}   # full-width forms
    wanted |= set("“”‘’—…·×÷√≈≤≥≠±→←↑↓∞αβγδεθλμσπτ−∂‖∑∈")
    codepoints = sorted(ord(ch) for ch in wanted if ord(ch) in cmap)

    options = subset.Options()
    options.layout_features = ["*"]
    options.name_IDs = ["*"]
    options.notdef_outline = True
    options.hinting = False
    options.desubroutinize = True
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=codepoints)
    subsetter.subset(font)

    name = font["name"]
    for record in list(name.names):
        if record.nameID in (1, 3, 4, 6, 16, 17):
            name.removeNames(nameID=record.nameID)
    name.setName(FAMILY, 1, 3, 1, 0x409)
    name.setName("Regular", 2, 3, 1, 0x409)
    name.setName(f"{FAMILY} Regular; subset of Noto Sans CJK SC 2.004", 3, 3, 1, 0x409)
    name.setName(f"{FAMILY} Regular", 4, 3, 1, 0x409)
    name.setName("AttnBookSansSC-Regular", 6, 3, 1, 0x409)
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = ["AttnBookSansSC-Regular"]
        top = cff.topDictIndex[0]
        top.FullName = f"{FAMILY} Regular"
        top.FamilyName = FAMILY
    OUT.parent.mkdir(parents=True, exist_ok=True)
    font.save(str(OUT))
    digest = hashlib.sha256(OUT.read_bytes()).hexdigest()[:16]
    n_hanzi = sum(1 for c in codepoints if 0x4E00 <= c <= 0x9FFF)
    print(f"{OUT.relative_to(ROOT)}: {len(codepoints)} code points ({n_hanzi} hanzi), "
          f"{OUT.stat().st_size / 1024:.0f} KiB, sha256 {digest}")


if __name__ == "__main__":
    main()
