"""The test kit's collecting sink and recordings in a real job (TaskManagers as threads)."""

import pytest

from flintlock.testing.environments import local_environment
from flintlock.testing.gates import FileGate, gated_records, open_when
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


def test_gated_records_come_in_their_order_once_the_gate_opens(executor, tmp_path):
    env = local_environment(tmp_path, 2)
    gate = FileGate(tmp_path / "gate")
    records = [("r", i) for i in range(300)]
    opener = open_when(gate, gate.has_arrived)  # open once the reader holds after 100
    out = list(gated_records(env, gate, records, before_gate=100).execute_and_collect())
    opener.join(30)
    assert out == records and gate.has_arrived()
