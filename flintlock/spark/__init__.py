"""Runs a job graph on Spark; the only package that imports pyspark (DESIGN.md §6)."""
