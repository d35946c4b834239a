"""The TaskManager's cycle-collector settings (``flintlock.spark.collector``) leave a freeze
they did not make alone: a Spark worker forked from flintlock's daemon starts with the daemon's
imports frozen, and unfreezing them would let the worker's collections copy their shared
pages (docs/known-issues.md, "Memory of a long-lived process running many jobs")."""

import gc

import pytest

from flintlock.common.config import Configuration
from flintlock.spark.collector import tuned_collector


@pytest.fixture
def frozen_before(unfrozen_collector):
    """The test process frozen as the daemon freezes before forking; unfrozen afterwards."""
    assert gc.get_freeze_count() == 0, "the test process was frozen before the test"
    gc.freeze()
    try:
        yield gc.get_freeze_count()
    finally:
        gc.unfreeze()


def test_a_daemon_forked_worker_keeps_the_daemons_freeze(frozen_before):
    before = gc.get_threshold()
    with tuned_collector(Configuration()):
        assert gc.get_threshold() == (50_000, *before[1:])
        made_during_the_job = [object() for _ in range(10)]
    assert gc.get_threshold() == before
    # still frozen (some frozen objects may have died meanwhile), and the job froze nothing
    assert 0 < gc.get_freeze_count() <= frozen_before
    assert made_during_the_job


def test_a_process_frozen_by_nobody_is_frozen_during_the_job_only(unfrozen_collector):
    with tuned_collector(Configuration()):
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0
