"""Async I/O in the kind of PyFlink's ``asyncio/remote_model_inference.py`` example: an
``AsyncFunction`` whose ``async_invoke`` awaits a (simulated) remote call and returns a list.

Four jobs at parallelism 1, each collected with ``execute_and_collect``:

* ``ordered_wait``: calls with different delays, results in input order;
* ``unordered_wait``: the same calls, results in completion order (printed sorted);
* a timeout: calls for multiples of five never answer within the timeout, so the function's
  ``timeout`` hook gives their results (``ordered_wait``, so the order is defined);
* retries: ``unordered_wait_with_retry`` with ``AsyncRetryStrategy.fixed_delay`` and
  ``async_retry_predicates.exception_type_predicate`` bound to ``TimeoutError`` (as the
  PyFlink example binds it), a call that fails twice for even inputs and succeeds the third
  time, and a result predicate (``empty_result_predicate``) retrying an empty answer.
"""

import asyncio
import functools

from pyflink.common import Time, Types
from pyflink.datastream import (
    AsyncDataStream,
    AsyncFunction,
    AsyncRetryStrategy,
    RuntimeContext,
    StreamExecutionEnvironment,
    async_retry_predicates,
)

REQUESTS = list(range(1, 13))


class Inference(AsyncFunction):

    def open(self, runtime_context: RuntimeContext):
        self.prefix = "score"

    async def async_invoke(self, value: int) -> list[str]:
        await asyncio.sleep((value * 7 % 5) / 100)
        return [f"{value}: {self.prefix} {value * value % 17}"]


class SometimesSilent(AsyncFunction):

    async def async_invoke(self, value: int) -> list[str]:
        if value % 5 == 0:
            await asyncio.sleep(5)
        return [f"{value}: answered"]

    def timeout(self, value: int) -> list[str]:
        return [f"{value}: timed out, default answer"]


class FlakyModel(AsyncFunction):

    def open(self, runtime_context: RuntimeContext):
        self.attempts = {}

    async def async_invoke(self, value: int) -> list[str]:
        attempt = self.attempts.get(value, 0) + 1
        self.attempts[value] = attempt
        if value % 2 == 0 and attempt < 3:
            raise TimeoutError(f"model busy for {value}")
        if value % 3 == 0 and attempt == 1:
            return []
        return [f"{value}: ok after {attempt} attempt(s)"]


def collect(title, stream, ordered):
    print(title)
    with stream.execute_and_collect(title) as results:
        lines = list(results)
    for line in (lines if ordered else sorted(lines, key=lambda s: int(s.split(":")[0]))):
        print(line)


def main():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def requests():
        return env.from_collection(REQUESTS, type_info=Types.INT())

    collect("ordered", AsyncDataStream.ordered_wait(
        requests(), Inference(), Time.seconds(10), 4, Types.STRING()), ordered=True)
    collect("unordered", AsyncDataStream.unordered_wait(
        requests(), Inference(), Time.seconds(10), 4, Types.STRING()), ordered=False)
    collect("timeout", AsyncDataStream.ordered_wait(
        requests(), SometimesSilent(), Time.milliseconds(500), 20, Types.STRING()),
        ordered=True)

    strategy = AsyncRetryStrategy.fixed_delay(
        max_attempts=3,
        backoff_time_millis=20,
        result_predicate=async_retry_predicates.empty_result_predicate,
        exception_predicate=functools.partial(async_retry_predicates.exception_type_predicate,
                                              expected_error_type=TimeoutError))
    collect("retry", AsyncDataStream.unordered_wait_with_retry(
        requests(), FlakyModel(), Time.seconds(10), strategy, 6, Types.STRING()),
        ordered=False)


if __name__ == "__main__":
    main()
