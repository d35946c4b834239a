"""A job with security.ssl.internal.enabled on embedded Spark: the TaskManagers get the job's
certificate with the job secret, every data and RPC connection they hold speaks TLS, and the
result is the plain run's."""

from __future__ import annotations

import collections
import gc
import sys

import cloudpickle
import pytest

from flintlock.common.config import Configuration
from flintlock.datastream import StreamExecutionEnvironment

pytestmark = [pytest.mark.spark, pytest.mark.slow]
cloudpickle.register_pickle_by_value(sys.modules[__name__])

LINES = ["the quick brown fox", "jumps over the lazy dog", "the dog sleeps"] * 200


class ConnectionProbe:
    """Passes records through; every ``every``-th record it also reports the open data and
    RPC connections of its TaskManager process: (how many, how many of them over TLS)."""

    def __init__(self, every: int = 50) -> None:
        self.every = every
        self.seen = 0

    def __call__(self, pair: tuple[str, int]) -> tuple[str, int, int, int]:
        self.seen += 1
        if self.seen % self.every:
            return (pair[0], pair[1], -1, -1)
        from flintlock.runtime.network.connection import SocketConnection
        from flintlock.runtime.rpc.connection import RpcConnection
        from flintlock.runtime.tls.channel import TlsSocket

        open_ = [o for o in gc.get_objects()
                 if (isinstance(o, SocketConnection) and o.writable)
                 or (isinstance(o, RpcConnection) and o.is_open)]
        sealed = [o for o in open_ if isinstance(o._sock, TlsSocket)]
        return (pair[0], pair[1], len(open_), len(sealed))


def test_a_keyed_job_with_internal_tls_gives_the_plain_result(tmp_path):
    config = Configuration()
    config.set_string("security.ssl.internal.enabled", "true")
    config.set_string("rest.port", "0")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    counts = (env.from_collection(LINES)
              .flat_map(lambda line: line.split())
              .map(lambda word: (word, 1))
              .key_by(lambda pair: pair[0])
              .reduce(lambda a, b: (a[0], a[1] + b[1]))
              .map(ConnectionProbe()))
    final: dict[str, int] = {}
    probes = []
    for word, count, open_, sealed in counts.execute_and_collect("keyed count over TLS"):
        final[word] = max(count, final.get(word, 0))
        if open_ >= 0:
            probes.append((open_, sealed))
    assert final == dict(collections.Counter(w for line in LINES for w in line.split()))
    assert probes, "no record was probed"
    assert all(open_ == sealed for open_, sealed in probes), probes  # every connection TLS
    # each TaskManager holds its RPC connection and, with two TMs exchanging keyed records,
    # data connections too
    assert max(open_ for open_, _ in probes) >= 2, probes
