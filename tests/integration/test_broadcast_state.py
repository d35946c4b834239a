"""Broadcast state through real jobs (TaskManagers as threads): rules broadcast to every
parallel instance of a keyed operator, events decided by them, and the broadcast state and
keyed buffers restored after a crash mid-stream (exactly once).

The rules and events come from one source: a job whose second source finishes long before
the first can stall after a restore (docs/known-issues.md, reproduced without broadcast
state), which is not what these tests are about. Where the rules and events must interleave
at the keyed operators, the source holds the last rule at a gate until the events before it
were buffered, and the event after it at another until every instance has the rule."""

from flintlock.datastream import (
    CheckpointingMode,
    KeyedBroadcastProcessFunction,
    StreamExecutionEnvironment,
)
from flintlock.datastream.state import ListStateDescriptor, MapStateDescriptor
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when
from flintlock.testing.recording import Recording

RULES = MapStateDescriptor("rules", None, None)
BUFFER = ListStateDescriptor("buffer", None)
NEEDED = ("limit", "label")
BUFFERED = Recording("broadcast.buffered")  # every event that waited for the rules
RULED = Recording("broadcast.ruled")  # one item per instance that got the last rule


class Decide(KeyedBroadcastProcessFunction):
    """Decides each event (key, value) with the broadcast rules once both are known; events
    that come first wait in keyed state and are decided when the last rule arrives. The
    output is the same whatever the interleaving of the two inputs. Records the events it
    buffered and each instance's getting all the rules."""

    def open(self, runtime_context):
        self.buffer = runtime_context.get_list_state(BUFFER)

    @staticmethod
    def _decide(rules, event):
        return (event[0], event[1], event[1] > rules.get("limit"), rules.get("label"))

    def process_element(self, value, ctx):
        rules = ctx.get_broadcast_state(RULES)
        if all(rules.contains(name) for name in NEEDED):
            yield self._decide(rules, value)
        else:
            BUFFERED.append(value)
            self.buffer.add(value)

    def process_broadcast_element(self, value, ctx):
        rules = ctx.get_broadcast_state(RULES)
        rules.put(value[0], value[1])
        if not all(rules.contains(name) for name in NEEDED):
            return
        RULED.append(value)
        decided = []

        def flush(key, buffer):
            decided.extend(self._decide(rules, event) for event in buffer.get())
            buffer.clear()

        ctx.apply_to_keyed_state(BUFFER, flush)
        yield from decided


LAST_RULE = ("rule", ("label", "checked"))


def _records(n):
    """Rules and events of one source: the rules after the first events."""
    events = [("event", (f"k{i % 7}", i)) for i in range(n)]
    return [*events[:50], ("rule", ("limit", 500)), *events[50:300], LAST_RULE, *events[300:]]


def _decided(mixed):
    """The mixed stream split in two: the rules broadcast, the events keyed and decided."""
    rules = mixed.filter(lambda r: r[0] == "rule").map(lambda r: r[1]).broadcast(RULES)
    return mixed.filter(lambda r: r[0] == "event").map(lambda r: r[1]) \
        .key_by(lambda e: e[0]).connect(rules).process(Decide())


def _expected(n):
    return sorted((f"k{i % 7}", i, i > 500, "checked") for i in range(n))


def test_rules_reach_every_parallel_instance(executor, tmp_path):
    """The 300 events before the last rule wait for it in keyed state; every event after it
    is decided at once."""
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    records = _records(600)
    last_rule = records.index(LAST_RULE)
    before_rule, after_rule = FileGate(tmp_path / "rule"), FileGate(tmp_path / "events")
    openers = [open_when(before_rule, lambda: len(BUFFERED) >= 300),
               open_when(after_rule, lambda: len(RULED) >= 3)]
    mixed = gated_records(env, before_rule, records, last_rule,
                          then=[(after_rule, last_rule + 1)])
    out = sorted(_decided(mixed).execute_and_collect())
    for opener in openers:
        opener.join(60)
    assert out == _expected(600)
    assert sorted(BUFFERED.items()) == sorted(r[1] for r in records[:last_rule] if r[0] == "event")
    assert len(RULED) == 3


def test_broadcast_state_survives_a_crash_and_restore(executor, tmp_path):
    """The source holds 50 events after the last rule until two checkpoints completed after
    that; the first record after the hold fails the job once, so the restored attempt
    depends on the checkpointed broadcast state."""
    env = local_environment(tmp_path, 2, restart_attempts=3, restart_delay="20 ms")
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    records = _records(1500)
    hold_at = records.index(LAST_RULE) + 51
    gate = FileGate(tmp_path / "gate")
    seen_at_arrival = []

    def two_checkpoints_after_the_hold():
        if not gate.has_arrived():
            return False
        completed = completed_checkpoints(tmp_path / "chk")
        if not seen_at_arrival:
            seen_at_arrival.append(max(completed, default=0))
        return max(completed, default=0) >= seen_at_arrival[0] + 2

    opener = open_when(gate, two_checkpoints_after_the_hold)
    mixed = gated_records(env, gate, records, before_gate=hold_at)
    mixed = mixed.map(RaiseOnce(marker, records[hold_at])).set_parallelism(1)
    out = list(_decided(mixed).execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(out) == _expected(1500)
