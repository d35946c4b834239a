"""Stable operator ids: how state in a checkpoint finds its operator again after a restart.

A checkpoint stores each operator's state under its operator id, and a restored job looks its
state up by the same id, so the id must not change when the same program is built again, nor
when only parallelism changes. As in Flink:

* an operator with a ``uid`` gets an id hashed from that uid alone, so it keeps its state even
  if the rest of the topology changes (the robust way, recommended for every stateful one);
* an operator without one gets an id hashed from its position in the topological order and
  the ids of its inputs, so the same program yields the same ids, but inserting or removing an
  operator upstream changes them.

Names and parallelism are deliberately not part of the hash. A job vertex's id is its chain
head's operator id. Pure functions; safe from any thread.
"""

from __future__ import annotations

import hashlib

from flintlock.graph.stream_graph import StreamGraph


def _digest(material: str) -> str:
    return hashlib.sha256(material.encode("utf-8")).hexdigest()[:32]


def uid_hash(uid: str) -> str:
    """The operator id of an operator whose uid is ``uid``."""
    return _digest(f"uid\x00{uid}")


def operator_ids(graph: StreamGraph) -> dict[int, str]:
    """Stream node id -> stable operator id (32 hex digits) for every node of ``graph``."""
    ids: dict[int, str] = {}
    for position, node in enumerate(graph.topological_order()):
        if node.uid is not None:
            ids[node.id] = uid_hash(node.uid)
            continue
        inputs = sorted(
            (edge.input_index, ids[edge.source_id]) for edge in graph.in_edges(node.id)
        )
        material = f"auto\x00{position}\x00" + "\x00".join(f"{i}:{h}" for i, h in inputs)
        ids[node.id] = _digest(material)
    return ids
