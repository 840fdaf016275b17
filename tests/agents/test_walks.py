"""Walk labels: every step of a shortest walk to the expert's next push, and only those."""

from collections import deque

import numpy as np

from agents.training.walks import push_flags, shortest_steps, walk_targets
from soko_gym.engine.constants import DIRECTION_DELTAS


def bfs_distance(free, target):
    h, w = free.shape
    dist = np.full((h, w), -1)
    dist[target] = 0
    queue = deque([target])
    while queue:
        r, c = queue.popleft()
        for dr, dc in DIRECTION_DELTAS:
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and free[nr, nc] and dist[nr, nc] < 0:
                dist[nr, nc] = dist[r, c] + 1
                queue.append((nr, nc))
    return dist


def test_shortest_steps__are_the_steps_a_breadth_first_search_calls_shortest():
    rng = np.random.default_rng(0)
    n, h, w = 300, 7, 8
    free = rng.random((n, h, w)) < 0.7
    player = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
    target = np.stack([rng.integers(0, h, n), rng.integers(0, w, n)], axis=1)
    free[np.arange(n), player[:, 0], player[:, 1]] = True
    got = shortest_steps(free, player, target)
    for i in range(n):
        dist = bfs_distance(free[i], tuple(target[i]))
        here = dist[tuple(player[i])]
        for d, (dr, dc) in enumerate(DIRECTION_DELTAS):
            r, c = player[i, 0] + dr, player[i, 1] + dc
            inside = 0 <= r < h and 0 <= c < w
            want = here > 0 and inside and dist[r, c] == here - 1
            assert got[i, d] == want, (i, d)


def planes(player, boxes, rows=5, cols=7):
    """Move-env planes of an open room (walls around), the player and ``boxes``."""
    obs = np.zeros((6, rows, cols), dtype=np.uint8)
    obs[0] = 1
    obs[0, 1:-1, 1:-1] = 0
    obs[1, 1:-1, 1:-1] = 1
    for r, c in boxes:
        obs[3, r, c] = 1
    obs[4][player] = 1
    return obs


def test_walk_targets__weigh_every_shortest_step_to_the_next_push_alike():
    # the player walks from (1, 1) to (3, 3) (two steps down, two right) and pushes the box
    # at (3, 4) right; then a second episode of one push
    boxes = [(3, 4)]
    walk = [((1, 1), 1), ((2, 1), 3), ((2, 2), 1), ((3, 2), 3), ((3, 3), 3)]
    obs = [planes(p, boxes) for p, _ in walk] + [planes((2, 2), [(2, 3)])]
    actions = [a for _, a in walk] + [3]
    episodes = [0] * len(walk) + [1]
    obs, actions = np.stack(obs), np.array(actions)
    assert push_flags(obs, actions).tolist() == [False, False, False, False, True, True]
    soft = walk_targets(obs, actions, np.array(episodes))
    down, right = 1, 3
    half = np.zeros(4, np.float32)
    half[[down, right]] = 0.5
    np.testing.assert_allclose(soft[0], half)  # (1,1) -> (3,3): down or right
    np.testing.assert_allclose(soft[1], half)
    np.testing.assert_allclose(soft[2], half)
    for row in (3, 4, 5):  # one way left, and the pushes themselves
        assert soft[row, actions[row]] == 1.0


def test_walk_targets__a_walk_not_ending_in_a_push_keeps_its_action():
    obs = np.stack([planes((1, 1), [(3, 4)]), planes((2, 1), [(3, 4)])])
    soft = walk_targets(obs, np.array([1, 3]), np.array([0, 0]))
    assert soft.tolist() == [[0, 1, 0, 0], [0, 0, 0, 1]]


def test_walk_observation__labels_every_shortest_first_step_of_a_fresh_plan():
    import gymnasium as gym

    from agents.training.labels import walk_observation
    from soko_gym.levels import Level

    level = Level.from_xsb("#######\n#@    #\n#     #\n#   $.#\n#######\n")
    env = gym.make("Sokoban-Move-v0", levels=[level], dead_plane=True, trail_plane=True)
    obs, _ = env.reset(seed=0)
    status, action, label = walk_observation(obs)
    down, right = 1, 3
    assert status == "ok" and action in (down, right)
    np.testing.assert_allclose(label, [0, 0.5, 0, 0.5])
    for step in (down, down, right, right):  # to the square the push is made from
        obs, *_ = env.step(step)
    status, action, label = walk_observation(obs)
    assert (status, action) == ("ok", right) and label.tolist() == [0, 0, 0, 1]


def test_ranked_walk__labels_steps_to_the_nearest_cheapest_push():
    import gymnasium as gym

    from agents.expert.policy import push_action_mask
    from agents.training.labels import nearest_best_label, push_costs, read_position
    from soko_gym.levels import Level

    # each box is one push from its goal (2 pushes to go); pushing either the other way costs
    # 4; the right box's push is made from the square above the player, the left one's is 2 away
    level = Level.from_xsb("########\n#.$  $.#\n#   @  #\n########\n")
    env = gym.make("Sokoban-Move-v0", levels=[level], dead_plane=True, trail_plane=True)
    obs, _ = env.reset(seed=0)
    position = read_position(obs)
    up, left, right = 0, 2, 3
    near, far = position.boxes[1] * 4, position.boxes[0] * 4  # the right box, the left one
    mask = push_action_mask(position)
    assert sorted(np.flatnonzero(mask)) == sorted(
        [far + left, far + right, near + left, near + right]
    )
    costs = push_costs(position, mask)
    assert costs[[far + left, near + right, far + right, near + left]].tolist() == [2, 2, 4, 4]
    assert nearest_best_label(position, costs)[:2] == ("ok", up)
    np.testing.assert_array_equal(nearest_best_label(position, costs)[2], [1, 0, 0, 0])
    obs, *_ = env.step(up)  # at the square the push is made from: the push itself
    position = read_position(obs)
    status, action, label = nearest_best_label(
        position, push_costs(position, push_action_mask(position))
    )
    assert (status, action, label.tolist()) == ("ok", right, [0, 0, 0, 1])


def test_push_teacher__labels_one_push_per_walk_and_solves_test_levels():
    """The shipped Push agent as the Move env's teacher: every position of a walk is labelled
    toward the same push (the player asked on its region's square), and playing its labels'
    steps solves unfiltered-test levels."""
    import gymnasium as gym
    import pytest

    pytest.importorskip("sb3_contrib")
    from agents.training.teacher import PushTeacher, TeacherPolicy
    from soko_gym.engine.constants import PLANE_BOX

    teacher = PushTeacher("pretrained:boxoban-push")
    env = gym.make(
        "Sokoban-Move-v0",
        levels="boxoban-unfiltered-test:1-5",
        dead_plane=True,
        trail_plane=True,
        deadlock_termination=True,
    )
    solved = 0
    for k in range(5):
        obs, info = env.reset(options={"level_index": k})
        target = None
        while True:
            _, pushes = teacher.pushes(obs[None])
            assert target is None or pushes[0] == target  # mid-walk: the same push
            status, action, label = teacher.label(obs[None])[0]
            assert status == "ok" and info["action_mask"][action] and label[action] > 0
            assert np.isclose(label.sum(), 1.0)
            boxes = obs[PLANE_BOX].copy()
            obs, _, term, trunc, info = env.step(action)
            target = None if not np.array_equal(boxes, obs[PLANE_BOX]) else pushes[0]
            if term or trunc:
                break
        solved += bool(info["solved"])
    assert solved >= 4
    actions, _ = TeacherPolicy(teacher).predict(np.stack([env.reset(seed=0)[0]] * 2))
    assert actions.shape == (2,)
    with pytest.raises(ValueError, match="Push-env"):
        PushTeacher("pretrained:boxoban-move")
