"""Reader and classroom support: exercise index, glossary, teacher's guide, errata, Colab/Binder config."""
from __future__ import annotations

import importlib.util
import json
import pathlib
import re
import sys

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
APPENDIX = ROOT / "appendix"


def tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


# -- exercise index --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def exercise_index():
    module = tool("make_exercise_index")
    chapters, warnings = module.collect()
    return module, chapters, warnings


def test_exercise_index_is_up_to_date(exercise_index):
    module, chapters, _ = exercise_index
    committed = (APPENDIX / "exercises.md").read_text(encoding="utf-8")
    assert committed == module.render(chapters), "appendix/exercises.md 已过期：运行 python tools/make_exercise_index.py"


def test_every_chapter_has_three_exercises_one_checked(exercise_index):
    _, chapters, warnings = exercise_index
    assert chapters, "没有找到任何章节"
    for chapter in chapters:
        assert len(chapter.exercises) >= 3, f"第 {chapter.number} 章只有 {len(chapter.exercises)} 道练习"
        assert any(e.checked for e in chapter.exercises), f"第 {chapter.number} 章没有自动批改的练习"
    assert warnings == [], warnings


def test_exercise_titles_are_short_and_balanced(exercise_index):
    _, chapters, _ = exercise_index
    for ex in (e for c in chapters for e in c.exercises):
        assert ex.title and len(ex.title) <= 80, ex
        assert ex.title.count("$") % 2 == 0 and ex.title.count("`") % 2 == 0, ex


# -- glossary ----------------------------------------------------------------------------------------
GLOSSARY = (APPENDIX / "glossary.md").read_text(encoding="utf-8")


def glossary_rows() -> list[tuple[str, str, str]]:
    """(term, english, chapter link) for each row of the 中英术语对照 table."""
    rows = []
    for line in GLOSSARY.splitlines():
        match = re.match(r"\| \{term\}`([^`]+)`[^|]* \| ([^|]+) \|[^|]+\| \[[^\]]+\]\(([^)]+)\) \|$", line)
        if match:
            term, english, link = match.groups()
            rows.append((term.strip(), english.strip(), link))
    return rows


def glossary_terms() -> list[str]:
    """The terms defined in the page's {glossary} directives (one or more term lines per entry)."""
    terms = []
    for block in re.findall(r"^```\{glossary\}\n(.*?)^```$", GLOSSARY, flags=re.S | re.M):
        terms += [line.strip() for line in block.splitlines() if line.strip() and not line.startswith(" ")]
    return terms


def test_glossary_table_terms_are_defined_once():
    defined = glossary_terms()
    in_table = [term for term, _, _ in glossary_rows()]
    assert len(defined) == len(set(defined)), "有重复的术语"
    assert set(in_table) <= set(defined), set(in_table) - set(defined)
    assert len(in_table) >= 46
    for term in ["教师强制", "归纳头", "消融", "JS 散度", "FLOPs", "融合内核"]:
        assert term in defined, term
    assert "(glossary-" not in GLOSSARY and "{ref}`" not in GLOSSARY  # 只用 {glossary} 与 {term}


def test_glossary_has_the_notation_of_the_front_page():
    intro = (ROOT / "intro.md").read_text(encoding="utf-8")
    notation = re.findall(r"^\| (\$[^|]+\$) \|", intro, flags=re.M)
    assert notation, "intro.md 的记号表找不到了"
    for symbol in notation:
        assert f"| {symbol} |" in GLOSSARY, f"术语表的符号表缺少 {symbol}"


@pytest.mark.parametrize("term, english, link", glossary_rows(), ids=lambda v: str(v)[:30])
def test_glossary_first_appearance(term, english, link):
    target = (APPENDIX / link).resolve()
    assert re.fullmatch(r"(\.\./chapters/\d\d_[a-z0-9_]+\.ipynb|errata\.ipynb)", link), link
    if not target.exists():
        pytest.skip(f"{link} 还没有写成")
    nb = nbformat.read(target, as_version=4)
    text = "\n".join(c.source for c in nb.cells).lower()
    names = [t for t in re.split(r"[、/]", term)] + [e.strip() for e in re.split(r"[,/]", english)]
    assert any(name.lower() in text for name in names if name), \
        f"“{term}”（{english}）没有出现在 {link} 里：改正术语表的“首次出现”一栏"


# -- teacher's guide --------------------------------------------------------------------------------
def test_teaching_guide_includes_the_generated_times():
    guide = (APPENDIX / "teaching.md").read_text(encoding="utf-8")
    assert re.search(r"```\{include\} teaching_times\.md\n```", guide)
    times_page = (APPENDIX / "teaching_times.md").read_text(encoding="utf-8")
    assert times_page.startswith("<!-- 本表由 tools/make_teaching_times.py")
    times_json = ROOT / "bench" / "notebook_times.json"
    if times_json.exists():
        times = json.loads(times_json.read_text(encoding="utf-8"))
        assert times_page == tool("make_teaching_times").render(times), \
            "appendix/teaching_times.md 与 bench/notebook_times.json 不一致：运行 python tools/make_teaching_times.py"
    rows = re.findall(r"^\| (?:第 \d+ 章|附录) \| \[[^\]]+\]\(\.\./([^)]+)\) \| (\d+\.\d) \| (\d+) \| ([^|]+) \|",
                      times_page, flags=re.M)
    assert rows, "运行时间表是空的"
    for rel, measured, planned, advice in rows:
        assert (ROOT / rel).exists(), rel
        assert int(planned) >= 3 * float(measured), rel  # 课上预留留出余量（测速的机器之间能差一倍）
        assert (advice.strip() == "课前先运行一遍") == (int(planned) > 60), rel  # 预留超过一分钟的课前运行
        assert advice.strip() in ("课前先运行一遍", "课上现场运行"), advice


def test_teaching_guide_agrees_with_the_timing_table():
    """The guide names no chapter as 'run before class'; it refers to the table's advice column."""
    guide = (APPENDIX / "teaching.md").read_text(encoding="utf-8")
    assert "课前先运行一遍" in guide and "Colab" in guide and "安装" in guide
    assert not re.search(r"第 ?\d+[–-]\d+ ?章[^。\n]*课前运行", guide), "运行建议以时间表为准，不要在正文里另写一套"
    lesson2 = guide.split("**第 2 课时", 1)[1].split("## 四课时方案", 1)[0]
    assert "第 13 章" in lesson2, "两课时方案要包括第 13 章“写错的掩码”的演示"


def test_teaching_guide_has_both_plans():
    guide = (APPENDIX / "teaching.md").read_text(encoding="utf-8")
    assert "2 × 45" in guide and "4 × 45" in guide
    for section in ["讨论题", "常见错误", "幻灯片"]:
        assert section in guide, section


# -- errata ------------------------------------------------------------------------------------------
def test_errata_items_each_have_claim_correction_and_evidence():
    nb = nbformat.read(APPENDIX / "errata.ipynb", as_version=4)
    h1 = [l for c in nb.cells if c.cell_type == "markdown" for l in c.source.splitlines() if l.startswith("# ")]
    assert len(h1) == 1
    numbers = []
    for i, cell in enumerate(nb.cells):
        match = cell.cell_type == "markdown" and re.search(r"^### (\d+)\. ", cell.source, flags=re.M)
        if not match:
            continue
        numbers.append(int(match.group(1)))
        assert "**说法。**" in cell.source and "**更正。**" in cell.source, match.group(0)
        following = []
        for later in nb.cells[i + 1:]:
            if later.cell_type == "markdown" and re.search(r"^#{2,3} ", later.source, flags=re.M):
                break
            following.append(later)
        code = "\n".join(c.source for c in following if c.cell_type == "code")
        assert "assert" in code or "raises-exception" in str([c.metadata for c in following]), match.group(0)
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 8 + 5


# -- Colab and Binder ---------------------------------------------------------------------------------
def pins(path: pathlib.Path) -> dict[str, str]:
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if match:
            out[match.group(1).lower()] = match.group(2)
    return out


def test_colab_requirements_are_colab_versions_with_torch_pinned():
    colab = pins(ROOT / "tests" / "colab-requirements.txt")
    assert colab["torch"] == "2.13.0"
    assert colab["pandas"] == "2.2.2" and colab["ipywidgets"] == "7.7.1"
    assert colab["matplotlib"].startswith("3.10.") and colab["numpy"].startswith("2.0.")


def test_binder_config():
    binder = ROOT / "binder"
    requirements = (binder / "requirements.txt").read_text(encoding="utf-8")
    assert "--extra-index-url https://download.pytorch.org/whl/cpu" in requirements
    assert pins(binder / "requirements.txt")["torch"] == "2.13.0+cpu"
    assert (binder / "runtime.txt").read_text(encoding="utf-8").strip() == "python-3.11"
    post = binder / "postBuild"
    assert post.stat().st_mode & 0o111, "binder/postBuild 要有可执行权限"
    assert "pip install --no-deps -e ." in post.read_text(encoding="utf-8")


def test_link_glossary_makes_term_roles_and_skips_other_senses():
    module = tool("link_glossary")
    terms = module.glossary_terms()
    assert "JS 散度" in terms and "归纳头" in terms and "分数" in terms
    text, done = module.link_first("## 分数\n\n每个词的分数是 logits；注意力的分数先做 softmax。", "分数")
    assert done and text.endswith("注意力的{term}`分数`先做 softmax。")  # 标题和 logits 的“分数”都不链接
    assert module.convert_old_links("看[热力图](../appendix/glossary.md)", set(terms)) == "看{term}`热力图`"
    assert module.convert_old_links("每个词的[分数](../appendix/glossary.md)", set(terms)) == "每个词的分数"


def test_link_glossary_moves_a_link_to_a_use_written_before_it():
    import nbformat
    module = tool("link_glossary")
    cells = [nbformat.v4.new_markdown_cell(s) for s in
             ("先提一句归纳头。", "第 2 层有一个{term}`归纳头`。", "归纳头再出现一次。")]
    assert module.move_to_first_use(cells, "归纳头", [])
    assert [c.source for c in cells] == ["先提一句{term}`归纳头`。", "第 2 层有一个归纳头。", "归纳头再出现一次。"]
    assert not module.move_to_first_use(cells, "归纳头", [])  # already at the first use: nothing to do
