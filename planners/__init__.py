"""Classical Sokoban planners and solution optimizers (filled in by the planner issues)."""
