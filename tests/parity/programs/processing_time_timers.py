"""Processing-time timers in a ``KeyedProcessFunction``: de-duplication whose per-key state is
cleaned up by a timer an hour after the key was last seen.

Each event id is let through the first time and reported as a duplicate afterwards; every
sighting moves the key's cleanup timer (delete the old one, register a new one). The job ends
long before any timer is due, and a bounded job does not fire processing-time timers that are
still pending when its input ends, so the output is deterministic: no "expired" line appears.
Each line also shows the current watermark (no watermarks in this job) and that processing
time is wall-clock time in ms. (What ``ctx.timestamp()`` returns for a record without a
timestamp is shown by ``context_timestamps``.)
Parallelism 2; results collected and printed sorted.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import KeyedProcessFunction, RuntimeContext
from pyflink.datastream.state import ValueStateDescriptor

ONE_HOUR_MS = 60 * 60 * 1000
YEAR_2020_MS = 1_577_836_800_000

EVENTS = ["e1", "e2", "e1", "e3", "e2", "e1", "e4", "e3", "e5", "e1"]


class Deduplicate(KeyedProcessFunction):

    def open(self, runtime_context: RuntimeContext):
        self.cleanup_at = runtime_context.get_state(
            ValueStateDescriptor("cleanup_at", Types.LONG()))
        self.sightings = runtime_context.get_state(ValueStateDescriptor("sightings", Types.INT()))

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        timers = ctx.timer_service()
        now = timers.current_processing_time()
        previous = self.cleanup_at.value()
        if previous is not None:
            timers.delete_processing_time_timer(previous)
        timers.register_processing_time_timer(now + ONE_HOUR_MS)
        self.cleanup_at.update(now + ONE_HOUR_MS)
        sightings = (self.sightings.value() or 0) + 1
        self.sightings.update(sightings)
        kind = "first" if sightings == 1 else f"duplicate #{sightings - 1}"
        yield (f"{value} {kind} watermark={timers.current_watermark()} "
               f"wall_clock_ms={now > YEAR_2020_MS}")

    def on_timer(self, timestamp: int, ctx: 'KeyedProcessFunction.OnTimerContext'):
        self.cleanup_at.clear()
        self.sightings.clear()
        yield f"{ctx.get_current_key()} expired ({ctx.time_domain()})"


def processing_time_timers():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)

    events = env.from_collection(EVENTS, type_info=Types.STRING())
    unique = events.key_by(lambda event: event) \
        .process(Deduplicate(), output_type=Types.STRING())

    with unique.execute_and_collect("processing_time_timers") as results:
        for line in sorted(results):
            print(line)


if __name__ == "__main__":
    processing_time_timers()
