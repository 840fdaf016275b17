"""Jitted search internals shared by the planners: transposition table, heap, node store."""
