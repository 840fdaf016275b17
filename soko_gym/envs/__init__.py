"""Gymnasium environments over the engine: push, macro and move envs, vector env, renderers.

Import the classes from their modules (``soko_gym.envs.push_env`` ...) or make them by id
(``gym.make("Sokoban-Push-v0")``); this package imports nothing heavy by itself.
"""
