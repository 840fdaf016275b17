import shutil
import subprocess

import pytest

from soko_gym.cli import main

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
