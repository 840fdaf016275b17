import argparse
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, field

import pytest

from soko_gym.cli import add_dataclass_options, dataclass_kwargs, field_docs, main

MICROBAN_1 = "dlUrrrdLullddrUluRuulDrddrruLdlUU"


def test_soko__console_script_lists_subcommands():
    exe = shutil.which("soko")
    assert exe, "the soko console script is not installed"
    out = subprocess.run([exe, "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("show", "packs", "verify"):
        assert command in out


def test_show__prints_the_board_and_its_size(capsys):
    assert main(["show", "microban:1"]) == 0
    out = capsys.readouterr().out
    assert "[6x7, 2 boxes]" in out and "#*@  #" in out


def test_packs__lists_names_and_credits(capsys):
    assert main(["packs"]) == 0
    out = capsys.readouterr().out
    assert "sasquatch" in out and "boxoban-hard" in out and "Skinner" in out


def test_verify__ok_exits_zero(capsys):
    assert main(["verify", "microban:1", "--lurd", MICROBAN_1]) == 0
    assert "ok (33 moves, 8 pushes)" in capsys.readouterr().out


def test_verify__names_the_first_illegal_step(capsys):
    assert main(["verify", "microban:1", "--lurd", "dlUlr"]) == 1
    out = capsys.readouterr().out
    assert "FAILED at step 3" in out and "wall" in out


def test_verify__json_and_quiet_for_scripts(capsys):
    assert main(["verify", "microban:1-2", "--lurd", MICROBAN_1, "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["levels"] == 2 and summary["ok"] == 1
    assert summary["results"][0] == {"title": "1", "ok": True, "moves": 33, "pushes": 8}
    assert summary["results"][1]["ok"] is False and "step" in summary["results"][1]
    assert main(["verify", "microban:1-2", "--lurd", MICROBAN_1, "--quiet"]) == 1
    out = capsys.readouterr().out
    assert "ok (" not in out and "FAILED" in out and "1/2 solutions ok" in out


def test_verify__solutions_file_one_line_per_level(tmp_path, capsys):
    path = tmp_path / "sol.txt"
    path.write_text(f"; my solutions\n{MICROBAN_1}\nLLLL\n")
    assert main(["verify", "microban:1-2", "--solutions", str(path)]) == 1
    out = capsys.readouterr().out
    assert "1/2 solutions ok" in out
    assert main(["verify", "microban:1-3", "--solutions", str(path)]) == 2
    assert "2 solutions for 3 levels" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["show", "no-such-pack"], "no-such-pack"),
        (["show", "microban:999"], "out of range"),
        (["verify", "microban:1", "--solutions", "/no/such/file"], "No such file"),
    ],
)
def test_soko__bad_input_is_a_one_line_error(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and message in err and "Traceback" not in err


def test_pddl__writes_domain_and_problems_and_never_overwrites(tmp_path, capsys):
    out = tmp_path / "tasks"
    assert main(["pddl", "microban:2-3", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["domain.pddl", "p002.pddl", "p003.pddl"]
    assert "(define (domain sokoban-sequential)" in (out / "domain.pddl").read_text()
    assert "(define (problem microban-002)" in (out / "p002.pddl").read_text()
    assert "2 problem files (p002.pddl .. p003.pddl)" in capsys.readouterr().out
    (out / "p003.pddl").write_text("mine")
    assert main(["pddl", "microban:3", "--out", str(out), "--style", "ipc2023"]) == 2
    assert "domain.pddl exists and 1 more" in capsys.readouterr().err
    assert (out / "p003.pddl").read_text() == "mine"  # nothing written, not even domain.pddl
    assert "sokoban-sequential" in (out / "domain.pddl").read_text()
    assert main(["pddl", "microban:3", "--out", str(out), "--style", "ipc2023", "--overwrite"]) == 0
    assert "(at-robot " in (out / "p003.pddl").read_text()


def test_pddl__plan_round_trip_exit_codes(tmp_path, capsys):
    assert main(["pddl", "microban:2", "--out", str(tmp_path)]) == 0
    subprocess.run(
        [sys.executable, "-m", "pyperplan", "-s", "gbf", "-H", "hff"]
        + [str(tmp_path / "domain.pddl"), str(tmp_path / "p002.pddl")],
        check=True,
        capture_output=True,
        timeout=120,
    )
    plan = tmp_path / "p002.pddl.soln"
    capsys.readouterr()
    assert main(["pddl", "--plan", str(plan), "--level", "microban:2"]) == 0
    lurd, verdict = capsys.readouterr().out.splitlines()
    assert verdict.startswith("solved: ") and main(["verify", "microban:2", "--lurd", lurd]) == 0
    short = tmp_path / "short.soln"
    short.write_text("\n".join(plan.read_text().splitlines()[:2]) + "\n")
    assert main(["pddl", "--plan", str(short), "--level", "microban:2"]) == 1
    assert "not solved: solution ends with boxes off goals" in capsys.readouterr().out
    bad = tmp_path / "bad.soln"
    bad.write_text("; made by hand\n(move player-01 pos-01-01 pos-01-02 dir-right)\n")
    assert main(["pddl", "--plan", str(bad), "--level", "microban:2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {bad}: plan line 2: no location 'pos-01-01'")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["pddl", "microban:1"], "soko pddl SOURCE --out DIR"),
        (["pddl", "--plan", "x.soln"], "--level SOURCE"),
        (["pddl", "--plan", "x.soln", "--level", "microban:1-2"], "selects 2 levels"),
        (["pddl", "--plan", "/no/such.soln", "--level", "microban:1"], "No such file"),
    ],
)
def test_pddl__bad_arguments_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# -- config dataclasses as options -----------------------------------------------------------


@dataclass
class _Opts:
    """Toy options.

    Attributes:
        name: a name
            that wraps.
        count: how many.
        ratio: a ratio or None.
        size: rows and cols.
        widths: any number of widths.
        fast: go fast.
    """

    name: str = "a"
    count: int = 3
    ratio: float | None = None
    size: tuple[int, int] | None = None
    widths: list[int] = field(default_factory=list)
    fast: bool = True


def _parse(argv, **kw):
    parser = argparse.ArgumentParser()
    add_dataclass_options(parser, _Opts, **kw)
    return _Opts(**dataclass_kwargs(_Opts, parser.parse_args(argv), prefix=kw.get("prefix", "")))


def test_field_docs__reads_wrapped_attribute_entries():
    assert field_docs(_Opts) == {
        "name": "a name that wraps.",
        "count": "how many.",
        "ratio": "a ratio or None.",
        "size": "rows and cols.",
        "widths": "any number of widths.",
        "fast": "go fast.",
    }


def test_dataclass_options__defaults_kept_and_every_kind_parsed():
    assert _parse([]) == _Opts()
    got = _parse(
        ["--name", "b", "--count", "5", "--ratio", "0.5", "--size", "4", "6", "--widths", "1", "2"]
        + ["--no-fast"]
    )
    assert got == _Opts("b", 5, 0.5, (4, 6), [1, 2], False)


def test_dataclass_options__prefix_aliases_and_choices():
    got = _parse(["--x-count", "7", "-n", "z"], prefix="x-", aliases={"name": ["-n"]})
    assert (got.count, got.name) == (7, "z")
    with pytest.raises(SystemExit):
        _parse(["--name", "q"], choices={"name": ("a", "b")})
