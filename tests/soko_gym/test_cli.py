import argparse
import json
import shutil
import subprocess
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
