"""Settings every operator accepts, shared by ``DataStream`` and ``DataStreamSink``: name,
uid, parallelism, max parallelism, buffer timeout, chaining, slot sharing group.

Each call validates its value at once (an error names the operator and the bound) and writes
it into the operator's ``Transformation``; the stream graph is built from those later. A stream
without its own operator (the result of a partitioning call or ``union``) raises
``NotAnOperatorError``. Owned by the user's thread while the job is built.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flintlock.datastream.errors import InvalidOperatorSettingError, NotAnOperatorError
from flintlock.datastream.transformations import Transformation
from flintlock.graph.stream_graph import UPPER_BOUND_MAX_PARALLELISM, ChainingStrategy

if TYPE_CHECKING:
    from flintlock.datastream.stream_execution_environment import StreamExecutionEnvironment


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class OperatorSettings:
    """Mixin: the settings of the operator that produces this stream (or of this sink)."""

    def __init__(self, env: StreamExecutionEnvironment, transformation: Transformation | None,
                 origin: str) -> None:
        self._env = env
        self._transformation = transformation
        self._origin = origin

    def _operator(self, method: str) -> Transformation:
        self._env._check_open(f"{method}()")
        if self._transformation is None:
            raise NotAnOperatorError(method, self._origin)
        return self._transformation

    def _invalid(self, setting: str, value: Any, expected: str) -> InvalidOperatorSettingError:
        name = self._transformation.name if self._transformation is not None else "?"
        return InvalidOperatorSettingError(name, setting, repr(value), expected)

    def get_name(self) -> str:
        return self._operator("get_name").name

    def name(self, name: str) -> Any:
        operator = self._operator("name")
        if not isinstance(name, str) or not name:
            raise self._invalid("name", name, "a name is a non-empty str")
        operator.name = name
        return self

    def uid(self, uid: str) -> Any:
        """A stable id that matches this operator's state across job versions."""
        operator = self._operator("uid")
        if not isinstance(uid, str) or not uid:
            raise self._invalid("uid", uid, "a uid is a non-empty str")
        operator.uid = uid
        return self

    def set_description(self, description: str) -> Any:
        self._operator("set_description").description = str(description)
        return self

    def set_parallelism(self, parallelism: int) -> Any:
        operator = self._operator("set_parallelism")
        if not _is_int(parallelism) or parallelism < 1:
            raise self._invalid("parallelism", parallelism, "it must be an int >= 1")
        if operator.non_parallel and parallelism != 1:
            raise self._invalid("parallelism", parallelism,
                                "this operator is non-parallel: its parallelism must be 1")
        operator.parallelism = parallelism
        return self

    def set_max_parallelism(self, max_parallelism: int) -> Any:
        operator = self._operator("set_max_parallelism")
        if not _is_int(max_parallelism) or not (
                1 <= max_parallelism <= UPPER_BOUND_MAX_PARALLELISM):
            raise self._invalid("max parallelism", max_parallelism,
                                f"it must be an int in [1, {UPPER_BOUND_MAX_PARALLELISM}]")
        if operator.non_parallel and max_parallelism != 1:
            raise self._invalid("max parallelism", max_parallelism,
                                "this operator is non-parallel: its max parallelism must be 1")
        operator.max_parallelism = max_parallelism
        return self

    def force_non_parallel(self) -> Any:
        """Parallelism and max parallelism 1, for good."""
        operator = self._operator("force_non_parallel")
        operator.parallelism = 1
        operator.max_parallelism = 1
        operator.non_parallel = True
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> Any:
        """How long this operator's output may wait in a partly filled buffer: 0 flushes
        every record, N milliseconds, and -1 (as in PyFlink) means the job's default
        (``execution.buffer-timeout``)."""
        operator = self._operator("set_buffer_timeout")
        if not _is_int(timeout_millis) or timeout_millis < -1:
            raise self._invalid("buffer timeout", timeout_millis, "it must be an int >= -1")
        operator.buffer_timeout_ms = None if timeout_millis == -1 else timeout_millis
        return self

    def start_new_chain(self) -> Any:
        """Begin a new operator chain here (never chained to the predecessor)."""
        self._operator("start_new_chain").chaining = ChainingStrategy.HEAD
        return self

    def disable_chaining(self) -> Any:
        """Never chain this operator with its neighbours."""
        self._operator("disable_chaining").chaining = ChainingStrategy.NEVER
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> Any:
        """Put the operator into a named slot sharing group (a str, or an object with
        ``get_name()`` such as PyFlink's ``SlotSharingGroup``; resources are ignored)."""
        operator = self._operator("slot_sharing_group")
        name = slot_sharing_group
        if not isinstance(name, str):
            getter = getattr(slot_sharing_group, "get_name", None)
            name = getter() if callable(getter) else None
        if not isinstance(name, str) or not name:
            raise self._invalid("slot sharing group", slot_sharing_group,
                                "it must be a non-empty str or have get_name()")
        operator.slot_sharing_group = name
        return self
