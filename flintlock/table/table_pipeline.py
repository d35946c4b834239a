"""PyFlink's ``pyflink.table.table_pipeline``: a table bound for a sink (``insert_into``)."""

from flintlock.table.statement_set import TablePipeline

__all__ = ["TablePipeline"]
