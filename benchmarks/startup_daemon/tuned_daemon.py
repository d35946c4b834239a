"""The Python daemon of ``startup.py``'s ``tuned`` runs: PySpark's own daemon (no flintlock
module imported before it forks), on the worker path flintlock's embedded session gives its
daemon (``flintlock/spark/worker_path.py``: the installed PySpark, not Spark's zip of it).
So ``tuned`` is Spark's part of a flintlock job as flintlock configures Spark, and the
difference to a flintlock job is flintlock's own work. ``startup.py`` puts this directory on
the ``tuned`` child's ``PYTHONPATH``; ``worker_path.py`` is loaded from the tree this file is
in, so a ``--baseline`` tree without it gets the same path."""

import importlib.util
import sys
from pathlib import Path

_SOURCE = Path(__file__).resolve().parents[2] / "flintlock" / "spark" / "worker_path.py"
_SPEC = importlib.util.spec_from_file_location("_tuned_worker_path", _SOURCE)
assert _SPEC is not None and _SPEC.loader is not None
_WORKER_PATH = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_WORKER_PATH)
sys.path[:] = _WORKER_PATH.installed_first(sys.path)

from pyspark import daemon  # noqa: E402  (after the path is set)

if __name__ == "__main__":
    daemon.manager()
