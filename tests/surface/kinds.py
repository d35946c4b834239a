"""What kind of thing a public name is, one rule for PyFlink and flintlock alike.

``kind_of`` sorts an object into ``module``, ``class``, ``function`` or ``constant``
(anything else: an instance, a type alias, a number). Standard library only, because
``generate_manifest.py`` imports it under PyFlink's Python as well as the surface test under
flintlock's.
"""

from __future__ import annotations

import inspect
from typing import Any

KINDS = ("class", "constant", "function", "module")


def kind_of(value: Any) -> str:
    """``module``, ``class``, ``function`` (any routine: a function, builtin or method) or
    ``constant``."""
    if inspect.ismodule(value):
        return "module"
    if isinstance(value, type):
        return "class"
    if inspect.isroutine(value):
        return "function"
    return "constant"
