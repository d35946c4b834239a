"""The Python workers of the embedded session import PySpark from its installed files, not from
the zip Spark puts first on their path.

Spark starts its Python daemon with ``PYTHONPATH`` beginning with
``$SPARK_HOME/python/lib/pyspark.zip`` and ``py4j-*-src.zip``. For a pip-installed PySpark,
``SPARK_HOME`` is the installed package itself, so those zips hold the very modules installed
next to them in ``site-packages``, but a zip has no bytecode and Python cannot cache any for
it: the daemon compiles PySpark from source each time a session starts, 0.6-0.8 s of CPU on
the path to the first Python task (measured: the first task of a fresh session ends 1.2 s
after it was submitted with the zips first, 0.57 s without). ``installed_first(path)``
drops a zip from the path when it is the installed package's own copy (it lies at
``<dir>/pyspark/python/lib/`` and ``<dir>`` holds the installed ``pyspark`` or ``py4j``);
the installed modules, bytecode included, are then found in ``<dir>``. A zip of another
Spark installation (a real ``SPARK_HOME``) stays where it is.

Used by ``flintlock.spark.daemon`` before it imports PySpark; workers fork from the daemon and
inherit its modules and path. Imports nothing but ``os``, so that it runs before PySpark.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

_ZIPS = {"pyspark": "pyspark.zip", "py4j": "py4j-"}


def _installed_copy(entry: str) -> bool:
    """True if ``entry`` is a zip of the installed pyspark package's own ``python/lib``
    whose package (pyspark, py4j) is installed as plain files beside that pyspark."""
    lib = os.path.dirname(entry)
    if not entry.endswith(".zip") or not lib.endswith(os.path.join("pyspark", "python", "lib")):
        return False
    root = os.path.dirname(os.path.dirname(os.path.dirname(lib)))
    name = os.path.basename(entry)
    for package, prefix in _ZIPS.items():
        if name.startswith(prefix):
            return os.path.isfile(os.path.join(root, package, "__init__.py"))
    return False


def installed_first(path: Sequence[str]) -> list[str]:
    """``path`` without the zips that copy an installed PySpark or Py4J (see module doc)."""
    return [entry for entry in path if not _installed_copy(entry)]
