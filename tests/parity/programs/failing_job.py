"""What a program sees when a user function fails: ``env.execute()`` raises, and the error
text carries the function's own exception message. With checkpointing off there is no restart
(in PyFlink the job fails at once), so the program finishes. Nothing reaches the print sink:
the filter drops every price, so what the failure cut short does not show.

The exception types differ by engine by nature (PyFlink raises a py4j error wrapping the Java
one), so the program prints only that an exception came and whether the message is in it.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import MapFunction


class ParsePrice(MapFunction):

    def map(self, value):
        if not value.replace(".", "", 1).isdigit():
            raise ValueError(f"not a price: {value!r} (record rejected by ParsePrice)")
        return float(value)


def failing_job():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.from_collection(["1.5", "2", "three", "4"], type_info=Types.STRING()) \
        .map(ParsePrice(), output_type=Types.DOUBLE()) \
        .filter(lambda price: price < 0) \
        .print()
    try:
        env.execute("failing_job")
    except Exception as error:
        text = str(error)
        print("execute() raised")
        print(f"message names the bad record: {'not a price' in text and 'three' in text}")
    else:
        print("execute() returned")


if __name__ == "__main__":
    failing_job()
