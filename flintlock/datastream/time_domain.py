"""PyFlink's ``pyflink.datastream.time_domain``: ``TimeDomain`` (defined in
``flintlock.common.time_domain``, where the runtime can use it)."""

from flintlock.common.time_domain import TimeDomain

__all__ = ["TimeDomain"]
