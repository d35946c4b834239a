"""Checkpointing (DESIGN.md §5): barriers and their handlers, the checkpoint coordinator,
pending and completed checkpoints, checkpoint storage and the completed-checkpoint store.

May import ``flintlock.common`` and other ``flintlock.runtime`` packages except ``tasks``.
"""
