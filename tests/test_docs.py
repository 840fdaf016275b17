"""The README stays a front page and the reference in docs/ stays readable and true to the tree."""

import ast
import importlib
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
MAX_README_LINES = 250
MAX_PARAGRAPH_LINES = 15
PACKAGES = ("soko_gym", "planners", "agents")


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _paragraphs(text: str) -> list[tuple[int, int]]:
    """(first line, line count) of each paragraph: consecutive non-blank lines outside fenced
    code blocks and tables (a heading line ends a paragraph)."""
    found, start, count, fenced = [], 0, 0, False
    for n, line in enumerate([*text.splitlines(), ""], 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        plain = not fenced and line.strip() and not line.lstrip().startswith(("|", "```", "#"))
        if plain:
            start, count = (start, count + 1) if count else (n, 1)
        elif count:
            found.append((start, count))
            count = 0
    return found


def _links(text: str) -> list[str]:
    """The relative targets of the markdown links in ``text``, anchors dropped."""
    targets = re.findall(r"\]\(([^)\s]+)\)", text)
    return [t.split("#")[0] for t in targets if "://" not in t and not t.startswith("#")]


def test_readme__is_a_front_page():
    lines = _text(README).splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines"


def test_readme__links_every_docs_page_and_each_link_exists():
    text = _text(README)
    linked = {t for t in _links(text) if t.startswith("docs/")}
    missing = sorted(t for t in linked if not (ROOT / t).is_file())
    assert not missing, f"README.md links pages that do not exist: {missing}"
    unlinked = {p.relative_to(ROOT).as_posix() for p in DOCS} - linked
    assert not unlinked, f"README.md's map of docs/ leaves out: {sorted(unlinked)}"


@pytest.mark.parametrize("page", DOCS, ids=lambda p: p.name)
def test_docs__links_between_pages_exist(page):
    missing = [t for t in _links(_text(page)) if not (page.parent / t).exists()]
    assert not missing, f"{page.name} links what does not exist: {missing}"


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_docs__no_paragraph_over_15_lines(page):
    long = [(first, n) for first, n in _paragraphs(_text(page)) if n > MAX_PARAGRAPH_LINES]
    assert not long, f"{page.name}: paragraphs over {MAX_PARAGRAPH_LINES} lines (line, n): {long}"


def test_readme__holds_the_test_command_ci_runs():
    ci = _text(ROOT / ".ci" / "run").splitlines()
    marker = next(n for n, line in enumerate(ci) if "The README's test command, verbatim" in line)
    assert ci[marker + 1] in _text(README).splitlines()


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_docs__python_examples_parse(page):
    for block in re.findall(r"```python\n(.*?)```", _text(page), flags=re.DOTALL):
        ast.parse(block)


@pytest.mark.parametrize("page", [README, *DOCS], ids=lambda p: p.name)
def test_docs__name_files_and_modules_that_exist(page):
    # the docs name public APIs where they can; a module move must update what they still name
    text = _text(page)
    folders = "|".join((*PACKAGES, "benchmarks", "examples", "tests", "docs"))
    paths = set(re.findall(rf"(?<![\w/.-])((?:{folders})/[\w/.-]*\w)", text))
    gone = sorted(p for p in paths if not (ROOT / p).exists())
    assert not gone, f"{page.name} names paths that do not exist: {gone}"
    names = set(re.findall(rf"(?<![\w/.])((?:{'|'.join(PACKAGES)})(?:\.\w+)+)", text))
    unknown = sorted(n for n in names if not n.endswith(".md") and not _resolves(n))
    assert not unknown, f"{page.name} names what cannot be imported: {unknown}"


def _resolves(dotted: str) -> bool:
    """True when ``dotted`` is a module, or an attribute reached from the longest module."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_license__is_mit_and_leaves_the_levels_their_terms():
    text = _text(ROOT / "LICENSE")
    for sentence in (
        "MIT License",
        "Copyright (c) 2026 the soko-gym authors",
        "Permission is hereby granted, free of charge, to any person obtaining a copy",
        "The above copyright notice and this permission notice shall be included in all",
        'THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR',
    ):
        assert sentence in text, sentence
    assert "soko_gym/levels/data/" in text and "docs/levels.md" in text


def _version() -> str:
    project = tomllib.loads(_text(ROOT / "pyproject.toml"))["project"]
    if "version" in project:
        return project["version"]
    attr = tomllib.loads(_text(ROOT / "pyproject.toml"))["tool"]["setuptools"]["dynamic"]
    module, name = attr["version"]["attr"].rsplit(".", 1)
    source = _text(ROOT / (module.replace(".", "/") + "/__init__.py"))
    return re.search(rf'^{name} = "([^"]+)"', source, flags=re.MULTILINE).group(1)


def test_changelog__starts_at_the_current_version():
    text = _text(ROOT / "CHANGELOG.md")
    assert f"## [{_version()}]" in text
    assert "## [Unreleased]" in text
