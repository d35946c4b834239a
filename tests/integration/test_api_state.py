"""Keyed state through real jobs (TaskManagers as threads of this process): every descriptor
kind driven by a script of operations and compared with a plain-Python model of PyFlink's
state semantics, on both state backends; TTL expiry in processing time; state surviving a
restart from a checkpoint.
"""

import time

import pytest

from flintlock.common import Time, Types
from flintlock.datastream import (
    AggregateFunction,
    CheckpointingMode,
    EmbeddedRocksDBStateBackend,
    HashMapStateBackend,
    KeyedProcessFunction,
    MapFunction,
)
from flintlock.datastream.state import (
    AggregatingStateDescriptor,
    ListStateDescriptor,
    MapStateDescriptor,
    ReducingStateDescriptor,
    StateTtlConfig,
    ValueStateDescriptor,
)
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_numbers, gated_records, open_when
from flintlock.testing.recording import HoldUntilRecorded, Recording


def _env(tmp_path, parallelism=2, backend=None):
    return local_environment(tmp_path, parallelism, restart_attempts=3, restart_delay="20 ms",
                             state_backend=backend)


class Average(AggregateFunction):
    def create_accumulator(self):
        return (0, 0)

    def add(self, value, accumulator):
        return (accumulator[0] + value, accumulator[1] + 1)

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, acc_a, acc_b):
        return (acc_a[0] + acc_b[0], acc_a[1] + acc_b[1])


class StateScript(MapFunction):
    """Applies one operation (key, op, arg) to the key's state and returns what the state
    shows afterwards."""

    def open(self, runtime_context):
        self.value = runtime_context.get_state(ValueStateDescriptor("v", Types.INT()))
        self.list = runtime_context.get_list_state(ListStateDescriptor("l", Types.INT()))
        self.map_state = runtime_context.get_map_state(
            MapStateDescriptor("m", Types.STRING(), Types.INT()))
        self.reducing = runtime_context.get_reducing_state(
            ReducingStateDescriptor("r", lambda a, b: a + b, Types.INT()))
        self.aggregating = runtime_context.get_aggregating_state(
            AggregatingStateDescriptor("a", Average(), Types.TUPLE([Types.INT(), Types.INT()])))

    def map(self, record):
        key, op, arg = record
        kind = op[0]
        if kind == "v":
            self.value.clear() if op == "v_clear" else self.value.update(arg)
            return (key, op, self.value.value())
        if kind == "l":
            self._list(op, arg)
            return (key, op, list(self.list.get()))
        if kind == "m":
            self._map(op, arg)
            m = self.map_state
            return (key, op, sorted(m.items()), sorted(m.keys()), sorted(m.values()),
                    m.contains("x"), m.get("x"), m.is_empty())
        if kind == "r":
            self.reducing.clear() if op == "r_clear" else self.reducing.add(arg)
            return (key, op, self.reducing.get())
        self.aggregating.clear() if op == "a_clear" else self.aggregating.add(arg)
        return (key, op, self.aggregating.get())

    def _list(self, op, arg):
        if op == "l_add":
            self.list.add(arg)
        elif op == "l_add_all":
            self.list.add_all(arg)
        elif op == "l_update":
            self.list.update(arg)
        else:
            self.list.clear()

    def _map(self, op, arg):
        if op == "m_put":
            self.map_state.put(*arg)
        elif op == "m_put_all":
            self.map_state.put_all(arg)
        elif op == "m_remove":
            self.map_state.remove(arg)
        else:
            self.map_state.clear()


def _model(script):
    """What each operation of the script shows, by PyFlink's state semantics."""
    states = {}
    out = []
    for key, op, arg in script:
        s = states.setdefault(key, {"v": None, "l": [], "m": {}, "r": None, "a": None})
        if op == "v_update":
            s["v"] = arg
        elif op == "v_clear":
            s["v"] = None
        elif op == "l_add":
            s["l"].append(arg)
        elif op == "l_add_all":
            s["l"].extend(arg)
        elif op == "l_update":
            s["l"] = list(arg)
        elif op == "l_clear":
            s["l"] = []
        elif op == "m_put":
            s["m"][arg[0]] = arg[1]
        elif op == "m_put_all":
            s["m"].update(arg)
        elif op == "m_remove":
            s["m"].pop(arg, None)
        elif op == "m_clear":
            s["m"] = {}
        elif op == "r_add":
            s["r"] = arg if s["r"] is None else s["r"] + arg
        elif op == "r_clear":
            s["r"] = None
        elif op == "a_add":
            total, count = s["a"] or (0, 0)
            s["a"] = (total + arg, count + 1)
        elif op == "a_clear":
            s["a"] = None
        out.append(_shown(key, op, s))
    return out


def _shown(key, op, s):
    kind = op[0]
    if kind == "v":
        return (key, op, s["v"])
    if kind == "l":
        return (key, op, list(s["l"]))
    if kind == "m":
        m = s["m"]
        return (key, op, sorted(m.items()), sorted(m), sorted(m.values()), "x" in m,
                m.get("x"), not m)
    if kind == "r":
        return (key, op, s["r"])
    return (key, op, None if s["a"] is None else s["a"][0] / s["a"][1])


SCRIPT_PER_KEY = [
    ("v_update", 3), ("v_update", 4), ("v_clear", None), ("v_update", 5),
    ("l_add", 1), ("l_add_all", [2, 3]), ("l_add", 1), ("l_update", [9, 8]), ("l_clear", None),
    ("l_add", 7),
    ("m_put", ("x", 1)), ("m_put", ("y", 2)), ("m_put_all", {"x": 10, "z": 3}),
    ("m_remove", "y"), ("m_remove", "absent"), ("m_clear", None), ("m_put", ("w", 4)),
    ("r_add", 5), ("r_add", -2), ("r_clear", None), ("r_add", 6),
    ("a_add", 2), ("a_add", 4), ("a_add", 9), ("a_clear", None), ("a_add", 1),
]
SCRIPT = [(f"key{k}", op, arg) for op, arg in SCRIPT_PER_KEY for k in range(5)]


@pytest.mark.parametrize("backend", [HashMapStateBackend(), EmbeddedRocksDBStateBackend()],
                         ids=["hashmap", "rocksdb"])
def test_every_state_kind_behaves_as_pyflink_documents(executor, tmp_path, backend):
    env = _env(tmp_path, backend=backend)
    out = list(env.from_collection(SCRIPT).key_by(lambda r: r[0]).map(StateScript())
               .execute_and_collect())
    expected = _model(SCRIPT)
    for key in {k for k, _, _ in SCRIPT}:  # per key, in script order
        assert [r for r in out if r[0] == key] == [r for r in expected if r[0] == key]


# -- TTL ---------------------------------------------------------------------------------------


class TtlProbe(MapFunction):
    """``("set", v)`` writes; ``("read", wait_ms)`` waits, then reads the value and a map
    entry; keys starting with "short" use a 30 ms TTL, others one minute."""

    def open(self, runtime_context):
        short = StateTtlConfig.new_builder(Time.milliseconds(30)).build()
        long = StateTtlConfig.new_builder(Time.minutes(1)).build()
        self.states = {}
        for name, ttl in (("short", short), ("long", long)):
            value = ValueStateDescriptor(f"{name}-v", Types.INT())
            value.enable_time_to_live(ttl)
            entries = MapStateDescriptor(f"{name}-m", Types.STRING(), Types.INT())
            entries.enable_time_to_live(ttl)
            self.states[name] = (runtime_context.get_state(value),
                                 runtime_context.get_map_state(entries))

    def map(self, record):
        key, op, arg = record
        value, entries = self.states["short" if key.startswith("short") else "long"]
        if op == "set":
            value.update(arg)
            entries.put("e", arg)
            return (key, "set")
        time.sleep(arg / 1000)  # longer than the short TTL: its entries must have expired
        return (key, value.value(), entries.get("e"), entries.contains("e"))


def test_state_ttl_expires_entries_in_processing_time(executor, tmp_path):
    env = _env(tmp_path, parallelism=1)
    script = [("short", "set", 1), ("long", "set", 2), ("short", "read", 80),
              ("long", "read", 80), ("short", "set", 3), ("short", "read", 0)]
    out = list(env.from_collection(script).key_by(lambda r: r[0]).map(TtlProbe())
               .execute_and_collect())
    assert [r for r in out if r[1] != "set"] == [
        ("short", None, None, False), ("long", 2, 2, True), ("short", 3, 3, True)]


# -- state survives a restart ----------------------------------------------------------------


class Collect(MapFunction):
    """Per key: count (value state), values seen (list state) and their sum (reducing)."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))
        self.total = runtime_context.get_reducing_state(
            ReducingStateDescriptor("total", lambda a, b: a + b, Types.INT()))

    def map(self, value):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        self.seen.add(value)
        self.total.add(value)
        return (value % 5, count, len(list(self.seen.get())), self.total.get())


@pytest.mark.parametrize("backend", [HashMapStateBackend(), EmbeddedRocksDBStateBackend()],
                         ids=["hashmap", "rocksdb"])
def test_keyed_state_survives_a_restart_exactly_once(executor, tmp_path, backend):
    env = _env(tmp_path, backend=backend)
    env.enable_checkpointing(20, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    n = 1500
    # the second half waits for a completed checkpoint; its first number fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    numbers = gated_records(env, gate, list(range(n)), before_gate=n // 2)
    out = list(numbers.map(RaiseOnce(marker, n // 2)).set_parallelism(1)
               .key_by(lambda x: x % 5).map(Collect()).execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    expected = []
    for key in range(5):
        values = [x for x in range(n) if x % 5 == key]
        expected += [(key, i + 1, i + 1, sum(values[:i + 1])) for i in range(len(values))]
    assert sorted(out) == sorted(expected)


FIRED_AFTER_RESTART = Recording("state.fired-after-restart")  # keys whose timers fired


class TimerLater(KeyedProcessFunction):
    """Registers one processing-time timer per element, 1.5 s ahead; ``on_timer`` emits the
    key and, in an attempt after the first, records it."""

    def open(self, runtime_context):
        self.attempt = runtime_context.get_attempt_number()

    def process_element(self, value, ctx):
        if value[0] != "tick":
            service = ctx.timer_service()
            service.register_processing_time_timer(service.current_processing_time() + 1500)

    def on_timer(self, timestamp, ctx):
        if self.attempt > 0:
            FIRED_AFTER_RESTART.append(ctx.get_current_key())
        yield ("fired", ctx.get_current_key())


def _tick(value):
    return ("tick", value)


def test_processing_time_timers_survive_a_restart(executor, tmp_path):
    env = _env(tmp_path)
    env.enable_checkpointing(20)
    marker = tmp_path / "crashed"
    n = 15_000
    gate = FileGate(tmp_path / "gate")  # ticks from 100 on wait for a completed checkpoint
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    elements = env.from_collection([("a", 1), ("b", 2)])
    # One tick reader: ticks 0..99, the hold, the crash at 100 (after a checkpoint); after
    # the restart the last tick waits until both timers fired, so the input stays open while
    # they are due (processing-time timers pending at the end of input are dropped).
    ticks = (gated_numbers(env, gate, n, before_gate=100).set_parallelism(1)
             .map(RaiseOnce(marker, 100)).set_parallelism(1)
             .map(HoldUntilRecorded(FIRED_AFTER_RESTART, 2, at=n - 1)).set_parallelism(1)
             .map(_tick).set_parallelism(1))
    out = list(elements.union(ticks).key_by(lambda r: r[0]).process(TimerLater())
               .execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(out) == [("fired", "a"), ("fired", "b")]
