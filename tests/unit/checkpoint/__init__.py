"""Unit tests of checkpointing: barrier handlers, channel state, the coordinator."""
