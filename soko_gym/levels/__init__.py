"""Levels: the Level object, XSB/RLE reading and writing, LURD solutions, packs, generator."""

from soko_gym.levels.generator import GeneratedLevel, generate_level, generate_levels
from soko_gym.levels.level import Level
from soko_gym.levels.lurd import lurd_to_pushes, pushes_to_lurd, verify
from soko_gym.levels.packs import PackInfo, load_levels, pack_info, packs
from soko_gym.levels.xsb import dump_levels, parse_levels

__all__ = [
    "GeneratedLevel",
    "Level",
    "PackInfo",
    "dump_levels",
    "generate_level",
    "generate_levels",
    "load_levels",
    "lurd_to_pushes",
    "pack_info",
    "packs",
    "parse_levels",
    "pushes_to_lurd",
    "verify",
]
