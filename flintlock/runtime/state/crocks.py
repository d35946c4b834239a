"""The optional compiled ``_crocks`` module of the RocksDB backend (issue 31), or None.

``_crocks.c`` holds the backend's per-batch loops in C: the entry keys of a batch of keys and
the compact state values (``values``). It is optional like ``common._speedups``
(docs/decisions.md, "An optional C accelerator"): not built, or ``FLINTLOCK_PURE_PYTHON`` set,
and the Python twins run instead.
"""

from __future__ import annotations

import os
from types import ModuleType

from flintlock.common.speedups import PURE_PYTHON_ENV


def load_crocks() -> ModuleType | None:
    """The compiled ``_crocks``, or None: not built, or ``FLINTLOCK_PURE_PYTHON`` set."""
    if os.environ.get(PURE_PYTHON_ENV, "").strip().lower() in ("1", "true", "yes"):
        return None
    try:
        from flintlock.runtime.state import _crocks  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _crocks  # type: ignore[no-any-return]
