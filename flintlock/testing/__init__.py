"""A test kit shipped with flintlock: clocks, in-memory transport, failures on cue, gates that
hold a job mid-stream (``gates``), bounded waits (``waiting``), recordings and a collecting
sink (``recording``), partitions and gates wired as a TaskManager wires them (``exchange``).
See docs/internals/testing.md."""
