"""Handing the batches of collect sinks (``execute_and_collect``) to the caller, each once.

A collect sink's batch carries a token (subtask, sequence) when it may be sent again (a
TaskManager resends what a checkpoint covers after a restore); a token already delivered is
dropped, so the caller sees every batch once.

Thread ownership: the JobManager thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.runtime import messages as msg


class CollectDelivery:
    def __init__(self, on_collect: Callable[[str, list[Any]], None] | None) -> None:
        self._on_collect = on_collect
        self._delivered: set[tuple[str, int, int]] = set()

    def deliver(self, message: msg.CollectBatch) -> None:
        if message.token is not None:
            key = (message.collect_id, *message.token)
            if key in self._delivered:
                return
            self._delivered.add(key)
        if self._on_collect is not None:
            self._on_collect(message.collect_id, message.records)
