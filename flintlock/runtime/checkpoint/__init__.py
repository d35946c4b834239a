"""Checkpointing (DESIGN.md §5): the barrier handlers (the barriers themselves are in-band
events of ``runtime.network.barriers``), the checkpoint coordinator,
pending and completed checkpoints, checkpoint storage and the completed-checkpoint store.

May import ``flintlock.common`` and other ``flintlock.runtime`` packages except ``tasks``.
"""
