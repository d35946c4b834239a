"""PyFlink's ``pyflink.common.completable_future``: ``CompletableFuture`` (defined with the job
client, ``flintlock.common.job_client``)."""

from flintlock.common.job_client import CompletableFuture

__all__ = ["CompletableFuture"]
