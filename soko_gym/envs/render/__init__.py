"""Renderers of observation planes: XSB text (ansi), RGB pictures (rgb) and a pygame window.

pygame is imported only when a :class:`HumanRenderer` shows its first frame.
"""

from soko_gym.envs.render.ansi import planes_to_xsb
from soko_gym.envs.render.human import HumanRenderer
from soko_gym.envs.render.rgb import draw_planes, draw_planes_batch, tile_atlas

__all__ = ["HumanRenderer", "draw_planes", "draw_planes_batch", "planes_to_xsb", "tile_atlas"]
