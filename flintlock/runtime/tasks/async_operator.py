"""The async I/O operator: ``AsyncDataStream.(un)ordered_wait(_with_retry)`` at run time.

Design note. Each subtask of the operator owns one asyncio event loop, run by a daemon thread
that the operator starts in ``open`` and stops in ``close`` (a thread per operator subtask: a
loop cannot run on the task thread, which blocks on input and mail). The task thread owns
everything else: the ``AsyncResultQueue`` (``async_queue``), the emission of results and
watermarks, the user's ``timeout`` hook and the checkpointed state.

* A record is added to the queue, then its request is started on the loop (one
  ``call_soon_threadsafe`` per batch). The request runs ``async_invoke`` and, with a retry
  strategy, retries an attempt whose outputs or exception match the strategy's predicates
  while ``can_retry(attempts)`` holds, after ``get_backoff_time_millis(attempts)``. The
  timeout (``asyncio.wait_for``) covers all attempts of a record, back-off included; when it
  passes the request is cancelled and the user's ``timeout(value)`` gives the outputs (by
  default it raises ``TimeoutError``, failing the job), as in Flink.
* A finished request appends its outcome to ``_completions`` (loop thread) and gets it onto
  the task thread through the task's mailbox: one coalesced mail runs ``_drain`` when the task
  is between batches, and ``wake()`` ends a wait of the task thread inside this operator.
  ``_drain`` resolves outcomes (an exception fails the task with ``AsyncRequestFailedError``),
  completes queue entries and emits what ``pop_ready`` releases: ordered or unordered,
  watermarks never overtaken (see ``async_queue``). Outputs keep the input record's timestamp.
* Backpressure: with ``capacity`` entries queued, ``process_batch`` waits on the task thread
  (``wait_for_wake``: mail already queued, such as a checkpoint trigger, does not run in the
  middle of the batch; a cancel ends the wait) until a completion frees a slot. The task reads
  no input meanwhile, so upstream backs up as with a full output.
* Checkpoints: ``snapshot_state`` stores the input of every queued record (finished or not)
  and the watermarks between them in operator list state; ``open`` after a restore adds them
  again and re-issues their requests. Results emitted before the barrier are not in the state,
  those after it are re-created: exactly-once output, at the price of repeating the requests
  in flight at the checkpoint. ``end_input`` waits until every queued record is emitted, and
  so does the maximum watermark: a task downstream of a finished source gets its end of input
  only after the job's final checkpoint, but the maximum watermark before that checkpoint's
  barrier, so results emitted at end of input would come after the last checkpoint and never
  reach an exactly-once sink.

Threads: ``_completions`` and ``_drain_posted`` are shared with the loop thread (a deque
append and a flag; see ``_deliver``); ``_tasks`` belongs to the loop thread; all the rest to
the task thread.
"""

from __future__ import annotations

import asyncio
import threading
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from flintlock.common.errors import FlintlockError
from flintlock.common.operator_spec import AsyncIOSpec, OperatorSpec
from flintlock.common.state import ListStateDescriptor
from flintlock.runtime.network.event_time import MAX_WATERMARK, NO_TIMESTAMP, TimestampedBatch
from flintlock.runtime.tasks.async_queue import AsyncResultQueue, RecordEntry, WatermarkEntry
from flintlock.runtime.tasks.contexts import RuntimeContextImpl
from flintlock.runtime.tasks.operator import StreamOperator, TaskMailboxAccess

IN_FLIGHT_STATE = ListStateDescriptor("_flintlock_async_in_flight", None)
LOOP_STOP_TIMEOUT_S = 5.0


class AsyncRequestFailedError(FlintlockError):
    """An async request failed: ``async_invoke`` raised (and was not retried), the ``timeout``
    hook raised, or the outputs were not a list."""

    def __init__(self, operator: str, function: str, value: str, problem: str) -> None:
        super().__init__(operator, function, value, problem)
        self.operator = operator
        self.function = function
        self.value = value
        self.problem = problem

    def __str__(self) -> str:
        return (f"async function {self.function} of operator {self.operator!r} failed for "
                f"input {self.value}: {self.problem}")


class AsyncOperatorSetupError(FlintlockError):
    """The async I/O operator runs outside a stream task (it needs the task's mailbox)."""


@dataclass(frozen=True, slots=True)
class _Outcome:
    result: Any = None
    error: BaseException | None = None
    timed_out: bool = False


class _LoopThread:
    """A daemon thread running one asyncio event loop until ``stop``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_forever()
        finally:
            pending = asyncio.all_tasks(self.loop)
            for task in pending:
                task.cancel()
            if pending:
                self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self.loop.close()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(LOOP_STOP_TIMEOUT_S)
        elif not self.loop.is_closed():
            self.loop.close()


class AsyncWaitOperator(StreamOperator):
    def __init__(self, spec: OperatorSpec) -> None:
        assert spec.async_io is not None
        self.spec = spec
        self.function = spec.function
        self.settings: AsyncIOSpec = spec.async_io
        self._queue = AsyncResultQueue(self.settings.capacity, self.settings.ordered)
        self._completions: deque[tuple[RecordEntry, _Outcome]] = deque()
        self._drain_posted = False
        self._tasks: set[asyncio.Task[None]] = set()  # loop thread: the requests running
        self._loop: _LoopThread | None = None
        self._restored: list[tuple[Any, ...]] = []
        predicate = self.settings.retry_strategy.get_retry_predicate()
        self._retry_on_result = predicate.result_predicate()
        self._retry_on_error = predicate.exception_predicate()

    # -- life cycle (task thread) --------------------------------------------------------

    def initialize_state(self, restored: Any) -> None:
        self._state = self.context.operator_backend.get_list_state(IN_FLIGHT_STATE)
        self._restored = list(self._state.get() or ())

    def open(self) -> None:
        self._mailbox()
        opener = getattr(self.function, "open", None)
        if opener is not None:
            opener(RuntimeContextImpl(self.context))
        self._loop = _LoopThread(f"async-io {self.context.operator_name} "
                                 f"({self.context.subtask_index + 1})")
        self._loop.start()
        restored, self._restored = self._restored, []
        for entry in restored:
            if entry[0] == "w":
                self.process_watermark(entry[1])
            else:
                self._add_records([(entry[1], entry[2])])

    def process_batch(self, records: list[Any]) -> None:
        if type(records) is TimestampedBatch:
            self._add_records(records.pairs())
        else:
            self._add_records((value, None) for value in records)

    def process_watermark(self, timestamp: int) -> None:
        self._wait_for_room()
        self._queue.add_watermark(timestamp)
        self._emit_ready()
        if timestamp >= MAX_WATERMARK:
            self._wait_until_empty()

    def end_input(self, input_index: int = 0) -> None:
        self._wait_until_empty()

    def snapshot_state(self, checkpoint_id: int) -> Any:
        self._state.update([
            ("w", entry.timestamp) if isinstance(entry, WatermarkEntry)
            else ("r", entry.value, entry.timestamp)
            for entry in self._queue.entries()
        ])
        return None

    def close(self) -> None:
        if self._loop is not None:
            self._loop.stop()
            self._loop = None
        closer = getattr(self.function, "close", None)
        if closer is not None:
            closer()

    # -- issuing requests (task thread) --------------------------------------------------

    def _add_records(self, pairs: Iterable[tuple[Any, int | None]]) -> None:
        issued: list[RecordEntry] = []
        for value, timestamp in pairs:
            if self._queue.is_full:
                self._start(issued)
                issued = []
                self._wait_for_room()
            issued.append(self._queue.add_record(value, timestamp))
        self._start(issued)

    def _start(self, entries: list[RecordEntry]) -> None:
        if entries:
            assert self._loop is not None
            self._loop.loop.call_soon_threadsafe(self._spawn, entries)

    def _wait_for_room(self) -> None:
        while self._queue.is_full:
            self._drain()
            if self._queue.is_full:
                self._mailbox().wait_for_wake()

    def _wait_until_empty(self) -> None:
        while len(self._queue):
            self._drain()
            if len(self._queue):
                self._mailbox().wait_for_wake()

    def _mailbox(self) -> TaskMailboxAccess:
        mailbox = self.context.mailbox
        if mailbox is None:
            raise AsyncOperatorSetupError(
                f"async I/O operator {self.context.operator_name!r} needs the mailbox of a "
                "stream task")
        return mailbox

    # -- the event loop (loop thread) ----------------------------------------------------

    def _spawn(self, entries: list[RecordEntry]) -> None:
        loop = asyncio.get_running_loop()
        tasks = self._tasks
        for entry in entries:
            task = loop.create_task(self._request(entry))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def _request(self, entry: RecordEntry) -> None:
        timeout_ms = self.settings.timeout_ms
        try:
            if timeout_ms > 0:
                outcome = await asyncio.wait_for(self._attempts(entry.value), timeout_ms / 1000)
            else:
                outcome = await self._attempts(entry.value)
        except TimeoutError:
            outcome = _Outcome(timed_out=True)
        except asyncio.CancelledError:
            return  # the operator is closing
        except Exception as exc:  # a retry predicate or strategy raised: fails the task
            outcome = _Outcome(error=exc)
        self._deliver(entry, outcome)

    async def _attempts(self, value: Any) -> _Outcome:
        strategy = self.settings.retry_strategy
        attempts = 1
        while True:
            try:
                outcome = _Outcome(result=await self.function.async_invoke(value))
            except Exception as exc:
                outcome = _Outcome(error=exc)
            if not (self._retryable(outcome) and strategy.can_retry(attempts)):
                return outcome
            await asyncio.sleep(strategy.get_backoff_time_millis(attempts) / 1000)
            attempts += 1

    def _retryable(self, outcome: _Outcome) -> bool:
        if outcome.error is not None:
            return self._retry_on_error is not None and bool(self._retry_on_error(outcome.error))
        return self._retry_on_result is not None and bool(self._retry_on_result(outcome.result))

    def _deliver(self, entry: RecordEntry, outcome: _Outcome) -> None:
        self._completions.append((entry, outcome))
        mailbox = self._mailbox()
        if not self._drain_posted:
            self._drain_posted = True
            mailbox.execute(self._drain, "async I/O results")
        mailbox.wake()

    # -- results (task thread) -----------------------------------------------------------

    def _drain(self) -> None:
        self._drain_posted = False
        completions = self._completions
        if not completions:
            return
        while completions:
            entry, outcome = completions.popleft()
            self._queue.complete(entry, self._outputs(entry.value, outcome))
        self._emit_ready()

    def _outputs(self, value: Any, outcome: _Outcome) -> list[Any]:
        if outcome.timed_out:
            try:
                result = self.function.timeout(value)
            except Exception as exc:
                raise self._failure(value, f"timed out, and timeout() raised {exc!r}") from exc
        elif outcome.error is not None:
            raise self._failure(value, repr(outcome.error)) from outcome.error
        else:
            result = outcome.result
        if result is None or isinstance(result, (str, bytes, dict)) or not isinstance(
                result, Iterable):
            raise self._failure(value, f"the outputs must be a list, got {type(result).__name__}"
                                " (return [value] for one output)")
        return list(result)

    def _failure(self, value: Any, problem: str) -> AsyncRequestFailedError:
        return AsyncRequestFailedError(self.context.operator_name, type(self.function).__name__,
                                       repr(value)[:200], problem)

    def _emit_ready(self) -> None:
        out: list[Any] = []
        stamps: list[int] = []
        stamped = False
        for entry in self._queue.pop_ready():
            if isinstance(entry, WatermarkEntry):
                self._flush(out, stamps, stamped)
                out, stamps, stamped = [], [], False
                self.emit_watermark(entry.timestamp)
                continue
            assert entry.outputs is not None
            out.extend(entry.outputs)
            if entry.timestamp is not None:
                stamped = True
            stamps.extend([_stamp(entry.timestamp)] * len(entry.outputs))
        self._flush(out, stamps, stamped)

    def _flush(self, out: list[Any], stamps: list[int], stamped: bool) -> None:
        if out:
            self.output.collect_batch(TimestampedBatch(out, stamps) if stamped else out)


def _stamp(timestamp: int | None) -> int:
    return NO_TIMESTAMP if timestamp is None else timestamp
