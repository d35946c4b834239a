"""Keyed and operator state, key groups, state backends, snapshots and restore (DESIGN.md §5)."""
