"""FESS building blocks; the planner is registered when the search lands."""
