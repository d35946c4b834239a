"""``OutputTag``: PyFlink's name for a side output. A process function emits to it by
yielding ``(tag, value)`` (PyFlink's idiom) or with ``ctx.output(tag, value)``;
``DataStream.get_side_output(tag)`` is the stream of those values (typed by the tag's
``type_info`` when given). A tag nobody reads drops its values, as in Flink.

A tag is an immutable value (name and type); it holds no state and belongs to no thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flintlock.common.typeinfo import TypeInformation


@dataclass(frozen=True)
class OutputTag:
    tag_id: str
    type_info: TypeInformation | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.tag_id, str) or not self.tag_id:
            raise ValueError(f"an OutputTag needs a non-empty id, got {self.tag_id!r}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (OutputTag, (self.tag_id, self.type_info))
