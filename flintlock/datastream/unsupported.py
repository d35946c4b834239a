"""``unsupported(feature)``: a class attribute standing for a PyFlink method flintlock does not
implement yet. Calling it raises ``NotImplementedError`` naming the class, the method and the
missing feature, so a ported job fails with a clear message instead of ``AttributeError``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn


class unsupported:
    """Descriptor: ``window_all = unsupported("windows")``."""

    def __init__(self, feature: str, issue: str = "#5") -> None:
        self.feature = feature
        self.issue = issue
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: object, owner: type | None = None) -> Callable[..., NoReturn]:
        owner_name = (owner or type(instance)).__name__

        def raise_unsupported(*args: Any, **kwargs: Any) -> NoReturn:
            raise NotImplementedError(
                f"{owner_name}.{self.name}(): {self.feature} is not supported yet "
                f"(issue {self.issue})")

        raise_unsupported.__name__ = self.name
        return raise_unsupported
