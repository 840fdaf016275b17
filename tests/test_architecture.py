"""The architecture stays written down and the design rules hold (ARCHITECTURE.md)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("soko_gym", "planners", "agents")
MAX_KERNEL_PARAMS = 12


def _modules():
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "data" not in path.relative_to(ROOT).parts:
                yield path


MAX_LINES = 600  # a non-test module longer than this is split, or listed with its reason
MAX_LONG_MODULES = 3
MAX_LINE_CHARS = 200


def _section(text: str, heading: str) -> str:
    """The text under ``heading`` up to the next heading of the same or a higher level."""
    level = heading.split(" ", 1)[0]
    body = text.split(f"\n{heading}\n", 1)[1]
    stops = [body.find(f"\n{'#' * n} ") for n in range(2, len(level) + 1)]
    stops = [s for s in stops if s >= 0]
    return body[: min(stops)] if stops else body


def _table_paths(section: str) -> list[str]:
    """The first column's paths of the markdown table rows in ``section``."""
    return re.findall(r"^\| `([\w/.]+)` \|", section, flags=re.MULTILINE)


def _architecture() -> str:
    return (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")


def _rel(path: Path) -> str:
    rel = path.relative_to(ROOT).as_posix()
    return rel[: -len("__init__.py")] if path.name == "__init__.py" else rel


def test_architecture__module_table_has_one_row_per_module_and_package():
    rows = _table_paths(_section(_architecture(), "## Module map"))
    assert len(rows) == len(set(rows)), "a module has two rows"
    tree = {_rel(p) for p in _modules()}
    unnamed, gone = sorted(tree - set(rows)), sorted(set(rows) - tree)
    assert not unnamed, f"ARCHITECTURE.md has no row for: {unnamed}"
    assert not gone, f"ARCHITECTURE.md has rows for no module: {gone}"


def test_architecture__names_no_module_that_does_not_exist():
    text = _architecture()
    paths = {
        p
        for p in re.findall(r"`([\w/.]+)`", text)
        if p.split("/")[0] in (*PACKAGES, "benchmarks", "examples", "tests", "docs") and "/" in p
    }
    gone = [p for p in sorted(paths) if not (ROOT / p).exists()]
    assert not gone, f"ARCHITECTURE.md names paths that do not exist: {gone}"


def test_architecture__stays_readable_and_inside_the_project():
    text = _architecture()
    long = [n for n, line in enumerate(text.splitlines(), 1) if len(line) > MAX_LINE_CHARS]
    assert not long, f"ARCHITECTURE.md lines over {MAX_LINE_CHARS} characters: {long}"
    assert "../" not in text and "DESIGN.md" not in text, "names a file outside the project"


def test_architecture__gives_a_reading_order_for_an_env_step_and_for_fess():
    section = _section(_architecture(), "## Reading order")
    for start in ("**An env step**", "**FESS**"):
        assert start in section
        steps = section.split(start, 1)[1].split("\n\n", 2)[1]
        paths = re.findall(r"`((?:soko_gym|planners)/[\w/.]+\.py)`", steps)
        assert len(paths) >= 5 and all((ROOT / p).exists() for p in paths), (start, paths)


def test_modules__over_600_lines_are_few_and_listed_with_a_reason():
    listed = _table_paths(_section(_architecture(), "### Modules over 600 lines"))
    assert len(listed) <= MAX_LONG_MODULES, f"more than {MAX_LONG_MODULES} listed: {listed}"
    long = {
        _rel(p): n
        for p in _modules()
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    unlisted = {path: n for path, n in long.items() if path not in listed}
    assert not unlisted, f"modules over {MAX_LINES} lines, split or listed: {unlisted}"
    short = [path for path in listed if path not in long]
    assert not short, f"listed as over {MAX_LINES} lines but are not: {short}"


def _jitted_functions():
    for path in _modules():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and any(
                "jit" in ast.unparse(d) for d in node.decorator_list
            ):
                args = node.args
                n = len(args.posonlyargs) + len(args.args) + len(args.kwonlyargs)
                yield f"{path.relative_to(ROOT)}:{node.lineno} {node.name}", n


def test_kernels__take_at_most_twelve_parameters():
    # more than that is an argument list two same-dtype arrays can be swapped in: bundle them
    # into a namedtuple of arrays (see ARCHITECTURE.md, "Numba kernels")
    found = list(_jitted_functions())
    assert len(found) > 100  # the scan sees the kernels
    over = [f"{name} ({n})" for name, n in found if n > MAX_KERNEL_PARAMS]
    assert not over, f"kernels over {MAX_KERNEL_PARAMS} parameters: {over}"


def test_benchmarks__shadow_no_package_and_leave_sys_path_alone():
    scripts = sorted((ROOT / "benchmarks").glob("*.py"))
    assert scripts
    top_level = {p.name for p in ROOT.iterdir() if (p / "__init__.py").exists()}
    for script in scripts:
        assert script.stem not in top_level | {"soko_gym", "planners", "agents"}, script.name
        assert "sys.path" not in script.read_text(encoding="utf-8"), script.name
