"""The base of every type description: ``TypeInformation`` with validation (a compiled
predicate, a detailed diagnosis on failure), implicit conversion hooks and the serializer
choice, plus ``RecordTypeMismatchError`` and ``SerializerKind``.

The concrete types and PyFlink's ``Types`` factories are in ``flintlock.common.typeinfo``,
which re-exports these names; see its docstring for the rules. A type object compiles its
predicate on first use and keeps it (never pickled); otherwise immutable and safe to share
between threads.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

from flintlock.common.errors import FlintlockError


class RecordTypeMismatchError(FlintlockError, TypeError):
    """A record does not match the type its operator declared."""

    def __init__(self, operator: str, declared: str, value: str, detail: str) -> None:
        super().__init__(operator, declared, value, detail)
        self.operator = operator
        self.declared = declared
        self.value = value
        self.detail = detail

    def __str__(self) -> str:
        return (
            f"operator {self.operator!r} declared output type {self.declared} but produced "
            f"{self.value}: {self.detail}"
        )


class SerializerKind(enum.Enum):
    """Which serializer fits the values of a type (see the module docstring)."""

    PICKLE = "pickle"
    CLOUDPICKLE = "cloudpickle"


def _describe(value: Any) -> str:
    text = repr(value)
    if len(text) > 200:
        text = text[:197] + "..."
    return f"{text} ({type(value).__name__})"


class TypeInformation:
    """Base of every type; subclasses implement ``_problem`` and ``__repr__``, and may
    override ``_compile`` with a faster predicate of the same meaning."""

    __slots__ = ("_compiled",)
    _compiled: Callable[[Any], bool]

    @property
    def serializer_kind(self) -> SerializerKind:
        return SerializerKind.PICKLE

    def _problem(self, value: Any) -> str | None:
        """Why ``value`` is not of this type (``None`` if it is); ``value`` is not None."""
        raise NotImplementedError

    def _problem_or_null(self, value: Any, nullable: bool) -> str | None:
        if value is None:
            return None if nullable else f"null is not allowed for {self!r}"
        return self._problem(value)

    def _compile(self) -> Callable[[Any], bool]:
        """A predicate true exactly when ``_problem_or_null(value, False)`` is None."""
        problem = self._problem
        return lambda value: value is not None and problem(value) is None

    def predicate(self) -> Callable[[Any], bool]:
        """The fast membership test of this type (built once per type object)."""
        try:
            return self._compiled
        except AttributeError:
            self._compiled = self._compile()
            return self._compiled

    def is_instance(self, value: Any) -> bool:
        return self.predicate()(value)

    def validate(self, value: Any, operator_name: str = "<unnamed>") -> None:
        """Raise ``RecordTypeMismatchError`` if ``value`` is not a record of this type."""
        if not self.predicate()(value):
            self._reject(value, operator_name)

    def validator(self, operator_name: str) -> Callable[[Any], None]:
        """``validate`` bound to one operator, for the per-record path of the runtime."""
        check, reject = self.predicate(), self._reject

        def validate(value: Any) -> None:
            if not check(value):
                reject(value, operator_name)

        return validate

    def _reject(self, value: Any, operator_name: str) -> None:
        problem = self._problem_or_null(value, nullable=False) or "not a value of this type"
        raise RecordTypeMismatchError(operator_name, repr(self), _describe(value), problem)

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for klass in type(self).__mro__
                for name in getattr(klass, "__slots__", ())
                if name != "_compiled" and hasattr(self, name)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def coerce(self, value: Any) -> Any:
        """``value`` in this type's representation where PyFlink converts implicitly: a tuple,
        list or dict given for a ROW becomes a ``Row`` (with the type's field names), a list
        given for a TUPLE becomes a tuple, recursively. Anything else is returned unchanged
        (``validate`` then reports it); values that need nothing are returned as they are."""
        return value

    def need_conversion(self) -> bool:
        """Whether ``coerce`` can change a value of this type (composite types only)."""
        return False

    def to_internal_type(self, obj: Any) -> Any:
        return obj

    def from_internal_type(self, obj: Any) -> Any:
        return obj

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and repr(self) == repr(other)

    def __hash__(self) -> int:
        return hash(repr(self))

    def __str__(self) -> str:
        return repr(self)
