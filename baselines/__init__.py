"""Baseline players for Concentration: heuristics and exact optimal play."""
