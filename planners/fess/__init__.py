"""FESS, Shoham's feature-space search: rooms, features, packing plan, advisors and the search.

Importing the package registers the ``fess`` planner (``planners.fess.search.FessPlanner``).
"""

from planners.fess.options import FessOptions
from planners.fess.search import FessPlanner

__all__ = ["FessOptions", "FessPlanner"]
