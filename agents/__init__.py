"""Learned agents, planner-backed experts, trajectory datasets and the benchmark."""
