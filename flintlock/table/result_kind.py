"""PyFlink's ``ResultKind``: whether a statement's result is a plain ``OK`` or rows."""

import enum

__all__ = ["ResultKind"]


class ResultKind(enum.Enum):
    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1
