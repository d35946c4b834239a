"""The control plane between the JobManager (Spark driver) and the TaskManagers.

TCP connections authenticated with the job secret (``flintlock.runtime.auth``), carrying
length-prefixed frames (``frames``) of pickled messages, on symmetric connections
(``connection``) that either side may ``call`` (request/response) or ``tell`` (one-way).
``RpcServer`` is the JM's endpoint, ``RpcClient.connect`` the TM's way in, and
``MessageDispatcher`` routes messages to functions by type.

May import ``flintlock.common`` and, of the runtime, ``auth``, ``admission`` and ``liveness``
(each I/O-free or socket-level); nothing else of the runtime.
"""

from flintlock.runtime.rpc.connection import (
    RemoteFailure,
    RpcConnection,
    RpcConnectionStatistics,
    RpcHandler,
)
from flintlock.runtime.rpc.dispatch import MessageDispatcher
from flintlock.runtime.rpc.errors import (
    ConnectionLostError,
    FrameTooLargeError,
    MalformedFrameError,
    RemoteCallError,
    RemoteTraceback,
    RpcClosedError,
    RpcError,
    RpcTimeoutError,
    UnknownMessageError,
)
from flintlock.runtime.rpc.frames import DEFAULT_MAX_FRAME_SIZE, FrameDecoder
from flintlock.runtime.rpc.server import RpcClient, RpcServer

__all__ = [
    "DEFAULT_MAX_FRAME_SIZE",
    "ConnectionLostError",
    "FrameDecoder",
    "FrameTooLargeError",
    "MalformedFrameError",
    "MessageDispatcher",
    "RemoteCallError",
    "RemoteFailure",
    "RemoteTraceback",
    "RpcClient",
    "RpcClosedError",
    "RpcConnection",
    "RpcConnectionStatistics",
    "RpcError",
    "RpcHandler",
    "RpcServer",
    "RpcTimeoutError",
    "UnknownMessageError",
]
