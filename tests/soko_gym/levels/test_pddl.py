import subprocess
import sys
from pathlib import Path

import pytest
from pddl import parse_domain, parse_problem

from soko_gym.levels import Level, generate_levels, load_levels, verify
from soko_gym.levels.pddl import (
    STYLES,
    box_names,
    domain_pddl,
    goal_assignment,
    location_name,
    plan_style,
    plan_to_lurd,
    problem_pddl,
    push_distance_table,
    read_plan,
)

# Box 1 (row 2, col 4) is one push from goal (2, 5) and two from goal (2, 2); box 2 is one
# push from (2, 5) and four from (2, 2). Nearest goal first gives box 1 the goal (2, 5) and
# costs 1 + 4; the minimum-cost matching sends box 1 left and box 2 onto (2, 5): 2 + 1.
CROSSED = "#########\n#       #\n# . $.$ #\n#   @   #\n#########\n"
# A floor square walled in (row 3, col 3, 0-based) that the player can never reach.
POCKET = "#######\n#@$ . #\n# ### #\n# # # #\n# ### #\n#     #\n#######\n"
TINY = "######\n#@$ .#\n######\n"  # two pushes right


def pyperplan(domain: Path, problem: Path) -> str:
    """Solve with pyperplan's greedy best-first search and h_FF; the plan file's text."""
    subprocess.run(
        [sys.executable, "-m", "pyperplan", "-s", "gbf", "-H", "hff", str(domain), str(problem)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return Path(f"{problem}.soln").read_text()


def write_task(tmp_path: Path, level: Level, style: str, name: str) -> tuple[Path, Path]:
    domain = tmp_path / f"domain-{style}.pddl"
    domain.write_text(domain_pddl(style))
    problem = tmp_path / f"{name}-{style}.pddl"
    problem.write_text(problem_pddl(level, style, name))
    return domain, problem


def solve_and_verify(tmp_path: Path, level: Level, style: str, name: str) -> str:
    domain, problem = write_task(tmp_path, level, style, name)
    lurd = plan_to_lurd(level, pyperplan(domain, problem), style)
    result = verify(level, lurd)
    assert result.ok, (name, style, lurd, result.reason)
    return lurd


def test_microban_1_to_10__ipc2008_solved_by_pyperplan_and_verified(tmp_path):
    # 13 to 25 s on the project machine (2 cores, loaded); level 6, the slowest, 3.5 s
    for number, level in enumerate(load_levels("microban:1-10"), 1):
        solve_and_verify(tmp_path, level, "ipc2008", f"microban-{number}")


@pytest.mark.parametrize("style", STYLES)
def test_generated_7x7_two_boxes__solved_by_pyperplan_in_both_styles(tmp_path, style):
    for i, generated in enumerate(generate_levels(4, 7, width=7, height=7, n_boxes=2)):
        solve_and_verify(tmp_path, generated.level, style, f"generated-{i}")


@pytest.mark.parametrize("style", STYLES)
def test_domain_and_problems__parse_with_the_pddl_package(tmp_path, style):
    domain = parse_domain(_write(tmp_path / "domain.pddl", domain_pddl(style)))
    actions = {a.name for a in domain.actions}
    assert actions == ({"move", "push"} if style == "ipc2023" else
                       {"move", "push-to-goal", "push-to-nongoal"})  # fmt: skip
    levels = load_levels("microban:1-3") + [Level.from_xsb(CROSSED), Level.from_xsb(POCKET)]
    for i, level in enumerate(levels):
        problem = parse_problem(_write(tmp_path / f"p{i}.pddl", problem_pddl(level, style)))
        assert problem.domain_name == domain.name
        objects = {o.name for o in problem.objects}
        assert set(box_names(level, style)) <= objects
        assert location_name(level.player) in objects


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_problem__locations_are_the_players_area_named_1_based():
    level = Level.from_xsb(POCKET)
    text = problem_pddl(level, "ipc2008", "pocket")
    assert "(at player-01 pos-02-02)" in text and "(at stone-01 pos-02-03)" in text
    assert "pos-04-04" not in text  # the walled-in floor square
    assert "pos-01-01" not in text  # a wall
    assert "(move-dir pos-02-02 pos-02-03 dir-right)" in text
    assert "(is-goal pos-02-05)" in text and "(is-nongoal pos-02-04)" in text
    assert "(clear pos-02-02)" not in text and "(clear pos-02-03)" not in text
    assert location_name((2, 11)) == "pos-03-12"


def test_problem__ipc2008_marks_stones_that_start_on_goals():
    level = load_levels("microban:1")[0]  # one box starts on a goal
    text = problem_pddl(level, "ipc2008")
    on_goal = [b for b, sq in zip(box_names(level, "ipc2008"), level.boxes, strict=True)
               if sq in level.goals]  # fmt: skip
    assert on_goal and all(f"(at-goal {b})" in text for b in on_goal)
    assert "(:goal (and\n    (at-goal stone-01)\n    (at-goal stone-02))))" in text


def test_problem__ipc2023_names_a_goal_square_per_box_and_clear_ignores_the_robot():
    level = Level.from_xsb(TINY)
    text = problem_pddl(level, "ipc2023", "tiny")
    assert "(at-robot pos-02-02)" in text and "(clear pos-02-02)" in text
    assert "(clear pos-02-03)" not in text  # the box
    assert "(at box1 pos-02-05)" in text.split("(:goal", 1)[1]


def test_matching__beats_nearest_goal_first(tmp_path):
    level = Level.from_xsb(CROSSED)
    assert level.boxes == ((2, 4), (2, 6)) and level.goals == ((2, 2), (2, 5))
    table = push_distance_table(level)
    assert table.tolist() == [[2, 1], [4, 1]]
    nearest_first = level.goals[int(table[0].argmin())]
    assert nearest_first == (2, 5)  # box 1 would take box 2's only cheap goal
    assert goal_assignment(level) == [(2, 2), (2, 5)]  # 2 + 1 pushes, not 1 + 4
    solve_and_verify(tmp_path, level, "ipc2023", "crossed")


def test_matching__no_complete_matching_raises_naming_the_level():
    level = Level.from_xsb("#####\n#$@.#\n#####", title="Cornered")  # a box in a corner
    assert push_distance_table(level).tolist() == [[-1]]
    with pytest.raises(ValueError, match="'Cornered'.*ipc2023"):
        problem_pddl(level, "ipc2023")
    assert "(at-goal stone-01)" in problem_pddl(level, "ipc2008")  # no matching needed


def test_matching__distances_start_from_the_players_side():
    # from its right side the box could be pushed onto the goal in 2 pushes (the engine's
    # goal_dist, minimised over sides, says so), but the player cannot get there
    level = Level.from_xsb("#######\n#.@$  #\n#######")
    board = level.board
    assert board.goal_dist[0, board.square(*level.boxes[0])] == 2
    assert push_distance_table(level).tolist() == [[-1]]


TINY_PLAN_2008 = """\
; cost = 2 (unit cost)
(PUSH-TO-NONGOAL player-01 stone-01 pos-02-02 pos-02-03 pos-02-04 dir-right)

0: (push-to-goal player-01 stone-01 pos-02-03 pos-02-04 pos-02-05 dir-right) ; the last
"""


def test_plan_to_lurd__reads_comments_case_and_step_numbers():
    level = Level.from_xsb(TINY)
    assert plan_to_lurd(level, TINY_PLAN_2008) == "RR"
    assert plan_style(TINY_PLAN_2008) == "ipc2008"
    assert [n for n, _ in read_plan(TINY_PLAN_2008)] == [2, 4]
    plan_2023 = "(move pos-02-02 pos-03-02 down)\n"
    assert plan_style(plan_2023) == "ipc2023"
    with pytest.raises(ValueError, match="no location 'pos-03-02'"):
        plan_to_lurd(level, plan_2023)
    assert plan_to_lurd(level, "(push pos-02-02 pos-02-03 pos-02-04 right box1)") == "R"


def test_plan_to_lurd__a_legal_plan_that_does_not_solve_is_returned():
    level = load_levels("microban:1")[0]
    lurd = plan_to_lurd(level, "(move player-01 pos-04-03 pos-05-03 dir-down)\n")
    assert lurd == "d" and not verify(level, lurd).ok


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("(jump player-01 pos-02-02)", "unknown action 'jump'"),
        ("(move player-01 pos-02-02 dir-right)", "move takes 4 arguments, got 3"),
        ("(move player-02 pos-02-02 pos-02-03 dir-right)", "'player-02' is not the player"),
        ("(move player-01 pos-02-02 pos-09-09 dir-right)", "no location 'pos-09-09'"),
        ("(move player-01 pos-02-02 pos-02-03 east)", "'east' is not a direction"),
        ("(move player-01 pos-02-03 pos-02-04 dir-right)", "the player is on pos-02-02"),
        ("(move player-01 pos-02-02 pos-02-03 dir-right)", "holds stone-01: a move needs it"),
        ("(move player-01 pos-02-02 pos-02-04 dir-right)", "pos-02-04 is not the location"),
        (
            "(push-to-nongoal player-01 stone-02 pos-02-02 pos-02-03 pos-02-04 dir-right)",
            "no box 'stone-02'",
        ),
        (
            "(push-to-goal player-01 stone-01 pos-02-02 pos-02-03 pos-02-04 dir-right)",
            "pos-02-04 is not a goal: push-to-goal does not apply",
        ),
        (
            "(push-to-nongoal player-01 stone-01 pos-02-02 pos-02-03 pos-02-04 dir-left)",
            "is not the location dir-left",
        ),
        ("move player-01 pos-02-02 pos-02-03 dir-right", "not an action"),
    ],
)
def test_plan_to_lurd__bad_plans_name_the_line(line, message):
    level = Level.from_xsb(TINY)
    plan = f"; a comment\n\n{line}\n"
    with pytest.raises(ValueError, match=f"plan line 3: .*{message}") as info:
        plan_to_lurd(level, plan, "ipc2008")
    assert "plan line 3" in str(info.value)


def test_plan_to_lurd__an_illegal_push_names_its_line():
    level = Level.from_xsb("#######\n#@$$..#\n#######")
    plan = "(push pos-02-03 pos-02-04 pos-02-05 right box2)\n"  # the robot is on pos-02-02
    with pytest.raises(ValueError, match="plan line 1: the player is on pos-02-02"):
        plan_to_lurd(level, plan, "ipc2023")
    blocked = "(push pos-02-02 pos-02-03 pos-02-04 right box1)\n"
    with pytest.raises(ValueError, match="plan line 1: pos-02-04 holds box2: the push is blocked"):
        plan_to_lurd(level, blocked, "ipc2023")
    wrong_box = "(push pos-02-02 pos-02-03 pos-02-04 right box2)\n"
    with pytest.raises(ValueError, match="plan line 1: box2 is on pos-02-04, not on pos-02-03"):
        plan_to_lurd(level, wrong_box, "ipc2023")


def test_styles__unknown_style_and_empty_plan_are_errors():
    with pytest.raises(ValueError, match="unknown PDDL style 'strips'"):
        domain_pddl("strips")
    with pytest.raises(ValueError, match="holds no action"):
        plan_to_lurd(Level.from_xsb(TINY), "; nothing\n")
    with pytest.raises(ValueError, match="plan line 1: .*neither style"):
        plan_style("(move a b c d e)")
