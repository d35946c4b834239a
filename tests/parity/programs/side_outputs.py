"""Side outputs: a ``ProcessFunction`` routes malformed records to an ``OutputTag`` and
``get_side_output`` turns them into a stream of their own.

Parallelism 1; the main output and the side output each go to a print sink with its own
identifier. The two sinks interleave, so the harness compares sorted lines.
"""

from pyflink.common import Types
from pyflink.datastream import OutputTag, StreamExecutionEnvironment
from pyflink.datastream.functions import ProcessFunction

MALFORMED = OutputTag("malformed", Types.STRING())

LINES = ["temp=21", "temp=x", "humidity=40", "garbage", "temp=-3"]


class ParseMeasurement(ProcessFunction):

    def process_element(self, value, ctx: 'ProcessFunction.Context'):
        name, _, number = value.partition("=")
        if number.lstrip("-").isdigit():
            yield f"{name} is {int(number)}"
        else:
            yield MALFORMED, f"malformed: {value!r}"


def side_outputs():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    parsed = env.from_collection(LINES, type_info=Types.STRING()) \
        .process(ParseMeasurement(), output_type=Types.STRING())
    parsed.print("main")
    parsed.get_side_output(MALFORMED).print("side")
    env.execute("side_outputs")


if __name__ == "__main__":
    side_outputs()
