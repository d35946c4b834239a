"""PyFlink's ``pyflink.datastream.timerservice``: ``TimerService`` (defined with the process
functions, ``flintlock.datastream.functions``)."""

from flintlock.datastream.functions import TimerService

__all__ = ["TimerService"]
