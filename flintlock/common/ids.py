"""Identifiers shared by every layer.

Plain ``NewType``s over ``int``/``str`` where the id is a number or a name, so they cost nothing
at run time; small frozen dataclasses where an id has parts (a result partition is named by its
intermediate data set and its producing subtask). New random ids come from ``new_id`` with an
injectable ``random.Random`` so tests stay deterministic.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import NewType

JobId = NewType("JobId", str)
JobVertexId = NewType("JobVertexId", str)
IntermediateDataSetId = NewType("IntermediateDataSetId", str)
ExecutionAttemptId = NewType("ExecutionAttemptId", str)
TaskManagerId = NewType("TaskManagerId", str)
CheckpointId = NewType("CheckpointId", int)
NO_CHECKPOINT = CheckpointId(0)
"""Before the first checkpoint: ids start at 1, so every real one is greater."""
NOT_A_CHECKPOINT = CheckpointId(-1)
"""No checkpoint at all: what a barrier handler reports before it saw any barrier, and the id
recorded for a snapshot taken outside any checkpoint (``snapshot(None)``)."""
SubtaskIndex = NewType("SubtaskIndex", int)
ChannelIndex = NewType("ChannelIndex", int)
KeyGroup = NewType("KeyGroup", int)


def new_id(rng: random.Random | None = None) -> str:
    """A 32-hex-digit random id, like Flink's AbstractID printed form."""
    return f"{(rng or random.SystemRandom()).getrandbits(128):032x}"


@dataclass(frozen=True, slots=True)
class ResultPartitionId:
    """One subtask's output for one intermediate data set (one producer, many subpartitions)."""

    data_set: IntermediateDataSetId
    producer_subtask: SubtaskIndex
    attempt: int = 0

    def __str__(self) -> str:
        return f"{self.data_set}#{self.producer_subtask}.{self.attempt}"


@dataclass(frozen=True, slots=True)
class InputChannelId:
    """Names one consumer channel: the consuming subtask's gate and the channel index in it."""

    consumer_vertex: JobVertexId
    consumer_subtask: SubtaskIndex
    gate_index: int
    channel_index: ChannelIndex
