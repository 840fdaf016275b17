"""The planner as an expert: its policy, its episodes and the datasets they make.

``policy``: ``PlannerPolicy``, a planner behind SB3's ``predict`` (re-exported here);
``episodes``: planner solutions played in the env, level by level on ``soko_gym.execution``;
``collect``: those episodes into one dataset through ``shards``; ``datasets``: the episode
records and their npz and Minari files; ``cli``: ``soko collect``.
"""

from agents.expert.policy import PlannerPolicy

__all__ = ["PlannerPolicy"]
