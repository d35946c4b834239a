"""PyFlink's ``pyflink.common.constants``: the bounds of Java's ``long`` and the tag of the main
output."""

MAX_LONG_VALUE = 2**63 - 1
"""The largest value of a Java ``long``."""

MIN_LONG_VALUE = -MAX_LONG_VALUE - 1
"""The smallest value of a Java ``long``."""

DEFAULT_OUTPUT_TAG = ""
"""The tag of an operator's main output."""

__all__ = ["DEFAULT_OUTPUT_TAG", "MAX_LONG_VALUE", "MIN_LONG_VALUE"]
