"""State-backed data views of the bundled Python aggregation (``bundled_agg``), as PyFlink
keeps them: each ``ListView`` / ``MapView`` field of an aggregate function's accumulator is a
keyed ``ListState`` / ``MapState`` of its own, named ``agg<call index>$<field>`` (the field's
name in a named ``Row`` accumulator, else ``f<position>``), so a view is never read or written
whole. The key's value state holds the accumulator with ``None`` where its views are.

The views are found once, in ``open``, in an accumulator ``create_accumulator`` makes: a
top-level field of a ``Row``, list or tuple accumulator whose class has a
``_flintlock_view_kind`` of "list" or "map" (``flintlock.table.data_view``; this package never
imports ``flintlock.table``). One bound view per view field serves every key: its state follows
the backend's current key. Checkpointed and rescaled with the key like any keyed state.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flintlock.common.state import ListStateDescriptor, MapStateDescriptor
from flintlock.common.types import Row, row_of

_KINDS = ("list", "map")


def _fields(accumulator: Any) -> list[Any] | None:
    """An accumulator's top-level fields (None: it has none a view could be in)."""
    if isinstance(accumulator, Row):
        return accumulator._values
    if isinstance(accumulator, (list, tuple)):
        return list(accumulator)
    return None


def _replaced(accumulator: Any, replacements: dict[int, Any]) -> Any:
    """A copy of ``accumulator`` with the fields at ``replacements``' positions replaced."""
    values = list(_fields(accumulator) or ())
    for position, value in replacements.items():
        values[position] = value
    if isinstance(accumulator, Row):
        return row_of(values, accumulator._row_kind, accumulator._fields)
    return tuple(values) if isinstance(accumulator, tuple) else values


def _field_name(accumulator: Any, position: int) -> str:
    names = accumulator._fields if isinstance(accumulator, Row) else None
    return names[position] if names else f"f{position}"


def _bound_view(runtime_context: Any, template: Any, name: str) -> Any:
    kind = type(template)._flintlock_view_kind
    if kind == "list":
        state = runtime_context.get_list_state(ListStateDescriptor(name, None))
    else:
        state = runtime_context.get_map_state(MapStateDescriptor(name, None, None))
    view = type(template)()
    view._flintlock_bind(state)
    return view


class AccumulatorViews:
    """The bound views of every call (``bind``; None when no accumulator has a view)."""

    def __init__(self, views: dict[int, dict[int, Any]]) -> None:
        self._views = views

    @staticmethod
    def bind(runtime_context: Any, functions: Sequence[Any]) -> AccumulatorViews | None:
        views: dict[int, dict[int, Any]] = {}
        for index, function in enumerate(functions):
            template = function.create_accumulator()
            for position, value in enumerate(_fields(template) or ()):
                if getattr(type(value), "_flintlock_view_kind", None) in _KINDS:
                    name = f"agg{index}${_field_name(template, position)}"
                    views.setdefault(index, {})[position] = _bound_view(
                        runtime_context, value, name)
        return AccumulatorViews(views) if views else None

    def attach(self, accumulators: list[Any]) -> list[Any]:
        """The stored accumulators with the bound views in their view fields."""
        out = list(accumulators)
        for index, views in self._views.items():
            out[index] = _replaced(out[index], views)
        return out

    def adopt(self, accumulators: list[Any]) -> list[Any]:
        """New accumulators (``create_accumulator``'s) bound to the current key's (empty)
        states; whatever their in-memory views hold is written to the states."""
        self.clear()
        for index, views in self._views.items():
            fields = _fields(accumulators[index]) or []
            for position, view in views.items():
                fresh = fields[position]
                if view._flintlock_view_kind == "list":
                    view.add_all(list(fresh.get()))
                else:
                    view.put_all(dict(fresh.items()))
        return self.attach(accumulators)

    def detach(self, accumulators: list[Any]) -> list[Any]:
        """The accumulators as stored: ``None`` in their view fields."""
        out = list(accumulators)
        for index, views in self._views.items():
            out[index] = _replaced(out[index], dict.fromkeys(views))
        return out

    def clear(self) -> None:
        """Empties every view's state for the current key."""
        for views in self._views.values():
            for view in views.values():
                view.clear()
