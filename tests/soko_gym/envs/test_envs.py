import copy

import gymnasium as gym
import numpy as np
import pytest

import soko_gym
from soko_gym.envs.move_env import SokobanMoveEnv
from soko_gym.envs.push_env import SokobanPushEnv
from soko_gym.envs.rewards import RewardScheme
from soko_gym.levels import lurd_to_pushes

from .helpers import random_legal_action

MICROBAN_1 = "dlUrrrdLullddrUluRuulDrddrruLdlUU"  # 33 moves, 8 pushes
DIRECTION = {c: i for i, c in enumerate("udlr")}
ENV_IDS = [i for i in soko_gym.ENV_IDS if "-Gen-" not in i]  # Gen: same classes


def make(env_id, **kw):
    return gym.make(env_id, **kw).unwrapped


def box_squares_from_planes(env):
    return set(np.flatnonzero(env.planes()[3].ravel()).tolist())


def python_goal_events(level, lurd):
    """(boxes pushed onto goals, boxes pushed off goals) by a plain replay."""
    grid = level.grid
    goals = {(r, c) for r, c in zip(*np.nonzero(np.isin(grid, list(".*+"))), strict=True)}
    boxes = set(level.boxes)
    r, c = level.player
    on = off = 0
    for ch in lurd:
        dr, dc = [(-1, 0), (1, 0), (0, -1), (0, 1)][DIRECTION[ch.lower()]]
        r, c = r + dr, c + dc
        if (r, c) in boxes:
            boxes.remove((r, c))
            boxes.add((r + dr, c + dc))
            on += (r + dr, c + dc) in goals and (r, c) not in goals
            off += (r, c) in goals and (r + dr, c + dc) not in goals
    return on, off


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_action_masks__equal_brute_force(env_id):
    env = make(env_id, levels="microban:1-4")
    rng = np.random.default_rng(1)
    env.reset(seed=2)
    for _ in range(4):
        mask = env.action_masks()
        _, _, _, _, info = env.step(random_legal_action(env, rng))
        assert np.array_equal(info["action_mask"], env.action_masks())
        mask = env.action_masks()
        for action in range(env.action_space.n):
            clone = copy.deepcopy(env)
            _, _, _, _, tried = clone.step(action)
            assert mask[action] == (not tried["illegal_action"]), action


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_episode__last_lurd_replays_through_verify(env_id):
    env = make(env_id, levels="microban:1-40", deadlock_termination=False)
    for seed in range(4):
        env.reset(seed=seed)
        rng = np.random.default_rng(seed)
        lurd = ""
        for _ in range(25):
            _, _, term, _, info = env.step(random_legal_action(env, rng))
            lurd += info["last_lurd"]
            if term:
                break
        result = soko_gym.verify(env.level, lurd)
        assert result.index in (None, len(lurd))  # every step legal
        assert (result.moves, result.pushes) == (info["moves"], info["pushes"])
        assert result.ok == info["solved"]
        level_w = env.level.width
        boxes = {env.square(*divmod(int(sq), level_w)) for sq in result.state.box_pos}
        assert boxes == box_squares_from_planes(env)


def test_move_env__solves_microban_1_with_boxoban_rewards():
    env = make("Sokoban-Move-v0", levels="microban:1")
    env.reset(seed=0)
    total = 0.0
    for i, ch in enumerate(MICROBAN_1):
        _, reward, term, trunc, info = env.step(DIRECTION[ch.lower()])
        total += reward
        assert info["last_lurd"] == ch and not info["illegal_action"]
        assert term == (i == len(MICROBAN_1) - 1) and not trunc
    assert info["solved"] and (info["moves"], info["pushes"]) == (33, 8)
    on, off = python_goal_events(env.level, MICROBAN_1)
    assert total == pytest.approx(-0.1 * 33 + on - off + 10)


def test_push_env__solves_microban_1_and_reports_walks():
    env = make("Sokoban-Push-v0", levels="microban:1", reward_scheme="sparse")
    env.reset(seed=0)
    level = env.level
    lurd, total = "", 0.0
    for square, d in lurd_to_pushes(level, MICROBAN_1):
        action = env.square(*divmod(square, level.width)) * 4 + d
        assert env.action_masks()[action]
        _, reward, term, _, info = env.step(action)
        total += reward
        lurd += info["last_lurd"]
        assert info["last_moves"] == len(info["last_lurd"])
    assert term and info["solved"] and total == 1.0
    result = soko_gym.verify(level, lurd)
    assert result.ok and result.pushes == 8 and result.moves <= 33


def test_macro_env__moves_a_box_by_fewest_pushes():
    level = soko_gym.Level.from_xsb("#######\n#@    #\n# $   #\n#    .#\n#######")
    env = make("Sokoban-Macro-v0", levels=[level])
    env.reset(seed=0)
    action = env.square(2, 2) * env.obs_size[0] * env.obs_size[1] + env.square(3, 5)
    assert env.action_masks()[action]
    _, reward, term, _, info = env.step(action)
    assert term and info["solved"] and info["last_pushes"] == 4  # 3 right + 1 down
    assert reward == pytest.approx(-0.1 + 1 + 10)
    assert soko_gym.verify(level, info["last_lurd"]).ok


@pytest.mark.parametrize(
    ("scheme", "expected"),
    [
        ("sparse", 1.0),
        (RewardScheme(step=-1.0, box_on=0.0, box_off=0.0, solved=100.0), 100.0 - 33),
        (lambda o: float(o.pushes) + (5.0 if o.solved else 0.0), 8 + 5.0),
    ],
)
def test_rewards__sum_matches_the_scheme(scheme, expected):
    env = make("Sokoban-Move-v0", levels="microban:1", reward_scheme=scheme)
    env.reset(seed=0)
    total = sum(env.step(DIRECTION[ch.lower()])[1] for ch in MICROBAN_1)
    assert total == pytest.approx(expected)


DEAD_CORNER_LEVELS = [soko_gym.Level.from_xsb("######\n#@$  #\n#   .#\n######")]


def push_right_action(env):
    """The action that pushes the box on (1, 2) one square right (onto the dead top row)."""
    box = env.square(1, 2)
    if isinstance(env, SokobanMoveEnv):
        return 3
    if isinstance(env, SokobanPushEnv):
        return box * 4 + 3
    return box * env.obs_size[0] * env.obs_size[1] + env.square(1, 3)


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deadlock_termination__ends_on_a_dead_square(env_id):
    env = make(env_id, levels=DEAD_CORNER_LEVELS, deadlock_termination=True)
    env.reset(seed=0)
    action = push_right_action(env)
    _, _, term, trunc, info = env.step(action)
    assert term and not trunc and info["deadlock"] and not info["solved"]
    plain = make(env_id, levels=DEAD_CORNER_LEVELS)
    plain.reset(seed=0)
    _, _, term, _, info = plain.step(action)
    assert not term and not info["deadlock"]


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deadlock_mask__leaves_out_the_push_onto_a_dead_square(env_id):
    # the player stands above the box: down pushes it onto the bottom row (no goal: dead)
    level = [soko_gym.Level.from_xsb("#######\n# @   #\n# $ . #\n#     #\n#######")]
    masked = make(env_id, levels=level, deadlock_mask=True)
    plain = make(env_id, levels=level)
    masked.reset(seed=0)
    plain.reset(seed=0)
    box = plain.square(2, 2)
    if isinstance(plain, SokobanMoveEnv):
        action = 1
    elif isinstance(plain, SokobanPushEnv):
        action = box * 4 + 1
    else:
        action = box * plain.obs_size[0] * plain.obs_size[1] + plain.square(3, 2)
    assert plain.action_masks()[action] and not masked.action_masks()[action]
    assert masked.action_masks().any()  # a push right, towards the goal, stays
    _, _, _, _, info = masked.step(action)  # masked, not illegal: it still plays
    assert not info["illegal_action"] and info["pushes"] == 1


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deadlock_mask__keeps_the_mask_whole_when_every_push_deadlocks(env_id):
    # the box can only go right, into a corner: the position is lost whatever is played
    level = soko_gym.Level.from_xsb("#####\n#.  #\n## ##\n#@$ #\n#####")
    masked = make(env_id, levels=[level], deadlock_mask=True)
    plain = make(env_id, levels=[level])
    masked.reset(seed=0)
    plain.reset(seed=0)
    assert np.array_equal(masked.action_masks(), plain.action_masks())
    assert masked.action_masks().sum() >= 1


def deadlocks(env_id, level_index, history, action):
    """Whether ``action`` after replaying ``history`` ends the episode on a simple deadlock."""
    env = make(env_id, levels="microban:1-40", deadlock_termination=True)
    env.reset(options={"level_index": level_index})
    for a in history:
        env.step(a)
    return env.step(action)[4]["deadlock"]


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Move-v0"])
def test_deadlock_mask__clears_exactly_the_pushes_the_env_would_end_on(env_id):
    masked = make(env_id, levels="microban:1-40", deadlock_mask=True)
    n_cleared = 0
    for seed in range(6):
        _, info = masked.reset(seed=seed)
        level_index = info["level_index"]
        plain = make(env_id, levels="microban:1-40")
        plain.reset(options={"level_index": level_index})
        rng = np.random.default_rng(seed)
        history = []
        for _ in range(12):
            legal, kept = plain.action_masks(), masked.action_masks()
            dead = {
                int(a) for a in np.flatnonzero(legal) if deadlocks(env_id, level_index, history, a)
            }
            if len(dead) == legal.sum():  # lost whatever is played: the mask stays whole
                assert np.array_equal(kept, legal)
            else:
                assert set(np.flatnonzero(legal & ~kept).tolist()) == dead
                assert not (kept & ~legal).any()
                n_cleared += len(dead)
            a = random_legal_action(masked, rng)
            history.append(a)
            _, _, term, _, _ = masked.step(a)
            plain.step(a)
            if term:
                break
    assert n_cleared > 0


def microban_1_lost_push(env):
    """The push or macro action that pushes Microban 1's lower box left: lost, but no simple
    deadlock.

    With the box at row 4, col 2 the player can never again reach the square below it, so the
    box never gets up to the goal; no box is on a dead square or frozen.
    """
    box = env.square(4, 3)
    if isinstance(env, SokobanPushEnv):
        return box * 4 + 2
    return box * env.obs_size[0] * env.obs_size[1] + env.square(4, 2)


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Macro-v0"])
def test_deadlock_search__leaves_out_a_push_only_a_search_proves_lost(env_id):
    searched = make(env_id, levels="microban:1", deadlock_search=256)
    simple = make(env_id, levels="microban:1", deadlock_mask=True)
    searched.reset(seed=0)
    simple.reset(seed=0)
    action = microban_1_lost_push(simple)
    assert simple.action_masks()[action] and not searched.action_masks()[action]
    assert not (searched.action_masks() & ~simple.action_masks()).any()
    assert searched.action_masks().any()


def test_deadlock_search__move_env_leaves_out_the_step_that_makes_that_push():
    searched = make("Sokoban-Move-v0", levels="microban:1", deadlock_search=256)
    simple = make("Sokoban-Move-v0", levels="microban:1", deadlock_mask=True)
    for env in (searched, simple):
        env.reset(seed=0)
        for c in "rrd":  # the player walks round to the right of the lower box
            env.step(DIRECTION[c])
    left = DIRECTION["l"]
    assert simple.action_masks()[left] and not searched.action_masks()[left]
    assert searched.action_masks()[DIRECTION["u"]]  # a step without a push stays


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Move-v0"])
def test_deadlock_search__keeps_every_action_of_a_solution(env_id):
    env = make(env_id, levels="microban:1", deadlock_search=1024)
    env.reset(seed=0)
    level = env.level
    if env_id == "Sokoban-Move-v0":
        actions = [DIRECTION[c.lower()] for c in MICROBAN_1]
    else:
        actions = [
            env.square(*divmod(square, level.width)) * 4 + d
            for square, d in lurd_to_pushes(level, MICROBAN_1)
        ]
    for a in actions:
        assert env.action_masks()[a]
        _, _, term, _, info = env.step(a)
    assert term and info["solved"]


def test_deadlock_search__clears_only_positions_a_complete_search_finds_unsolvable():
    import planners
    from soko_gym.envs.render.ansi import planes_to_xsb

    searched = make("Sokoban-Push-v0", levels="microban:1-20", deadlock_search=512)
    simple = make("Sokoban-Push-v0", levels="microban:1-20", deadlock_mask=True)
    n_checked = 0
    for seed in range(8):
        searched.reset(seed=seed)
        simple.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(6):
            for a in np.flatnonzero(simple.action_masks() & ~searched.action_masks()):
                probe = copy.deepcopy(simple)
                probe.step(int(a))
                after = soko_gym.Level.from_xsb(planes_to_xsb(probe.planes()))
                assert planners.solve(after, planner="bfs").status == "unsolvable"
                n_checked += 1
            a = random_legal_action(searched, rng)
            simple.step(a)
            if searched.step(a)[2]:
                break
    assert n_checked >= 3


@pytest.mark.parametrize("env_id", ["Sokoban-Push-v0", "Sokoban-Macro-v0"])
def test_deadlock_search__a_zobrist_table_where_every_box_set_collides_masks_as_the_real_one(
    env_id,
):
    # the search's table keys positions by box hash: fooled by a collision it would run dry on
    # a live position and mask an action a solution needs
    from soko_gym.engine.exhaust import COUNT_EXPANDED, COUNT_PROVED

    real = make(env_id, levels="microban:1-20", deadlock_search=512)
    fake = make(env_id, levels="microban:1-20", deadlock_search=512)
    fake._scratch.search.zobrist[:] = 0
    for seed in range(6):
        real.reset(seed=seed)
        fake.reset(seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(8):
            assert np.array_equal(fake.action_masks(), real.action_masks())
            a = random_legal_action(real, rng)
            fake.step(a)
            if real.step(a)[2]:
                break
    counters = [env._scratch.search.counters[0] for env in (real, fake)]
    assert np.array_equal(*counters)  # the same searches, position by position
    assert counters[0][COUNT_PROVED] > 0 and counters[0][COUNT_EXPANDED] > 0


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_deadlock_search__keeps_the_mask_whole_when_every_action_is_lost(env_id):
    import planners

    # Microban 1 after its lost push: whatever is played, the level stays lost
    level = soko_gym.Level.from_xsb("####\n# .#\n#  ###\n#*   #\n# $@ #\n#  ###\n####")
    assert planners.solve(level, planner="bfs").status == "unsolvable"
    searched = make(env_id, levels=[level], deadlock_search=256)
    simple = make(env_id, levels=[level], deadlock_mask=True)
    searched.reset(seed=0)
    simple.reset(seed=0)
    if env_id == "Sokoban-Move-v0":  # the player first walks next to a box it can push
        for env in (searched, simple):
            env.step(DIRECTION["u"])
    pushes = simple.action_masks()
    assert pushes.any()
    assert np.array_equal(searched.action_masks(), pushes)


@pytest.mark.parametrize("value", [-1, True, 1.5, "64"])
def test_deadlock_search__bad_values_raise_value_error_naming_it(value):
    with pytest.raises(ValueError, match="deadlock_search"):
        make("Sokoban-Push-v0", levels="microban:1", deadlock_search=value)


def test_illegal_action__is_a_costly_noop_or_raises():
    env = make("Sokoban-Move-v0", levels="microban:1")
    obs, _ = env.reset(seed=0)
    wall = int(np.flatnonzero(~env.action_masks())[0])
    again, reward, term, _, info = env.step(wall)
    assert info["illegal_action"] and reward == pytest.approx(-0.1) and not term
    assert np.array_equal(obs, again) and info["moves"] == 0
    strict = make("Sokoban-Move-v0", levels="microban:1", illegal_action="raise")
    strict.reset(seed=0)
    with pytest.raises(ValueError, match="illegal"):
        strict.step(wall)


def test_noop_action__adds_a_fifth_legal_action():
    env = make("Sokoban-Move-v0", levels="microban:1", noop_action=True)
    obs, _ = env.reset(seed=0)
    assert env.action_space.n == 5 and env.action_masks()[4]
    again, reward, _, _, info = env.step(4)
    assert np.array_equal(obs, again) and not info["illegal_action"] and reward == -0.1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"colour": "red"}, "colour"),
        ({"levels": "microban", "obs_size": 5}, "obs_size"),
        ({"obs_size": (2, 200)}, "obs_size"),
        ({"levels": []}, "levels"),
        ({"levels": 42}, "levels"),
        ({"reward_scheme": "dense"}, "reward_scheme"),
        ({"obs_mode": "pixels"}, "obs_mode"),
        ({"level_order": "shuffled"}, "level_order"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"render_mode": "video"}, "render_mode"),
        ({"generator_kwargs": {"width": 8}}, "generator_kwargs"),
    ],
)
def test_bad_arguments__raise_value_error_naming_them(kwargs, name):
    with pytest.raises(ValueError, match=name):
        make("Sokoban-Push-v0", **kwargs)


@pytest.mark.parametrize("action", [-1, 400, 1.5, "3", True, np.array([1, 2])])
def test_bad_actions__raise_value_error(action):
    env = make("Sokoban-Push-v0", levels="boxoban-hard:1")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action"):
        env.step(action)


def test_step_before_reset__is_gymnasiums_error():
    with pytest.raises(gym.error.ResetNeeded):
        gym.make("Sokoban-Move-v0").step(0)
    with pytest.raises(gym.error.ResetNeeded):
        make("Sokoban-Move-v0").step(0)


def test_level_order__sequential_and_level_index():
    env = make("Sokoban-Push-v0", levels="microban:1-3", level_order="sequential")
    assert [env.reset()[1]["level_index"] for _ in range(4)] == [0, 1, 2, 0]
    assert env.reset(seed=5)[1]["level_index"] == 0
    _, info = env.reset(options={"level_index": 2})
    assert info["level_index"] == 2 and info["level_title"] == "3"
    with pytest.raises(ValueError, match="level_index"):
        env.reset(options={"level_index": 3})
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"level": 1})


def test_observation__planes_are_centred_and_padded():
    level = soko_gym.load_levels("microban:1")[0]  # 7 rows x 6 cols
    env = make("Sokoban-Push-v0", levels=[level], obs_size=(11, 10), dead_plane=True)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (6, 11, 10) and env.observation_space.contains(obs)
    assert env.plane_names == ("wall", "floor", "goal", "box", "player", "dead")
    wall, floor, goal, box, player, dead = obs
    assert wall[:2].sum() == 0 and wall[:, :2].sum() == 0  # (11-7)//2 = 2 rows, (10-6)//2 = 2
    assert wall.sum() == len(level.walls) and goal.sum() == box.sum() == level.n_boxes
    assert player.sum() == 1 and player[2 + level.player[0], 2 + level.player[1]] == 1
    board_dead = level.board.dead.reshape(level.height, level.width)
    assert np.array_equal(dead[2:9, 2:8], board_dead)
    assert not (floor & wall).any()


def test_observation__rgb_mode_gives_images():
    env = make("Sokoban-Move-v0", levels="boxoban-hard:1", obs_mode="rgb", tile_size=4)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (40, 40, 3) and obs.dtype == np.uint8
    assert env.observation_space.contains(obs)
    obs2, *_ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert not np.array_equal(obs, obs2)


def test_render__ansi_is_the_level_as_xsb_and_rgb_is_a_frame():
    env = make("Sokoban-Push-v0", levels="microban:2", render_mode="ansi")
    env.reset(seed=0)
    assert soko_gym.Level.from_xsb(env.render()).rows == env.level.rows
    env = make("Sokoban-Push-v0", levels="boxoban-hard:1", render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (160, 160, 3) and frame.dtype == np.uint8


def test_render__human_without_pygame_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pygame", None)
    env = make("Sokoban-Move-v0", levels="microban:1", render_mode="human")
    with pytest.raises(ImportError, match=r"soko-gym\[render\]"):
        env.reset(seed=0)


def test_generated_levels__are_seeded_and_solvable():
    kw = {"generator_kwargs": {"width": 8, "height": 8, "n_boxes": 2}}
    a = make("Sokoban-Push-v0", levels="generated", **kw)
    b = make("Sokoban-Push-v0", levels="generated", **kw)
    levels_a = [a.reset(seed=11)[0] for _ in range(1)] + [a.reset()[0] for _ in range(3)]
    levels_b = [b.reset(seed=11)[0] for _ in range(1)] + [b.reset()[0] for _ in range(3)]
    assert all(np.array_equal(x, y) for x, y in zip(levels_a, levels_b, strict=True))
    assert not np.array_equal(levels_a[0], levels_a[1])
    assert a.observation_space.shape == (5, 8, 8)
    with pytest.raises(ValueError, match="level_index"):
        a.reset(options={"level_index": 0})
    with pytest.raises(ValueError, match="generator_kwargs"):
        make("Sokoban-Push-v0", levels="generated", generator_kwargs={"colour": 1})


def test_generated_levels__in_a_vector_env_differ_per_sub_env():
    venv = soko_gym.make_vec("Sokoban-Move-v0", 3, levels="generated")
    obs, info = venv.reset(seed=0)
    assert info["level_index"].tolist() == [0, 1, 2]
    assert not np.array_equal(obs[0], obs[1])
