"""BATCH execution with checkpointing enabled (issue 29): checkpointing does not apply to
BATCH jobs, as in Flink, so the job finishes and a warning says the interval is ignored.
Before, every source waited for a final checkpoint whose barrier its BLOCKING consumer could
read only after the source finished: each checkpoint expired and the job failed with
``TooManyCheckpointFailuresError``."""

from __future__ import annotations

import logging

from flintlock.datastream import RuntimeExecutionMode
from flintlock.testing.environments import local_environment


def test_a_batch_job_with_checkpointing_finishes_and_warns(executor, tmp_path, caplog):
    env = local_environment(tmp_path, 2, options={
        "execution.checkpointing.timeout": "1 s",
        "execution.checkpointing.tolerable-failed-checkpoints": "0",
    })
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.enable_checkpointing(50)
    words = ["a", "b", "a", "c", "b", "a"] * 50
    with caplog.at_level(logging.WARNING, logger="flintlock.runtime.jobmanager.execution_mode"):
        counts = list(env.from_collection(words)
                      .map(lambda w: (w, 1))
                      .key_by(lambda pair: pair[0])
                      .reduce(lambda x, y: (x[0], x[1] + y[1]))
                      .execute_and_collect())
    assert sorted(counts) == [("a", 150), ("b", 100), ("c", 50)]
    assert any("checkpointing does not apply" in r.getMessage() for r in caplog.records)
