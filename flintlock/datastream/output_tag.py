"""``OutputTag``: PyFlink's name for a side output. Declared so jobs import; side outputs
themselves (``ctx.output``, ``get_side_output``) are not supported yet (issue #5)."""

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
