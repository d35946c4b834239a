"""Loading of a job's own modules, child-first or parent-first (DESIGN.md §2)."""
