"""``Configuration`` under PyFlink's module path (``pyflink.common.configuration``); defined in
``flintlock.common.config``."""

from flintlock.common.config import Configuration

__all__ = ["Configuration"]
