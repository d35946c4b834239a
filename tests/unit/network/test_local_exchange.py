"""The whole in-process data plane: writer → partition → local channel → gate → deserializer."""

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from flintlock.common.config import Configuration
from flintlock.runtime.network.barriers import END_OF_PARTITION
from flintlock.runtime.network.channel_selector import KeyGroupSelector
from flintlock.runtime.network.events import decode_event
from flintlock.runtime.network.serialization import RecordDeserializer
from flintlock.runtime.network.writer import RecordWriter
from flintlock.testing.exchange import (
    local_exchange,
)

RECORD = st.tuples(st.integers(0, 20), st.integers(), st.binary(max_size=300))
STEP = st.one_of(
    st.tuples(st.just("emit"), st.lists(RECORD, min_size=1, max_size=20)),
    st.tuples(st.just("flush"), st.none()),
    st.tuples(st.just("read"), st.integers(0, 10)),
)


class Consumers:
    """Reads the exchange's gates (one per consumer subtask, one local channel per producer)."""

    def __init__(self, exchange):
        producers = exchange.partitions
        self.gates = exchange.gates
        self.deserializers = [[RecordDeserializer() for _ in producers] for _ in self.gates]
        self.received = [[[] for _ in producers] for _ in self.gates]
        self.ended = [[False for _ in producers] for _ in self.gates]

    def read(self, budget):
        for _ in range(budget):
            for g, gate in enumerate(self.gates):
                self._take(g, gate.poll_next())

    def read_to_end(self):
        for g, gate in enumerate(self.gates):
            while (item := gate.get_next(timeout_s=10)) is not None:
                self._take(g, item)

    def _take(self, g, item):
        if item is None:
            return
        channel, buffer = item
        if buffer.is_event:
            assert decode_event(buffer) == END_OF_PARTITION
            self.deserializers[g][channel].check_complete()
            self.ended[g][channel] = True
        else:
            self.received[g][channel].extend(
                self.deserializers[g][channel].deserialize(buffer.view()))
        buffer.recycle()


# Pools large enough to hold everything a test may write, so the single-threaded test never
# waits for its own consumer; the threaded test below covers bounded pools.
ROOMY = Configuration({"taskmanager.network.memory.buffers-per-channel": 2000,
                       "taskmanager.network.memory.max-buffers-per-channel": 2000})
SEGMENTS = 4_000


@settings(max_examples=60, deadline=None)
@given(st.lists(STEP, max_size=25), st.sampled_from([64, 256, 4096]),
       st.integers(1, 2), st.integers(1, 3))
def test_every_record_exactly_once_and_in_order_per_channel(
    steps, segment, producers_n, consumers_n
):
    exchange = local_exchange(producers_n, consumers_n, segments=SEGMENTS, segment_size=segment,
                              config=ROOMY)
    network, producers = exchange.network, exchange.partitions
    writers = [RecordWriter(p, KeyGroupSelector(lambda r: r[0], 16)) for p in producers]
    consumers = Consumers(exchange)
    sent = [[[] for _ in producers] for _ in range(consumers_n)]
    for number, (kind, arg) in enumerate(steps):
        writer_index = number % producers_n
        if kind == "emit":
            selector = KeyGroupSelector(lambda r: r[0], 16)
            selector.setup(consumers_n)
            for record in arg:
                writers[writer_index].emit(record)
                sent[selector.select_channel(record)][writer_index].append(record)
        elif kind == "flush":
            writers[writer_index].flush_all()
        else:
            consumers.read(arg)
    for writer, producer in zip(writers, producers, strict=True):
        writer.close()
        producer.finish()
    consumers.read_to_end()
    assert consumers.received == sent
    assert all(all(row) for row in consumers.ended)
    assert exchange.manager.partition_ids == []
    assert network.statistics().free_segments == SEGMENTS


def test_bounded_exchange_between_two_threads_under_backpressure():
    exchange = local_exchange(producers=1, consumers=2, segments=64, segment_size=4096)
    network, producer, gates = exchange.network, exchange.partitions[0], exchange.gates
    total = 60_000
    errors = []

    def produce():
        try:
            writer = RecordWriter(producer, KeyGroupSelector(lambda r: r, 128), buffer_timeout_ms=5)
            for record in range(total):
                writer.emit(record)
            writer.close()
            producer.finish()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=produce)
    thread.start()
    received = [[], []]
    deserializers = [RecordDeserializer(), RecordDeserializer()]
    finished = [False, False]
    while not all(finished):
        for c, gate in enumerate(gates):
            if finished[c]:
                continue
            item = gate.get_next(timeout_s=0.01)
            if item is None:
                finished[c] = gate.is_finished
                continue
            _, buffer = item
            if not buffer.is_event:
                received[c].extend(deserializers[c].deserialize(buffer.view()))
            buffer.recycle()
        assert thread.is_alive() or not errors
    thread.join(30)
    assert not errors
    assert sorted(received[0] + received[1]) == list(range(total))
    assert all(r == sorted(r) for r in received)
    assert network.statistics().free_segments == 64
