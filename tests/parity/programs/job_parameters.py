"""Global job parameters: a threshold set on the ``ExecutionConfig`` and read by a function
through ``RuntimeContext.get_job_parameter`` in ``open``.

Parallelism 1; the records above the threshold go through the print sink.
"""

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.datastream.functions import FilterFunction, RuntimeContext


class AboveThreshold(FilterFunction):

    def open(self, runtime_context: RuntimeContext):
        self.threshold = int(runtime_context.get_job_parameter("threshold", "0"))
        self.unit = runtime_context.get_job_parameter("unit", "none")

    def filter(self, value):
        return value > self.threshold


def job_parameters():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    env.get_config().set_global_job_parameters({"threshold": "40"})
    print(sorted(env.get_config().get_global_job_parameters().items()))

    env.from_collection([10, 45, 40, 90, 3, 41], type_info=Types.INT()) \
        .filter(AboveThreshold()) \
        .print()
    env.execute("job_parameters")


if __name__ == "__main__":
    job_parameters()
