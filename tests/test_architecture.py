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


def test_architecture__names_every_module_and_package():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([\w/.]+)`", text))
    section = text.split("## Module map", 1)[1].split("\n## ", 1)[0]
    module_map = section.split("```")[1]  # the described tree
    missing = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if path.name == "__init__.py":
            rel = rel[: -len("__init__.py")]  # a package is named by its folder: `planners/fess/`
            short = path.parent.name + "/"
        else:
            short = path.name
        if rel not in named or short not in module_map:
            missing.append(rel)
    assert not missing, f"ARCHITECTURE.md does not describe: {missing}"


def test_architecture__names_no_module_that_does_not_exist():
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    paths = {
        p
        for p in re.findall(r"`([\w/.]+)`", text)
        if p.split("/")[0] in (*PACKAGES, "benchmarks", "examples", "tests") and "/" in p
    }
    gone = [p for p in sorted(paths) if not (ROOT / p).exists()]
    assert not gone, f"ARCHITECTURE.md names paths that do not exist: {gone}"


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
