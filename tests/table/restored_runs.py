"""A run of an operator test's steps across a snapshot: half the steps into an operator on a
fresh heap backend, that backend's snapshot restored into a second operator, the other half
into it (issue 32's batch-path tests, which compare such runs of two operators)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.runtime.state.heap import HeapKeyedStateBackend
from flintlock.runtime.state.keygroups import KeyGroupRange
from flintlock.testing.operators import MemoryStateWriter


def run_restored(open_on: Callable[[HeapKeyedStateBackend, bool], tuple[Any, Any]],
                 feed: Callable[[Any, list[Any]], None], steps: list[Any]
                 ) -> tuple[Any, Any]:
    """``open_on(backend, restored) -> (operator, output)``; the two operators' outputs."""
    backend = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    operator, out = open_on(backend, False)
    half = len(steps) // 2
    feed(operator, steps[:half])
    writer = MemoryStateWriter()
    handle = backend.snapshot().write(writer, "keyed")
    restored = HeapKeyedStateBackend(KeyGroupRange(0, 127), 128)
    restored.restore([handle], writer.read)
    second, second_out = open_on(restored, True)
    feed(second, steps[half:])
    return out, second_out
