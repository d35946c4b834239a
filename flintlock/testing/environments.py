"""Environments for job tests: checkpoints under a test's temporary directory, a restart
strategy chosen by argument, any further options by key.

``local_environment(tmp_path, 2, restart_attempts=3)`` is what most integration tests of
flintlock (and users' tests of their own jobs) start from; with ``use_thread_executor`` the
job then runs on TaskManager threads, without it on embedded Spark. Plain functions: each
call builds a new configuration and environment, owned by the caller.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flintlock.common.config import Configuration

if TYPE_CHECKING:
    from flintlock.datastream import StreamExecutionEnvironment


def local_configuration(
    directory: str | os.PathLike[str],
    *,
    restart_attempts: int = 0,
    restart_delay: str = "50 ms",
    options: Mapping[str, Any] | None = None,
) -> Configuration:
    """Checkpoints go to ``<directory>/chk``; no restarts unless ``restart_attempts`` > 0
    (fixed delay ``restart_delay``); ``options`` (key → value, set as strings) come last
    and win."""
    config = Configuration().set_string(
        "execution.checkpointing.dir", os.path.join(os.fspath(directory), "chk"))
    if restart_attempts > 0:
        config.set_string("restart-strategy.type", "fixed-delay")
        config.set_string("restart-strategy.fixed-delay.delay", restart_delay)
        config.set_string("restart-strategy.fixed-delay.attempts", str(restart_attempts))
    else:
        config.set_string("restart-strategy.type", "none")
    for key, value in (options or {}).items():
        config.set_string(key, str(value))
    return config


def local_environment(
    directory: str | os.PathLike[str],
    parallelism: int = 1,
    *,
    restart_attempts: int = 0,
    restart_delay: str = "50 ms",
    state_backend: Any = None,
    options: Mapping[str, Any] | None = None,
) -> StreamExecutionEnvironment:
    """A ``StreamExecutionEnvironment`` on ``local_configuration(...)`` with ``parallelism``
    and, if given, ``state_backend``."""
    from flintlock.datastream import StreamExecutionEnvironment

    env = StreamExecutionEnvironment.get_execution_environment(local_configuration(
        directory, restart_attempts=restart_attempts, restart_delay=restart_delay,
        options=options))
    env.set_parallelism(parallelism)
    if state_backend is not None:
        env.set_state_backend(state_backend)
    return env
