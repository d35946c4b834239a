"""The test kit's collecting sink and recordings in a real job (TaskManagers as threads)."""

import pytest

from flintlock.testing.environments import local_environment
from flintlock.testing.recording import CollectingSink, Recording

OUT = Recording("kit.out")
LEFT_OVER = Recording("kit.left-over")


def test_a_collecting_sink_receives_every_record_of_every_subtask(executor, tmp_path):
    env = local_environment(tmp_path, 2)
    env.from_collection(list(range(500))).rebalance().map(lambda x: x * 2).sink_to(
        CollectingSink(OUT))
    env.execute("collecting")
    assert sorted(OUT) == [x * 2 for x in range(500)]


@pytest.mark.parametrize("run", [1, 2])
def test_the_executor_fixture_starts_every_test_with_empty_recordings(executor, run):
    assert LEFT_OVER == []  # the second run sees nothing of the first
    LEFT_OVER.append(run)
