"""BoardCNN: an SB3 features extractor for soko-gym's observation planes, any board from 5x5 up.

SB3's ``NatureCNN`` strides down by 8 and needs boards of at least 36x36; Sokoban boards are
5x5 to 20x20 and every square matters. ``BoardCNN`` runs 3x3 convolutions without
downsampling on the ``(C, H, W)`` planes (wall, floor, goal, box, player, optional dead). The
board is padded once with wall squares (the wall plane is 1 in the padding, the others 0) and
every convolution is then "valid", so no layer ever sees a zero border that looks like an
unknown square. The last feature map is either flattened (position-aware) or pooled over the
board (mean and max: one network for every board size).

``SquarePolicy`` and ``MaskableSquarePolicy`` (for PPO and MaskablePPO) suit the Push env,
whose ``4 * H * W`` actions are "push the box on this square in this direction": a 1x1
convolution turns each square's features into its four push logits, so the policy is
translation-equivariant and has no board-sized dense layer; the value head pools the map. In
the Move env (4 or 5 actions) the same logits are read at the player's square: its steps.
Needs the ``rl`` extra (torch, stable-baselines3, sb3-contrib).
"""

from __future__ import annotations

from functools import partial
from typing import Any

try:
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn
    from torch.nn import functional as F
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "agents.features needs torch, stable-baselines3 and sb3-contrib: "
        'pip install "soko-gym[rl]" (install torch first, e.g. pip install torch)'
    ) from err

from gymnasium import spaces

from agents.playing.symmetry import MOVE_ACTION_COUNTS
from soko_gym.engine.constants import N_DIRECTIONS, PLANE_PLAYER, PLANE_WALL

POOLINGS = ("flatten", "mean-max")
BORDERS = ("wall", "same")
VALUE_HEADS = ("conv", "pool")
VALUE_MAPS = 8  # maps the "conv" value head keeps per square
MIN_SIDE = 3  # the observation frame's smallest side


class BoardCNN(BaseFeaturesExtractor):
    """3x3 convolutions over board planes, wall-padded, without downsampling.

    Args:
        observation_space: ``Box(0, 1, (C, H, W), uint8)`` planes of a soko-gym env
            (``obs_mode="planes"``); channel ``PLANE_WALL`` (0) is the wall plane.
        channels: feature maps per convolution.
        n_layers: number of 3x3 convolutions (the receptive field is ``2 * n_layers + 1``
            squares wide).
        pooling: ``"flatten"`` keeps every square's features (``channels * H * W`` of them,
            then ``features_dim`` with a linear layer); ``"mean-max"`` averages and maxes each
            feature map over the board (``2 * channels`` features, any board size).
        features_dim: width of the linear layer after flattening or pooling (with a ReLU);
            0 for none (the flattened or pooled features go to the policy as they are).
        residual: add each convolution's input to its output (from the second layer on).
        border: ``"wall"``: the board is padded with ``n_layers`` rings of wall and every
            convolution is "valid" (no layer sees a zero border); ``"same"``: one ring of wall,
            then zero-padded convolutions that keep the board's size (several times cheaper
            for deep networks; suits boards whose levels are framed by walls, as Boxoban's).
        player_plane: with ``"flatten"`` and no ``features_dim``, append the observation's
            player plane to the map as one more channel (the Move env's square heads read
            their logits at the player's square).

    Raises:
        ValueError: for a space that is not board planes, or a bad argument.
    """

    def __init__(
        self,
        observation_space: spaces.Box,
        channels: int = 32,
        n_layers: int = 4,
        pooling: str = "flatten",
        features_dim: int = 256,
        residual: bool = False,
        player_plane: bool = False,
        border: str = "wall",
    ) -> None:
        shape = getattr(observation_space, "shape", None)
        if not isinstance(observation_space, spaces.Box) or shape is None or len(shape) != 3:
            raise ValueError(
                "BoardCNN needs soko-gym's (C, H, W) observation planes (obs_mode='planes'), "
                f"got {observation_space!r}"
            )
        n_planes, height, width = (int(x) for x in shape)
        if n_planes > 8 or min(height, width) < MIN_SIDE:
            raise ValueError(
                f"BoardCNN needs (C, H, W) planes with C <= 8 and H, W >= {MIN_SIDE}, got "
                f"shape {shape} (RGB observations are not supported: use obs_mode='planes')"
            )
        if pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
        for name, value, low in (("channels", channels, 1), ("n_layers", n_layers, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
        if isinstance(features_dim, bool) or not isinstance(features_dim, int) or features_dim < 0:
            raise ValueError(f"features_dim must be an int >= 0, got {features_dim!r}")
        if border not in BORDERS:
            raise ValueError(f"border must be one of {BORDERS}, got {border!r}")
        if player_plane and (pooling != "flatten" or features_dim):
            raise ValueError("player_plane needs pooling='flatten' and features_dim=0")
        extra = int(bool(player_plane))
        pooled = (channels + extra) * height * width if pooling == "flatten" else 2 * channels
        super().__init__(observation_space, features_dim or pooled)
        self.pad = n_layers if border == "wall" else 1
        self.border = border
        self.pooling = pooling
        self.residual = bool(residual)
        self.player_plane = bool(player_plane)
        self.convs = nn.ModuleList(
            nn.Conv2d(
                n_planes if i == 0 else channels,
                channels,
                3,
                padding=1 if border == "same" and i > 0 else 0,
            )
            for i in range(n_layers)
        )
        self.head = (
            nn.Sequential(nn.Linear(pooled, features_dim), nn.ReLU()) if features_dim else None
        )

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        """Features of a batch of planes: float[batch, C, H, W] -> float[batch, features_dim]."""
        x = pad_with_wall(observations.float(), self.pad)
        for i, conv in enumerate(self.convs):
            y = F.relu(conv(x))
            if self.residual and i > 0:
                y = y + (x if self.border == "same" else x[:, :, 1:-1, 1:-1])
            x = y
        if self.player_plane:
            x = torch.cat([x, observations[:, PLANE_PLAYER : PLANE_PLAYER + 1].float()], dim=1)
        if self.pooling == "flatten":
            x = x.flatten(1)
        else:
            x = torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)
        return x if self.head is None else self.head(x)


def pad_with_wall(planes: torch.Tensor, pad: int) -> torch.Tensor:
    """``planes`` (float[batch, C, H, W]) framed by ``pad`` squares of wall on every side."""
    if pad == 0:
        return planes
    x = F.pad(planes, (pad, pad, pad, pad))
    border = torch.ones_like(x[:, PLANE_WALL])
    border[:, pad:-pad, pad:-pad] = planes[:, PLANE_WALL]
    return torch.cat([x[:, :PLANE_WALL], border[:, None], x[:, PLANE_WALL + 1 :]], dim=1)


def default_features_kwargs(obs_size: tuple[int, int]) -> dict[str, Any]:
    """``features_extractor_kwargs`` that suit a board of ``obs_size = (H, W)``.

    Up to 8x8 (generated 7x7 levels): 32 channels, 4 layers, flattened to 256 features. Up to
    12x12 (Boxoban's 10x10): 64 channels, 5 layers, 256 features. Larger boards: 64 channels,
    6 layers, pooled (the flattened map would be ``64 * H * W`` wide).
    """
    side = max(obs_size)
    if side <= 8:
        return {"channels": 32, "n_layers": 4, "pooling": "flatten", "features_dim": 256}
    if side <= 12:
        return {"channels": 64, "n_layers": 5, "pooling": "flatten", "features_dim": 256}
    return {"channels": 64, "n_layers": 6, "pooling": "mean-max", "features_dim": 256}


class SquareHeads(nn.Module):
    """Policy and value heads on BoardCNN's flattened map (SB3's ``mlp_extractor`` slot).

    ``forward_actor`` gives the push logits themselves, float[batch, 4 * H * W] in the Push
    env's order (``square * 4 + direction``); ``forward_critic`` gives a value latent. For
    the Move env (``moves`` = 4 or 5 actions) the map carries the player plane as its last
    channel and the actor gives the four direction logits of the player's square: the step
    is read where the player stands, as a push is read where its box stands (a no-op, the
    fifth action, gets a learned logit of its own).

    Args:
        channels: feature maps of the extractor's last convolution.
        height: board rows.
        width: board columns.
        n_dirs: logits per square (4 push directions).
        value_hidden: width of the value latent.
        value_head: ``"conv"``: a 1x1 convolution to ``VALUE_MAPS`` maps, flattened, then a
            linear layer (sees where things are: which box is near which goal);
            ``"pool"``: mean and max of each map over the board, then a linear layer (any
            board size, fewer weights).
    """

    def __init__(
        self,
        channels: int,
        height: int,
        width: int,
        n_dirs: int = 4,
        value_hidden: int = 64,
        value_head: str = "conv",
        moves: int = 0,
    ) -> None:
        super().__init__()
        if value_head not in VALUE_HEADS:
            raise ValueError(f"value_head must be one of {VALUE_HEADS}, got {value_head!r}")
        self.moves = moves
        self.shape = (channels + int(moves > 0), height, width)
        self.channels = channels
        self.logits = nn.Conv2d(channels, n_dirs, 1)
        self.noop = nn.Parameter(torch.zeros(1)) if moves > n_dirs else None
        self.value_head = value_head
        if value_head == "conv":
            self.value_maps = nn.Conv2d(channels, VALUE_MAPS, 1)
            n_in = VALUE_MAPS * height * width
        else:
            n_in = 2 * channels
        self.value = nn.Sequential(nn.Linear(n_in, value_hidden), nn.ReLU())
        self.latent_dim_pi = moves or n_dirs * height * width
        self.latent_dim_vf = value_hidden

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(push logits, value latent) of flattened feature maps."""
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        """Push logits float[batch, n_dirs * H * W], square-major.

        In the Move env: float[batch, moves], the player's square's.
        """
        x = features.view(-1, *self.shape)
        logits = self.logits(x[:, : self.channels])
        if not self.moves:
            return logits.permute(0, 2, 3, 1).flatten(1)
        player = x[:, self.channels :]  # one-hot: the player's square
        steps = (logits * player).sum(dim=(2, 3))
        if self.noop is None:
            return steps
        return torch.cat([steps, self.noop.expand(len(steps), 1)], dim=1)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        """Value latent float[batch, value_hidden]."""
        x = features.view(-1, *self.shape)[:, : self.channels]
        if self.value_head == "conv":
            return self.value(F.relu(self.value_maps(x)).flatten(1))
        return self.value(torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1))


class _SquareHeadsMixin:
    """Builds ``SquareHeads`` in place of SB3's MLP extractor and action layer."""

    def __init__(
        self, *args: Any, value_hidden: int = 64, value_head: str = "conv", **kwargs: Any
    ) -> None:
        fe_kwargs = dict(kwargs.pop("features_extractor_kwargs", None) or {})
        fe_kwargs.update(pooling="flatten", features_dim=0)  # the heads need the whole map
        space = args[1] if len(args) > 1 else kwargs.get("action_space")
        # the Move env: the heads read the player's square, so the map carries the player
        fe_kwargs["player_plane"] = int(getattr(space, "n", 0)) in MOVE_ACTION_COUNTS
        kwargs["features_extractor_kwargs"] = fe_kwargs
        kwargs.setdefault("features_extractor_class", BoardCNN)
        self.value_hidden = value_hidden
        self.value_head = value_head
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        extractor = self.features_extractor
        if not isinstance(extractor, BoardCNN):
            raise ValueError("square policies need the BoardCNN features extractor")
        _, height, width = self.observation_space.shape
        n = int(self.action_space.n)
        moves = n if extractor.player_plane else 0
        n_dirs, rest = divmod(n, height * width)
        if not moves and (rest or n_dirs != N_DIRECTIONS):
            raise ValueError(
                f"square policies are for the Push env (4 * H * W actions) and the Move env "
                f"(4 or 5); got {self.action_space} on a {height}x{width} board"
            )
        channels = extractor.convs[-1].out_channels
        self.mlp_extractor = SquareHeads(
            channels, height, width, N_DIRECTIONS, self.value_hidden, self.value_head, moves
        )

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the heads already give the logits
        if self.ortho_init:
            self.mlp_extractor.logits.apply(partial(self.init_weights, gain=0.01))
        self.optimizer = self.optimizer_class(
            self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs
        )

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        data["value_hidden"] = self.value_hidden
        data["value_head"] = self.value_head
        return data


class SquarePolicy(_SquareHeadsMixin, ActorCriticPolicy):
    """PPO policy for the Push env: BoardCNN, per-square push logits, pooled value head.

    In the Move env the policy's steps are the four logits of the player's square.
    Takes ActorCriticPolicy's arguments plus ``value_hidden`` (width of the value latent) and
    ``value_head`` ("conv" or "pool", see ``SquareHeads``);
    ``features_extractor_kwargs`` go to ``BoardCNN`` (its pooling is always ``"flatten"``
    and its ``features_dim`` 0).
    """


class MaskableSquarePolicy(_SquareHeadsMixin, MaskableActorCriticPolicy):
    """MaskablePPO policy for the Push and Move envs (as ``SquarePolicy``)."""
