"""``OutputTag`` under PyFlink's module path; defined in ``flintlock.common.output_tag`` so
the runtime can recognise it without importing the user API."""

from flintlock.common.output_tag import OutputTag

__all__ = ["OutputTag"]
