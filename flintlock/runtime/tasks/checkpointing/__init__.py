"""The worker side of checkpoints: one I/O-free state machine per subtask (issue 29).

- ``machine``: ``SubtaskCheckpointMachine``, the one owner of a checkpoint's life in a subtask
  (``handle(event) -> list[Command]``);
- ``events`` / ``commands``: what it is told and what it tells its task to do;
- ``aligner``, ``tracker``, ``channels``, ``actions``, ``handlers``: the barrier handlers it
  holds for its input gate (exactly-once alignment, unaligned and alternating; at-least-once
  tracking), each an I/O-free core of its own.

May import ``flintlock.common``, ``runtime.network.barriers`` and ``runtime.checkpoint.failure``
only: no sockets, threads, timers or files. ``tasks/checkpoint_commands`` carries the commands
out; ``runtime/checkpoint`` keeps the driver side (the coordinator) and the storage formats.
"""
