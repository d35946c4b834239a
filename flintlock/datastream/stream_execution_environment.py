"""``StreamExecutionEnvironment``: where a job starts (sources, settings) and where it is
submitted (``execute``), with PyFlink's methods.

Settings live in one ``Configuration`` under Flink's keys: ``flintlock-conf.yaml`` (see
``Configuration.load``), then the configuration given to ``get_execution_environment``, then
``configure(...)`` and the setters, later winning. ``get_checkpoint_config()`` and
``get_config()`` are views over the same configuration.

Operator calls on streams append ``Transformation`` records here. ``execute`` builds a fresh
``StreamGraph`` from them (validated, every shipped function checked for picklability), clears
them (as Flink does), and hands the graph and a copy of the configuration to the executor,
``flintlock.spark.executor.SparkExecutor``, imported only then so building a job never needs
Spark. After ``close()`` every operation fails with ``EnvironmentClosedError``.

Owned by the user's thread.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from flintlock.common import restart_strategy
from flintlock.common.checkpointing import CheckpointingMode
from flintlock.common.config import Configuration
from flintlock.common.execution_config import ExecutionConfig
from flintlock.common.job_execution_result import JobExecutionResult
from flintlock.common.operator_spec import CollectionSource, OperatorKind, OperatorSpec
from flintlock.common.options import checkpointing as checkpoint_options
from flintlock.common.options import execution
from flintlock.common.options import python as python_options
from flintlock.common.restart_strategy import RestartStrategyConfiguration
from flintlock.common.time import Duration
from flintlock.common.typeinfo import TypeInformation
from flintlock.common.watermark_strategy import WatermarkStrategy
from flintlock.datastream.cache import release_cached_results, use_cached_results
from flintlock.datastream.checkpoint_config import CheckpointConfig
from flintlock.datastream.connectors.base import Source
from flintlock.datastream.data_stream import DataStream
from flintlock.datastream.errors import EmptyJobError, EnvironmentClosedError
from flintlock.datastream.execution_mode import RuntimeExecutionMode
from flintlock.datastream.slot_sharing_group import SlotSharingGroup
from flintlock.datastream.state_backend import StateBackend, backend_from_configuration
from flintlock.datastream.time_characteristic import TimeCharacteristic
from flintlock.datastream.transformations import (
    JobSettings,
    StreamInput,
    Transformation,
    build_stream_graph,
    reachable,
)
from flintlock.datastream.unsupported import unsupported
from flintlock.graph.stream_graph import ChainingStrategy, StreamGraph

if TYPE_CHECKING:
    from flintlock.common.job_client import CloseableIterator, JobClient, JobExecutor

DEFAULT_JOB_NAME = "Flink Streaming Job"
EXECUTOR_MODULE = "flintlock.spark.executor"


def load_executor() -> JobExecutor:
    """A new ``SparkExecutor`` (a ``JobExecutor``); ``NotImplementedError`` while the runtime
    does not exist. The first call imports the runtime (the JobManager, PySpark) with the cycle
    collector paused: what an import makes lives as long as the process, and the collections
    it would start cost 40-80 ms of the 0.2 s before the first job's JVM starts."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        module = importlib.import_module(EXECUTOR_MODULE)
    except ModuleNotFoundError as exc:
        if exc.name != EXECUTOR_MODULE:
            raise
        raise NotImplementedError("the Spark runtime is not available yet (issue #4)") from None
    finally:
        if collecting:
            gc.enable()
    executor: JobExecutor = module.SparkExecutor()
    return executor


class StreamExecutionEnvironment:
    """The context a streaming job is built and submitted in."""

    def __init__(self, configuration: Configuration | None = None) -> None:
        self._configuration = Configuration(configuration) if configuration is not None else (
            Configuration())
        self._transformations: list[Transformation] = []  # defined since the last execute
        self._known: dict[int, Transformation] = {}  # every transformation ever defined
        self._next_id = 1
        self._closed = False
        self._time_characteristic = TimeCharacteristic.EventTime
        self._slot_sharing_groups: dict[str, SlotSharingGroup] = {}
        self._execution_config = ExecutionConfig(self._configuration)
        self._checkpoint_config = CheckpointConfig(self._configuration)

    @staticmethod
    def get_execution_environment(configuration: Configuration | None = None
                                  ) -> StreamExecutionEnvironment:
        """A new environment: the file configuration overlaid with ``configuration``."""
        merged = Configuration.load()
        if configuration is not None:
            merged.add_all(configuration)
        return StreamExecutionEnvironment(merged)

    # -- lifecycle ----------------------------------------------------------------------------

    def _check_open(self, operation: str) -> None:
        if self._closed:
            raise EnvironmentClosedError(operation)

    def close(self) -> None:
        """Release the environment; later operations fail. Closing twice is harmless."""
        self._closed = True
        release_cached_results(self._known.values())
        self._transformations.clear()
        self._known.clear()

    def _add_transformation(self, name: str, spec: OperatorSpec,
                            inputs: list[tuple[StreamInput, int]],
                            output_type: TypeInformation | None, *,
                            key_selectors: tuple[Any, ...] = (), parallelism: int | None = None,
                            non_parallel: bool = False) -> Transformation:
        self._check_open(name)
        transformation = Transformation(
            id=self._next_id, name=name, spec=spec, inputs=list(inputs),
            output_type=output_type, parallelism=parallelism, key_selectors=key_selectors,
            non_parallel=non_parallel,
            chaining=ChainingStrategy.HEAD if spec.kind is OperatorKind.SOURCE else (
                ChainingStrategy.ALWAYS),
        )
        self._next_id += 1
        self._transformations.append(transformation)
        self._known[transformation.id] = transformation
        return transformation

    # -- settings -----------------------------------------------------------------------------

    def get_config(self) -> ExecutionConfig:
        return self._execution_config

    def configure(self, configuration: Configuration) -> StreamExecutionEnvironment:
        """Apply every key of ``configuration`` (validated) on top of the current settings."""
        self._check_open("configure()")
        self._configuration.add_all(configuration)
        return self

    def get_configuration(self) -> Configuration:
        """The environment's live configuration (flintlock addition; PyFlink hides it)."""
        return self._configuration

    def set_parallelism(self, parallelism: int) -> StreamExecutionEnvironment:
        self._configuration.set(execution.PARALLELISM, parallelism)
        return self

    def get_parallelism(self) -> int:
        return self._configuration.get(execution.PARALLELISM)

    def set_max_parallelism(self, max_parallelism: int) -> StreamExecutionEnvironment:
        self._configuration.set(execution.MAX_PARALLELISM, max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        """The job's max parallelism; -1 when unset (each operator then derives its own)."""
        if not self._configuration.contains_key(execution.MAX_PARALLELISM.key):
            return -1
        return self._configuration.get(execution.MAX_PARALLELISM)

    def set_buffer_timeout(self, timeout_millis: int) -> StreamExecutionEnvironment:
        self._configuration.set(execution.BUFFER_TIMEOUT, timeout_millis)
        return self

    def get_buffer_timeout(self) -> int:
        return self._configuration.get(execution.BUFFER_TIMEOUT)

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode
                         ) -> StreamExecutionEnvironment:
        if not isinstance(execution_mode, RuntimeExecutionMode):
            raise TypeError(f"set_runtime_mode needs a RuntimeExecutionMode, got "
                            f"{execution_mode!r}")
        self._configuration.set(execution.RUNTIME_MODE, execution_mode.config_value())
        return self

    def disable_operator_chaining(self) -> StreamExecutionEnvironment:
        self._configuration.set(execution.OPERATOR_CHAINING, False)
        return self

    def is_chaining_enabled(self) -> bool:
        return self._configuration.get(execution.OPERATOR_CHAINING)

    def is_chaining_of_operators_with_different_max_parallelism_enabled(self) -> bool:
        return True

    def set_stream_time_characteristic(self, characteristic: TimeCharacteristic
                                       ) -> StreamExecutionEnvironment:
        """Deprecated in Flink and without effect; recorded for ``get_``."""
        if not isinstance(characteristic, TimeCharacteristic):
            raise TypeError(f"expected a TimeCharacteristic, got {characteristic!r}")
        self._time_characteristic = characteristic
        return self

    def register_slot_sharing_group(self, slot_sharing_group: SlotSharingGroup
                                    ) -> StreamExecutionEnvironment:
        """Accepted for compatibility: groups are matched by name and their resources are not
        used for placement (see ``SlotSharingGroup``)."""
        if not isinstance(slot_sharing_group, SlotSharingGroup):
            raise TypeError(f"register_slot_sharing_group needs a SlotSharingGroup, got "
                            f"{slot_sharing_group!r}")
        self._slot_sharing_groups[slot_sharing_group.get_name()] = slot_sharing_group
        return self

    def get_stream_time_characteristic(self) -> TimeCharacteristic:
        return self._time_characteristic

    # -- checkpointing and state --------------------------------------------------------------

    def get_checkpoint_config(self) -> CheckpointConfig:
        return self._checkpoint_config

    def enable_checkpointing(self, interval: int | Duration,
                             mode: CheckpointingMode | None = None
                             ) -> StreamExecutionEnvironment:
        """Checkpoint every ``interval`` milliseconds (at least 10), in ``mode``."""
        self._checkpoint_config.set_checkpoint_interval(interval)
        if mode is not None:
            self._checkpoint_config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_interval(self) -> int:
        return self._checkpoint_config.get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        return self._checkpoint_config.get_checkpointing_mode()

    def set_state_backend(self, state_backend: StateBackend) -> StreamExecutionEnvironment:
        if not isinstance(state_backend, StateBackend):
            raise TypeError(f"set_state_backend needs a StateBackend such as "
                            f"HashMapStateBackend(), got {state_backend!r}")
        state_backend.configure_into(self._configuration)
        return self

    def get_state_backend(self) -> StateBackend:
        return backend_from_configuration(self._configuration)

    def is_changelog_state_backend_enabled(self) -> bool:
        return False

    def set_restart_strategy(self, restart_strategy_configuration: RestartStrategyConfiguration
                             ) -> StreamExecutionEnvironment:
        """Write the strategy as ``restart-strategy.*`` keys (validated)."""
        if not isinstance(restart_strategy_configuration, RestartStrategyConfiguration):
            raise TypeError("set_restart_strategy needs a RestartStrategies configuration, "
                            f"e.g. RestartStrategies.no_restart(); got "
                            f"{restart_strategy_configuration!r}")
        restart_strategy_configuration.configure_into(self._configuration)
        return self

    def get_restart_strategy(self) -> RestartStrategyConfiguration:
        return restart_strategy.from_configuration(self._configuration)

    def set_default_savepoint_directory(self, directory: str) -> StreamExecutionEnvironment:
        self._configuration.set(checkpoint_options.SAVEPOINT_DIR, directory)
        return self

    def get_default_savepoint_directory(self) -> str | None:
        """As PyFlink shows it (Java's Path): ``file:///tmp/x`` reads back as ``file:/tmp/x``."""
        directory: str | None = self._configuration.get(checkpoint_options.SAVEPOINT_DIR)
        if directory is not None and directory.startswith("file:///"):
            return "file:/" + directory[len("file:///"):]
        return directory

    # -- sources ----------------------------------------------------------------------------

    def from_collection(self, collection: Any, type_info: TypeInformation | None = None
                        ) -> DataStream:
        """A bounded, non-parallel source emitting the elements in order. With a declared
        ``type_info`` the elements are converted as PyFlink does (tuples given for a ROW
        type become ``Row`` objects) and validated at once."""
        self._check_open("from_collection()")
        elements = tuple(collection)
        if not elements:
            raise ValueError("from_collection(): the collection must not be empty")
        if type_info is not None:
            if not isinstance(type_info, TypeInformation):
                raise TypeError(f"from_collection(): type_info must be a TypeInformation, got "
                                f"{type_info!r}")
            elements = tuple(type_info.coerce(element) for element in elements)
            for element in elements:
                type_info.validate(element, "Collection Source")
        spec = OperatorSpec(OperatorKind.SOURCE, output_type=type_info,
                            source=CollectionSource(elements))
        transformation = self._add_transformation(
            "Collection Source", spec, [], type_info, parallelism=1, non_parallel=True)
        return DataStream(self, (StreamInput(transformation.id),), type_info, transformation)

    def from_source(self, source: Source, watermark_strategy: WatermarkStrategy,
                    source_name: str, type_info: TypeInformation | None = None) -> DataStream:
        self._check_open("from_source()")
        if not isinstance(source, Source):
            raise TypeError(f"from_source() takes a Source connector, got {source!r}; the "
                            "legacy SourceFunction API is not supported")
        if not isinstance(watermark_strategy, WatermarkStrategy):
            raise TypeError("from_source() needs a WatermarkStrategy, e.g. "
                            f"WatermarkStrategy.no_watermarks(); got {watermark_strategy!r}")
        if not isinstance(source_name, str) or not source_name:
            raise TypeError(f"from_source(): source_name must be a non-empty str, got "
                            f"{source_name!r}")
        if type_info is not None and not isinstance(type_info, TypeInformation):
            raise TypeError(f"from_source(): type_info must be a TypeInformation, got "
                            f"{type_info!r}")
        spec = OperatorSpec(OperatorKind.SOURCE, output_type=type_info, source=source,
                            watermark_strategy=watermark_strategy)
        transformation = self._add_transformation(source_name, spec, [], type_info)
        return DataStream(self, (StreamInput(transformation.id),), type_info, transformation)

    add_source = unsupported("the legacy SourceFunction API (use from_source or "
                             "from_collection)")
    read_text_file = unsupported("the legacy text-file source (use from_source with a "
                                 "FileSource)")
    def create_input(self, input_format: Any, type_info: TypeInformation | None = None
                     ) -> DataStream:
        """PyFlink's ``create_input`` for the input formats flintlock has
        (``AvroInputFormat``): read as the bounded source the format names (``as_source()``),
        its records of the format's produced type unless ``type_info`` is given."""
        as_source = getattr(input_format, "as_source", None)
        if not callable(as_source):
            raise NotImplementedError(
                "StreamExecutionEnvironment.create_input(): input formats other than "
                f"AvroInputFormat are not supported yet (issue #17), got {input_format!r}; "
                "use from_source")
        produced = type_info if type_info is not None else input_format.get_produced_type()
        return self.from_source(as_source(), WatermarkStrategy.no_watermarks(),
                                "Custom File Source", produced)

    # -- building and submitting ------------------------------------------------------------

    def _job_name(self, job_name: str | None) -> str:
        return job_name or self._configuration.get(execution.NAME) or DEFAULT_JOB_NAME

    def get_stream_graph(self, job_name: str | None = None,
                         clear_transformations: bool = False) -> StreamGraph:
        """The validated stream graph of everything defined so far (internal: used by
        ``execute`` and by tests)."""
        self._check_open("execute()")
        use_cached_results(self._known.values())
        transformations = reachable(self._transformations, self._known)
        if not transformations:
            raise EmptyJobError()
        explicit_max = self.get_max_parallelism()
        graph = build_stream_graph(transformations, JobSettings(
            job_name=self._job_name(job_name), default_parallelism=self.get_parallelism(),
            max_parallelism=None if explicit_max == -1 else explicit_max,
            chaining_enabled=self.is_chaining_enabled(),
            runtime_mode=self._configuration.get(execution.RUNTIME_MODE),
            buffer_timeout_ms=self.get_buffer_timeout(),
            configuration=Configuration(self._configuration),
            checkpoint_config=CheckpointConfig(Configuration(self._configuration)),
        ))
        graph.validate()
        if clear_transformations:
            self._transformations.clear()
        return graph

    def execute(self, job_name: str | None = None) -> JobExecutionResult:
        """Run the job and wait for it to finish."""
        graph = self.get_stream_graph(job_name, clear_transformations=True)
        return load_executor().execute(graph, Configuration(self._configuration), graph.job_name)

    def execute_async(self, job_name: str | None = None) -> JobClient:
        """Submit the job and return at once with a client for it."""
        graph = self.get_stream_graph(job_name, clear_transformations=True)
        return load_executor().execute_async(graph, Configuration(self._configuration),
                                             graph.job_name)

    def _execute_and_collect(self, collect_id: str, job_name: str | None) -> CloseableIterator:
        graph = self.get_stream_graph(job_name, clear_transformations=True)
        return load_executor().execute_and_collect(
            graph, Configuration(self._configuration), graph.job_name, collect_id)

    def get_execution_plan(self) -> str:
        """The stream graph as JSON, in the shape of Flink's execution plan."""
        graph = self.get_stream_graph()
        nodes = []
        for node in graph.topological_order():
            entry: dict[str, Any] = {
                "id": node.id, "type": node.name,
                "pact": "Data Source" if node.is_source else (
                    "Data Sink" if not graph.out_edges(node.id) else "Operator"),
                "contents": node.name, "parallelism": graph.parallelism_of(node.id),
            }
            predecessors = [{"id": edge.source_id,
                             "ship_strategy": graph.resolved_partitioner(edge).kind.name,
                             "side": "second"} for edge in graph.in_edges(node.id)]
            if predecessors:
                entry["predecessors"] = predecessors
            nodes.append(entry)
        return json.dumps({"nodes": nodes}, indent=2)

    # -- not supported yet ------------------------------------------------------------------

    enable_changelog_state_backend = unsupported("the changelog state backend", "#3")
    add_default_kryo_serializer = unsupported("Kryo serializers (records are Python objects)")
    register_type_with_kryo_serializer = unsupported("Kryo serializers (records are Python "
                                                     "objects)")
    register_type = unsupported("Java type registration (records are Python objects)")
    def add_python_file(self, file_path: str) -> None:
        """Adds a Python file, a directory, a zip/egg or a wheel to the job's files (PyFlink's
        ``add_python_file``; appends to ``python.files``). They travel to every TaskManager
        through Spark, where the job's functions import from them as written, resolved by
        ``classloader.resolve-order`` (docs/usercode.md). Here, on the driver, the entry also
        joins ``sys.path`` (a file's directory, a directory or zip itself), so the job's
        main program can import from it too."""
        path = os.path.abspath(file_path)
        if not os.path.exists(path):
            raise FileNotFoundError(f"add_python_file: {file_path} does not exist")
        current = self._configuration.get(python_options.FILES)
        entries = [e for e in (current or "").split(",") if e]
        if path not in entries:
            self._configuration.set(python_options.FILES, ",".join([*entries, path]))
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        if path.endswith((".zip", ".whl", ".egg")):
            directory = path
        if directory not in sys.path:
            sys.path.insert(0, directory)

    def set_python_requirements(
        self, requirements_file_path: str, requirements_cache_dir: str | None = None,
    ) -> None:
        """PyFlink's ``set_python_requirements``: every host running the job's TaskManagers
        pip-installs ``requirements_file_path`` before loading the job (once per host and
        content); with ``requirements_cache_dir`` (packages fetched beforehand with
        ``pip download -d DIR -r FILE``) offline from there. Sets ``python.requirements``."""
        path = os.path.abspath(requirements_file_path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"set_python_requirements: {requirements_file_path} is not "
                                    "a file")
        value = path
        if requirements_cache_dir is not None:
            cache = os.path.abspath(requirements_cache_dir)
            if not os.path.isdir(cache):
                raise FileNotFoundError(f"set_python_requirements: {requirements_cache_dir} is "
                                        "not a directory")
            value += "#" + cache
        self._configuration.set(python_options.REQUIREMENTS, value)

    def add_python_archive(self, archive_path: str, target_dir: str | None = None) -> None:
        """PyFlink's ``add_python_archive``: the zip or tar archive is unpacked on every host
        running the job's TaskManagers into ``target_dir`` (default: the archive's file name)
        of their working directory, so the job's functions open its files by relative path
        (``open("target_dir/data.txt")``), as on PyFlink. Appends to ``python.archives``."""
        path = os.path.abspath(archive_path)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"add_python_archive: {archive_path} is not a file")
        entry = path if target_dir is None else f"{path}#{target_dir}"
        archives: list[str] = self._configuration.get(python_options.ARCHIVES)
        self._configuration.set(python_options.ARCHIVES, [*archives, entry])

    set_python_executable = unsupported("choosing the Python executable (use Spark's "
                                        "spark.pyspark.python)", "#4")
    add_jars = unsupported("JAR files (flintlock runs no JVM operators)")
    add_classpaths = unsupported("JVM classpaths (flintlock runs no JVM operators)")
    get_default_local_parallelism = unsupported("the local-environment default parallelism "
                                                "(use parallelism.default)")
    set_default_local_parallelism = unsupported("the local-environment default parallelism "
                                                "(use parallelism.default)")
    register_cached_file = unsupported("the distributed cache")
