"""What the function contexts report about event time in a job without timestamps or
watermarks: ``ctx.timestamp()`` of a record from ``from_collection`` and the timer service's
``current_watermark()``, in a ``ProcessFunction``, a ``KeyedProcessFunction`` and a
``CoProcessFunction``. Parallelism 1; results collected in order.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import CoProcessFunction, KeyedProcessFunction, ProcessFunction


def describe(where, value, ctx):
    return (f"{where} {value}: timestamp={ctx.timestamp()} "
            f"watermark={ctx.timer_service().current_watermark()}")


class Plain(ProcessFunction):

    def process_element(self, value, ctx: 'ProcessFunction.Context'):
        yield describe("process", value, ctx)


class Keyed(KeyedProcessFunction):

    def process_element(self, value, ctx: 'KeyedProcessFunction.Context'):
        yield describe(f"keyed[{ctx.get_current_key()}]", value, ctx)


class Both(CoProcessFunction):

    def process_element1(self, value, ctx: 'CoProcessFunction.Context'):
        yield describe("co-1", value, ctx)

    def process_element2(self, value, ctx: 'CoProcessFunction.Context'):
        yield describe("co-2", value, ctx)


def show(title, stream):
    print(title)
    with stream.execute_and_collect(title) as results:
        for line in sorted(results):
            print(line)


def context_timestamps():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    def words():
        return env.from_collection(["a", "b"], type_info=Types.STRING())

    show("== ProcessFunction", words().process(Plain(), output_type=Types.STRING()))
    show("== KeyedProcessFunction",
         words().key_by(lambda word: word).process(Keyed(), output_type=Types.STRING()))
    show("== CoProcessFunction",
         words().connect(env.from_collection([1], type_info=Types.INT()))
                .process(Both(), output_type=Types.STRING()))


if __name__ == "__main__":
    context_timestamps()
