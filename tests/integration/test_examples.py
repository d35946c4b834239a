"""The example jobs in ``flintlock.examples`` give the results their own checks expect
(on TaskManager threads here; ``make run`` runs the word count on embedded Spark)."""

import itertools

from flintlock.examples import sensor_windows
from flintlock.testing.environments import local_environment


def test_sensor_windows_match_a_plain_python_computation(executor, tmp_path):
    rows = sensor_windows.readings()
    assert any(a[1] > b[1] for a, b in itertools.pairwise(rows)), "readings must be out of order"
    env = local_environment(tmp_path, 2)
    env.enable_checkpointing(200)
    windows = list(sensor_windows.build(env, rows).execute_and_collect())
    assert sorted(windows) == sensor_windows.expected_windows(rows)
