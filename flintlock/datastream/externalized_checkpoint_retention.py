"""PyFlink's ``pyflink.datastream.externalized_checkpoint_retention``:
``ExternalizedCheckpointRetention`` (defined in ``flintlock.common.checkpointing``)."""

from flintlock.common.checkpointing import ExternalizedCheckpointRetention

__all__ = ["ExternalizedCheckpointRetention"]
