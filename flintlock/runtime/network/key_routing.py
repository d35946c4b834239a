"""Routing a batch by key: the keyed record writer's per-record loop, in C where built.

``route_by_key(records, key_of, channels, on_miss, targets, stamps, stamp_targets)`` calls
the user's key selector ``key_of`` once per record, finds the key's channel in the writer's
key cache ``channels`` (key -> channel; ``on_miss(key)`` gives the channel of a key not in it,
or of one that cannot be hashed, and may fill the cache), and appends the record to
``targets[channel]`` — and, when ``stamps`` is a list, the record's timestamp to
``stamp_targets[channel]``. Records keep their order within each channel.

Two implementations with the same behaviour: ``_speedups.route_by_key`` (one user call per
record and no interpreted code around it) and ``route_by_key_python`` below, used where the
accelerator was not built (``flintlock.common.speedups``). Both check the lengths of
``records`` and ``stamps`` before the first call, so a mismatch is a ``ValueError`` with no
record routed. ``tests/unit/network/test_key_routing.py`` holds the two equal.

Pure functions on the caller's lists: the writer's task thread owns them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flintlock.common.speedups import accelerator

RouteByKey = Callable[
    [list[Any], Callable[[Any], Any], dict[Any, int], Callable[[Any], int], list[list[Any]],
     list[int] | None, list[list[int]] | None], None]


def route_by_key_python(records: list[Any], key_of: Callable[[Any], Any],
                        channels: dict[Any, int], on_miss: Callable[[Any], int],
                        targets: list[list[Any]], stamps: list[int] | None,
                        stamp_targets: list[list[int]] | None) -> None:
    """The Python twin of ``_speedups.route_by_key`` (see the module docstring)."""
    if stamps is None:
        for record in records:
            key = key_of(record)
            try:
                channel = channels[key]
            except (KeyError, TypeError):  # not cached, or unhashable
                channel = on_miss(key)
            targets[channel].append(record)
        return
    if stamp_targets is None or len(stamps) != len(records) or len(stamp_targets) != len(
            targets):
        raise ValueError("route_by_key: values and timestamps differ in length")
    for record, stamp in zip(records, stamps, strict=True):
        key = key_of(record)
        try:
            channel = channels[key]
        except (KeyError, TypeError):
            channel = on_miss(key)
        targets[channel].append(record)
        stamp_targets[channel].append(stamp)


route_by_key: RouteByKey = (route_by_key_python if accelerator is None
                            else accelerator.route_by_key)
"""The implementation in use: the accelerator's, else the Python twin."""
