"""Agents at play: saved and shipped models, the ways they choose actions, THE play loop.

``loop.play`` is the one loop that plays an agent on levels (evaluation, ``soko bench`` and
the benchmark scripts record what they need through its hook); ``act`` calls a policy;
``models`` and ``zoo`` load saved and shipped agents with the env they play; ``symmetry`` and
``repeat`` wrap a policy; ``evaluation`` plays held-out levels; ``policy_search`` turns a
model into the policy of the lts/phs planners.
"""
