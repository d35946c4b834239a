"""What the environment, its ``ExecutionConfig`` and its ``CheckpointConfig`` report: defaults,
then the values after the setters a job typically calls. No job runs.

(The default parallelism is left out: PyFlink's local environment defaults to the number of
CPU cores.)
"""

from pyflink.common import Duration
from pyflink.datastream import CheckpointingMode, StreamExecutionEnvironment


def show(name, value):
    print(f"{name}: {value}")


def report(env):
    checkpoints = env.get_checkpoint_config()
    show("max parallelism", env.get_max_parallelism())
    show("buffer timeout", env.get_buffer_timeout())
    show("chaining enabled", env.is_chaining_enabled())
    show("object reuse", env.get_config().is_object_reuse_enabled())
    show("checkpointing enabled", checkpoints.is_checkpointing_enabled())
    show("checkpoint interval", env.get_checkpoint_interval())
    show("checkpointing mode", env.get_checkpointing_mode())
    show("checkpoint timeout", checkpoints.get_checkpoint_timeout())
    show("min pause", checkpoints.get_min_pause_between_checkpoints())
    show("max concurrent", checkpoints.get_max_concurrent_checkpoints())
    show("tolerable failures", checkpoints.get_tolerable_checkpoint_failure_number())
    show("unaligned", checkpoints.is_unaligned_checkpoints_enabled())
    aligned_timeout = checkpoints.get_aligned_checkpoint_timeout()
    show("aligned timeout is 0 ms", aligned_timeout == Duration.of_millis(0))
    show("aligned timeout is 40 ms", aligned_timeout == Duration.of_millis(40))
    show("externalized", checkpoints.is_externalized_checkpoints_enabled())
    show("savepoint directory", env.get_default_savepoint_directory())


def environment_settings():
    env = StreamExecutionEnvironment.get_execution_environment()
    print("== defaults")
    report(env)

    env.set_parallelism(3)
    env.set_max_parallelism(64)
    env.set_buffer_timeout(5)
    env.disable_operator_chaining()
    env.get_config().enable_object_reuse()
    env.enable_checkpointing(1234, CheckpointingMode.AT_LEAST_ONCE)
    checkpoints = env.get_checkpoint_config()
    checkpoints.set_checkpoint_timeout(5000)
    checkpoints.set_min_pause_between_checkpoints(250)
    checkpoints.set_max_concurrent_checkpoints(2)
    checkpoints.set_tolerable_checkpoint_failure_number(3)
    checkpoints.enable_unaligned_checkpoints()
    checkpoints.set_aligned_checkpoint_timeout(Duration.of_millis(40))
    env.set_default_savepoint_directory("file:///tmp/savepoints")
    print("== after the setters")
    show("parallelism", env.get_parallelism())
    report(env)


if __name__ == "__main__":
    environment_settings()
