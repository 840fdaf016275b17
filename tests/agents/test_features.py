import sys

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

import torch  # noqa: E402
from gymnasium import spaces  # noqa: E402

from agents.features import (  # noqa: E402
    BoardCNN,
    MaskableSquarePolicy,
    SquareHeads,
    SquarePolicy,
    default_features_kwargs,
    pad_with_wall,
)


def planes_space(c, h, w):
    return spaces.Box(0, 1, (c, h, w), np.uint8)


@pytest.mark.parametrize("size", [(5, 5), (7, 7), (10, 10), (13, 21), (64, 64)])
@pytest.mark.parametrize("pooling", ["flatten", "mean-max"])
def test_board_cnn__works_from_5x5_to_64x64(size, pooling):
    space = planes_space(6, *size)
    net = BoardCNN(space, channels=8, n_layers=3, pooling=pooling, features_dim=16)
    obs = torch.as_tensor(np.stack([space.sample() for _ in range(3)]))
    out = net(obs)
    assert out.shape == (3, 16) == (3, net.features_dim)
    assert torch.isfinite(out).all()


def test_board_cnn__without_head_gives_the_flattened_map_or_pooled_features():
    flat = BoardCNN(planes_space(5, 7, 9), channels=4, n_layers=2, features_dim=0)
    assert flat.features_dim == 4 * 7 * 9
    pooled = BoardCNN(
        planes_space(5, 7, 9), channels=4, n_layers=2, pooling="mean-max", features_dim=0
    )
    assert pooled.features_dim == 8
    assert flat(torch.zeros(2, 5, 7, 9)).shape == (2, 4 * 7 * 9)


def test_pad_with_wall__border_is_wall_and_nothing_else():
    x = torch.rand(2, 6, 4, 5)
    y = pad_with_wall(x, 2)
    assert y.shape == (2, 6, 8, 9)
    assert torch.equal(y[:, :, 2:-2, 2:-2], x)
    border = torch.ones(8, 9, dtype=torch.bool)
    border[2:-2, 2:-2] = False
    assert (y[:, 0][:, border] == 1).all()  # wall plane
    assert (y[:, 1:][:, :, border] == 0).all()  # floor, goal, box, player, dead


def test_board_cnn__rejects_rgb_and_bad_arguments():
    with pytest.raises(ValueError, match="planes"):
        BoardCNN(spaces.Box(0, 255, (56, 56, 3), np.uint8))
    with pytest.raises(ValueError, match="pooling"):
        BoardCNN(planes_space(5, 7, 7), pooling="avg")
    with pytest.raises(ValueError, match="channels"):
        BoardCNN(planes_space(5, 7, 7), channels=0)


def test_default_features_kwargs__grow_with_the_board():
    small, boxoban, big = (default_features_kwargs(s) for s in [(7, 7), (10, 10), (30, 30)])
    assert small["pooling"] == boxoban["pooling"] == "flatten"
    assert big["pooling"] == "mean-max"
    assert small["channels"] <= boxoban["channels"]


def test_square_heads__logits_follow_the_push_action_order():
    heads = SquareHeads(channels=4, height=3, width=5)
    with torch.no_grad():  # logit of direction d = feature map d
        heads.logits.weight.zero_()
        heads.logits.bias.zero_()
        for d in range(4):
            heads.logits.weight[d, d] = 1.0
    maps = torch.arange(4 * 3 * 5, dtype=torch.float32).reshape(1, 4, 3, 5)
    logits = heads.forward_actor(maps.flatten(1))
    assert logits.shape == (1, 4 * 15)
    for row in range(3):
        for col in range(5):
            square = row * 5 + col
            for d in range(4):
                assert logits[0, square * 4 + d] == maps[0, d, row, col]


def lr(_):
    return 1e-3


@pytest.mark.parametrize("policy_class", [SquarePolicy, MaskableSquarePolicy])
def test_square_policy__is_translation_equivariant_inside_the_board(policy_class):
    h = w = 9
    policy = policy_class(
        planes_space(5, h, w),
        spaces.Discrete(4 * h * w),
        lr,
        features_extractor_kwargs={"channels": 8, "n_layers": 2},
    )
    obs = torch.zeros(2, 5, h, w)
    obs[:, 1] = 1.0  # all floor
    obs[0, 3, 3, 3] = obs[0, 4, 3, 4] = 1.0  # box, player to its right
    obs[1, 3, 4, 3] = obs[1, 4, 4, 4] = 1.0  # the same, one row down
    with torch.no_grad():
        logits = policy.get_distribution(obs).distribution.logits
    a = logits[0].reshape(h, w, 4)
    b = logits[1].reshape(h, w, 4)
    assert torch.allclose(a[3, 3], b[4, 3], atol=1e-5)


def test_square_policy__rejects_other_action_spaces():
    with pytest.raises(ValueError, match="Push env"):
        SquarePolicy(planes_space(5, 7, 7), spaces.Discrete(7), lr)


@pytest.mark.parametrize("n_actions", [4, 5])
def test_square_policy__move_env_steps_are_the_players_squares_push_logits(n_actions):
    """In the Move env the policy reads the four direction logits where the player stands, so
    the same surroundings give the same steps wherever they are (and the no-op has its own)."""
    h = w = 9
    policy = MaskableSquarePolicy(
        planes_space(6, h, w),
        spaces.Discrete(n_actions),
        lr,
        features_extractor_kwargs={"channels": 8, "n_layers": 3, "border": "same"},
    )
    obs = torch.zeros(2, 6, h, w)
    obs[:, 1] = 1.0
    obs[0, 3, 3, 3] = obs[0, 4, 3, 4] = 1.0  # box, player to its right
    obs[1, 3, 4, 3] = obs[1, 4, 4, 4] = 1.0  # the same, one row down
    with torch.no_grad():
        logits = policy.get_distribution(obs).distribution.logits
        features = policy.extract_features(obs)
        maps = policy.mlp_extractor.logits(features.view(2, 9, h, w)[:, :8])
    assert logits.shape == (2, n_actions)
    assert torch.allclose(logits[0], logits[1], atol=1e-5)
    raw = [maps[0, :, 3, 4]] + ([policy.mlp_extractor.noop] if n_actions == 5 else [])
    steps = torch.log_softmax(torch.cat(raw), dim=0)
    assert torch.allclose(logits[0], steps, atol=1e-5)


@pytest.mark.parametrize("residual", [False, True])
def test_board_cnn__same_border_keeps_the_board_size_and_sees_the_wall_ring(residual):
    cnn = BoardCNN(
        planes_space(5, 6, 8),
        channels=4,
        n_layers=5,
        features_dim=0,
        border="same",
        residual=residual,
    )
    assert cnn(torch.zeros(3, 5, 6, 8)).shape == (3, 4 * 6 * 8)
    obs = torch.zeros(1, 5, 6, 8)
    obs[0, 1] = 1.0  # all floor, no drawn wall: only the ring added around the board is wall
    out = cnn(obs).view(4, 6, 8)
    # the ring is wall, so the top-left square (next to it) differs from the middle one
    assert not torch.allclose(out[:, 0, 0], out[:, 3, 4])
    with pytest.raises(ValueError, match="border"):
        BoardCNN(planes_space(5, 6, 8), border="zero")


def test_features__missing_torch_names_the_rl_extra(monkeypatch):
    monkeypatch.delitem(sys.modules, "agents.features")
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch -> ImportError
    with pytest.raises(ImportError, match=r"soko-gym\[rl\]"):
        import agents.features  # noqa: F401


@pytest.mark.parametrize("value_head", ["conv", "pool"])
def test_square_heads__value_latent_has_the_declared_width(value_head):
    heads = SquareHeads(channels=4, height=3, width=5, value_hidden=7, value_head=value_head)
    pi, vf = heads(torch.rand(2, 4 * 3 * 5))
    assert pi.shape == (2, heads.latent_dim_pi) == (2, 60)
    assert vf.shape == (2, heads.latent_dim_vf) == (2, 7)
    with pytest.raises(ValueError, match="value_head"):
        SquareHeads(channels=4, height=3, width=5, value_head="mlp")
