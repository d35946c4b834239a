"""PyFlink's ``ResultKind``: whether a statement's result is a plain ``OK`` or rows. As in
PyFlink the kinds are the ints 0 and 1 (a program printing one prints the number)."""

__all__ = ["ResultKind"]


class ResultKind:
    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1
