"""What a job brings to its TaskManagers, made ready once at submission: the pickled job graph,
the job's files handed to the launcher, its Python dependencies.

Runs on the thread that creates the JobManager.
"""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass

import cloudpickle

from flintlock.common.config import Configuration
from flintlock.graph.job_graph import JobGraph
from flintlock.runtime.jobmanager.errors import JobNotPicklableError
from flintlock.runtime.jobmanager.launching import Launcher
from flintlock.usercode.job_files import JobFiles
from flintlock.usercode.job_files import pack as pack_job_files
from flintlock.usercode.python_env import PythonDependencies, collect_dependencies
from flintlock.usercode.shipping import shipped_by_value

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Submission:
    graph_bytes: bytes
    python_dependencies: PythonDependencies | None


def prepare_submission(job_graph: JobGraph, config: Configuration,
                       launcher: Launcher) -> Submission:
    """Packs the job's files (handing them to the launcher), collects its dependencies and
    pickles its graph. A launcher whose TaskManagers share this process ships nothing."""
    ships_code = getattr(launcher, "ships_code", True)
    job_files = pack_job_files(config) if ships_code else None
    dependencies = collect_dependencies(config, job_files)
    graph_bytes = pickle_job_graph(job_graph, config, ships_code, job_files)
    log.debug("job %s: job graph pickled (%d bytes)", job_graph.job_id, len(graph_bytes))
    if job_files is not None and job_files.files:
        ship = getattr(launcher, "ship_job_files", None)
        if ship is not None:
            ship(job_files.files)
    return Submission(graph_bytes, dependencies)


def pickle_job_graph(job_graph: JobGraph, config: Configuration, ship_code: bool,
                     job_files: JobFiles | None) -> bytes:
    """The job graph for the TaskManagers; with ``ship_code``, the job's own modules that its
    files do not cover travel by value inside it (``flintlock.usercode.shipping``)."""
    try:
        if not ship_code:
            return bytes(cloudpickle.dumps(job_graph))
        covered = job_files.covers if job_files is not None else (lambda module: False)
        with shipped_by_value(config, covered):
            return bytes(cloudpickle.dumps(job_graph))
    except (TypeError, AttributeError, pickle.PicklingError) as exc:
        raise JobNotPicklableError(job_graph.name, f"{type(exc).__name__}: {exc}") from exc
