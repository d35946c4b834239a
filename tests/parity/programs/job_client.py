"""Submitting without blocking: ``execute_async`` returns a ``JobClient``; the program waits for
the ``JobExecutionResult`` through the client's future. Also what ``execute()`` returns. (The
job's status cannot be asked for once the result is in: PyFlink's local mini-cluster has shut
down by then.)

Ids and run times differ from run to run, so the program prints properties of them. The print
sink's lines and the program's own lines are written concurrently, so the harness compares
sorted lines.
"""

import string

from pyflink.common import Types
from pyflink.datastream import StreamExecutionEnvironment


def is_job_id(job_id):
    text = str(job_id)
    return len(text) == 32 and all(char in string.hexdigits for char in text)


def describe(result, job_id):
    print(f"result has the job's id: {str(result.get_job_id()) == str(job_id)}")
    runtime = result.get_net_runtime()
    print(f"net runtime is a non-negative int: {isinstance(runtime, int) and runtime >= 0}")
    print(f"accumulators: {result.get_all_accumulator_results()}")


def job_client():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)

    env.from_collection(["async a", "async b"], type_info=Types.STRING()).print()
    client = env.execute_async("job_client async")
    print(f"job id is 32 hex digits: {is_job_id(client.get_job_id())}")
    result = client.get_job_execution_result().result()
    describe(result, client.get_job_id())

    env.from_collection(["sync c"], type_info=Types.STRING()).print()
    result = env.execute("job_client sync")
    print(f"execute() job id is 32 hex digits: {is_job_id(result.get_job_id())}")
    describe(result, result.get_job_id())


if __name__ == "__main__":
    job_client()
