"""PyFlink's ``pyflink.version``: the version of flintlock (``flintlock.__version__``)."""

from flintlock import __version__

__all__ = ["__version__"]
