"""Async I/O through real jobs (TaskManagers as threads of this process): ordered and
unordered emission, event time kept in order, the timeout and retry paths, errors that fail
the job, a full queue, and requests in flight at a checkpoint re-issued after a crash.
"""

from __future__ import annotations

import asyncio
import functools

import pytest

from flintlock.common import Duration, Time, Types, WatermarkStrategy
from flintlock.common.watermark_strategy import TimestampAssigner
from flintlock.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    CheckpointingMode,
    ProcessFunction,
    StreamExecutionEnvironment,
    async_retry_predicates,
)
from flintlock.datastream.errors import AsyncFunctionError
from flintlock.testing.environments import local_environment
from flintlock.testing.faults import RaiseOnce
from flintlock.testing.files import completed_checkpoints
from flintlock.testing.gates import FileGate, gated_records, open_when
from flintlock.testing.slow_service import SlowService, query_async


class Jittered(AsyncFunction):
    """Answers ``value * 10`` after 0-4 ms, a different delay for neighbouring records."""

    async def async_invoke(self, value):
        await asyncio.sleep((value * 7 % 5) / 1000)
        return [value * 10]


class SecondOvertakesFirst(AsyncFunction):
    """Record "a" finishes only after record "b" has: completion order is b, a."""

    def open(self, runtime_context):
        self.b_done = None

    async def async_invoke(self, value):
        if self.b_done is None:
            self.b_done = asyncio.Event()
        if value == "a":
            await self.b_done.wait()
        else:
            self.b_done.set()
        return [value]


def _env(tmp_path, parallelism=1):
    return local_environment(tmp_path, parallelism)


def test_ordered_wait_emits_in_input_order(executor, tmp_path):
    env = _env(tmp_path)
    out = list(AsyncDataStream.ordered_wait(
        env.from_collection(list(range(300))), Jittered(), Time.seconds(30), 20,
        Types.LONG()).execute_and_collect())
    assert out == [v * 10 for v in range(300)]


def test_ordered_wait_keeps_the_order_a_faster_request_would_break(executor, tmp_path):
    env = _env(tmp_path)
    out = list(AsyncDataStream.ordered_wait(
        env.from_collection(["a", "b"]), SecondOvertakesFirst(), Time.seconds(30))
        .execute_and_collect())
    assert out == ["a", "b"]


def test_unordered_wait_emits_in_completion_order(executor, tmp_path):
    env = _env(tmp_path)
    out = list(AsyncDataStream.unordered_wait(
        env.from_collection(["a", "b"]), SecondOvertakesFirst(), Time.seconds(30))
        .execute_and_collect())
    assert out == ["b", "a"]


def test_unordered_wait_over_many_records_loses_and_duplicates_nothing(executor, tmp_path):
    env = _env(tmp_path, 2)
    out = list(AsyncDataStream.unordered_wait(
        env.from_collection(list(range(1000))), Jittered(), Time.seconds(30), 7)
        .execute_and_collect())
    assert sorted(out) == [v * 10 for v in range(1000)]


class Sleeps(AsyncFunction):
    async def async_invoke(self, value):
        await asyncio.sleep(0.02)
        return [value]


def test_results_still_in_flight_at_the_end_reach_an_exactly_once_sink(executor, tmp_path):
    """Downstream of a finished source the end of input comes after the final checkpoint;
    the maximum watermark before it makes the operator empty its queue in time."""
    env = _env(tmp_path, 2)
    env.enable_checkpointing(100, CheckpointingMode.EXACTLY_ONCE)
    stream = env.from_collection(list(range(1000))).map(lambda v: v)
    out = list(AsyncDataStream.unordered_wait(stream, Sleeps(), Time.seconds(30), 8)
               .execute_and_collect())
    assert sorted(out) == list(range(1000))


class ByValue(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value


class FlagLate(ProcessFunction):
    """Emits (value, timestamp, late): late if the watermark had already passed it."""

    def process_element(self, value, ctx):
        watermark = ctx.timer_service().current_watermark()
        yield value // 10, ctx.timestamp(), ctx.timestamp() <= watermark


def test_unordered_results_never_overtake_a_watermark(executor, tmp_path):
    env = _env(tmp_path)
    env.get_config().set_auto_watermark_interval(1)
    stamped = env.from_collection(list(range(1, 2001))).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByValue()))
    out = list(AsyncDataStream.unordered_wait(stamped, Jittered(), Time.seconds(30), 50)
               .process(FlagLate()).execute_and_collect())
    assert sorted(v for v, _, _ in out) == list(range(1, 2001))
    assert all(ts == v for v, ts, _ in out), "an output lost its input's timestamp"
    assert [v for v, _, late in out if late] == []


class HangsOnOdd(AsyncFunction):
    async def async_invoke(self, value):
        if value % 2:
            await asyncio.Event().wait()
        return [f"ok:{value}"]

    def timeout(self, value):
        return [f"timeout:{value}"]


def test_a_request_that_times_out_gives_the_timeout_hooks_outputs(executor, tmp_path):
    env = _env(tmp_path)
    out = list(AsyncDataStream.ordered_wait(
        env.from_collection(list(range(6))), HangsOnOdd(), Time.milliseconds(50))
        .execute_and_collect())
    assert out == ["ok:0", "timeout:1", "ok:2", "timeout:3", "ok:4", "timeout:5"]


class HangsAlways(AsyncFunction):
    async def async_invoke(self, value):
        await asyncio.Event().wait()


def test_the_default_timeout_hook_fails_the_job(executor, tmp_path):
    env = _env(tmp_path)
    stream = AsyncDataStream.unordered_wait(env.from_collection([7]), HangsAlways(),
                                            Time.milliseconds(20))
    with pytest.raises(Exception, match="timed out for input: 7"):
        list(stream.execute_and_collect())


class Flaky(Exception):
    pass


class FailsTwice(AsyncFunction):
    """Raises ``Flaky`` on the first two attempts for each value; reports the attempt."""

    def open(self, runtime_context):
        self.attempts = {}

    async def async_invoke(self, value):
        attempt = self.attempts[value] = self.attempts.get(value, 0) + 1
        if attempt <= 2:
            raise Flaky(value)
        return [(value, attempt)]


def test_failed_attempts_are_retried_by_the_exception_predicate(executor, tmp_path):
    env = _env(tmp_path)
    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=3, backoff_time_millis=1, result_predicate=None,
        exception_predicate=functools.partial(async_retry_predicates.exception_type_predicate,
                                              expected_error_type=Flaky))
    out = list(AsyncDataStream.ordered_wait_with_retry(
        env.from_collection(list(range(20))), FailsTwice(), Time.seconds(30), strategy, 5)
        .execute_and_collect())
    assert out == [(v, 3) for v in range(20)]


def test_a_request_that_exhausts_its_retries_fails_the_job(executor, tmp_path):
    env = _env(tmp_path)
    strategy = AsyncRetryStrategy.fixed_delay(1, 1, None,
                                              async_retry_predicates.has_exception_predicate)
    stream = AsyncDataStream.unordered_wait_with_retry(
        env.from_collection([1]), FailsTwice(), Time.seconds(30), strategy)
    with pytest.raises(Exception, match="Flaky"):
        list(stream.execute_and_collect())


class EmptyFirst(AsyncFunction):
    def open(self, runtime_context):
        self.seen = set()

    async def async_invoke(self, value):
        if value not in self.seen:
            self.seen.add(value)
            return []
        return [value]


def test_empty_results_are_retried_by_the_result_predicate(executor, tmp_path):
    env = _env(tmp_path)
    strategy = AsyncRetryStrategy.exponential_backoff(
        3, 1, 10, 2.0, async_retry_predicates.empty_result_predicate, None)
    out = list(AsyncDataStream.unordered_wait_with_retry(
        env.from_collection(list(range(10))), EmptyFirst(), Time.seconds(30), strategy)
        .execute_and_collect())
    assert sorted(out) == list(range(10))


def test_a_retry_that_outlives_the_timeout_gives_the_timeout_outputs(executor, tmp_path):
    env = _env(tmp_path)
    strategy = AsyncRetryStrategy.fixed_delay(
        1000, 10, None, async_retry_predicates.has_exception_predicate)

    class AlwaysFails(AsyncFunction):
        async def async_invoke(self, value):
            raise Flaky(value)

        def timeout(self, value):
            return [("gave up", value)]

    out = list(AsyncDataStream.ordered_wait_with_retry(
        env.from_collection([1, 2]), AlwaysFails(), Time.milliseconds(60), strategy)
        .execute_and_collect())
    assert out == [("gave up", 1), ("gave up", 2)]


class NotAList(AsyncFunction):
    async def async_invoke(self, value):
        return value


def test_outputs_that_are_not_a_list_fail_the_job_with_a_clear_error(executor, tmp_path):
    env = _env(tmp_path)
    stream = AsyncDataStream.unordered_wait(env.from_collection(["x"]), NotAList(),
                                            Time.seconds(5))
    with pytest.raises(Exception, match="outputs must be a list"):
        list(stream.execute_and_collect())


class CountsInFlight(AsyncFunction):
    """Records the most requests ever running at once."""

    def open(self, runtime_context):
        self.running = 0
        self.peak = 0

    async def async_invoke(self, value):
        self.running += 1
        self.peak = max(self.peak, self.running)
        await asyncio.sleep(0.001)
        self.running -= 1
        return [self.peak]


def test_no_more_than_capacity_requests_are_in_flight(executor, tmp_path):
    env = _env(tmp_path)
    out = list(AsyncDataStream.unordered_wait(
        env.from_collection(list(range(400))), CountsInFlight(), Time.seconds(30), 4)
        .execute_and_collect())
    assert len(out) == 400
    assert max(out) <= 4


def test_bad_arguments_are_refused_when_the_job_is_built():
    env = StreamExecutionEnvironment.get_execution_environment()
    stream = env.from_collection([1])

    class NotAsync(AsyncFunction):
        def async_invoke(self, value):  # not a coroutine function
            return [value]

    with pytest.raises(AsyncFunctionError, match="async def"):
        AsyncDataStream.unordered_wait(stream, NotAsync(), Time.seconds(1))
    with pytest.raises(AsyncFunctionError, match="capacity"):
        AsyncDataStream.ordered_wait(stream, Jittered(), Time.seconds(1), 0)
    with pytest.raises(AsyncFunctionError, match="timeout"):
        AsyncDataStream.ordered_wait(stream, Jittered(), 1000)
    strategy = AsyncRetryStrategy.fixed_delay(2, 5, None,
                                              async_retry_predicates.has_exception_predicate)
    with pytest.raises(AsyncFunctionError, match="timeout must be set"):
        AsyncDataStream.ordered_wait_with_retry(stream, Jittered(), Time.milliseconds(0),
                                                strategy)
    with pytest.raises(AsyncFunctionError, match="AsyncFunction"):
        AsyncDataStream.unordered_wait(stream, lambda v: [v], Time.seconds(1))


class FirstRecordWaitsForARestart(AsyncFunction):
    """Record 0 cannot finish in the first attempt of the job: it is in flight at every
    checkpoint, so only a restore that re-issues it can emit it."""

    def __init__(self, address):
        self.address = address

    def open(self, runtime_context):
        self.attempt = runtime_context.get_attempt_number()

    async def async_invoke(self, value):
        if value == 0 and self.attempt == 0:
            await asyncio.sleep(60)
            return ["not restored"]
        return [await query_async(self.address, str(value))]


def test_requests_in_flight_at_a_checkpoint_are_reissued_after_a_crash(executor, tmp_path):
    env = local_environment(tmp_path, 1, restart_attempts=3, restart_delay="20 ms")
    env.enable_checkpointing(30, CheckpointingMode.EXACTLY_ONCE)
    marker = tmp_path / "crashed"
    # the second half waits for a completed checkpoint (record 0 in flight); its first record
    # fails the job once
    gate = FileGate(tmp_path / "gate")
    opener = open_when(gate, lambda: completed_checkpoints(tmp_path / "chk"))
    with SlowService(latency_s=0.002) as service:
        source = gated_records(env, gate, list(range(600)), before_gate=300) \
            .map(RaiseOnce(marker, 300)).set_parallelism(1)
        out = list(AsyncDataStream.unordered_wait(
            source, FirstRecordWaitsForARestart(service.address), Time.seconds(120), 10)
            .execute_and_collect())
    opener.join(60)
    assert marker.exists(), "the failure was never injected"
    assert sorted(out, key=lambda s: int(s.split(":")[0])) == [f"{v}:ok" for v in range(600)]


def test_an_async_function_on_a_keyed_stream_runs_per_record(executor, tmp_path):
    env = _env(tmp_path, 2)
    keyed = env.from_collection(list(range(50))).key_by(lambda v: v % 3)
    out = list(AsyncDataStream.unordered_wait(keyed, Jittered(), Duration.of_seconds(30))
               .execute_and_collect())
    assert sorted(out) == [v * 10 for v in range(50)]
