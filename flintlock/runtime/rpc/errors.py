"""Typed errors of the control-plane RPC (STYLE.md §5).

We-closed-it (``RpcClosedError``) is kept apart from the-peer-failed
(``ConnectionLostError``, with the cause in ``__cause__`` where there is one). Every error keeps
its constructor arguments in ``args`` so it survives pickling.
"""

from __future__ import annotations

from flintlock.common.errors import FlintlockError


class RpcError(FlintlockError):
    """Base class of control-plane errors."""


class MalformedFrameError(RpcError):
    """Bytes that are not a valid frame (bad magic, kind, size or payload); the connection that
    sent them is closed, the server keeps serving the others."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail

    def __str__(self) -> str:
        return f"malformed RPC frame: {self.detail}"


class FrameTooLargeError(MalformedFrameError):
    """A frame's length field exceeds the limit; refused before anything is allocated."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"frame of {size} bytes exceeds the limit of {limit} bytes")
        self.args = (size, limit)
        self.size = size
        self.limit = limit


class ConnectionLostError(RpcError, ConnectionError):
    """The peer closed the connection or it failed; pending calls fail with this."""

    def __init__(self, peer: str, detail: str) -> None:
        super().__init__(peer, detail)
        self.peer = peer
        self.detail = detail

    def __str__(self) -> str:
        return f"RPC connection to {self.peer} lost: {self.detail}"


class RpcClosedError(RpcError):
    """This side closed the connection (or the server); no more messages can be sent."""

    def __init__(self, peer: str) -> None:
        super().__init__(peer)
        self.peer = peer

    def __str__(self) -> str:
        return f"RPC connection to {self.peer} is closed"


class RpcTimeoutError(RpcError, TimeoutError):
    """No reply to a call within its timeout (the connection itself stays open)."""

    def __init__(self, message_type: str, peer: str, timeout_s: float) -> None:
        super().__init__(message_type, peer, timeout_s)
        self.message_type = message_type
        self.peer = peer
        self.timeout_s = timeout_s

    def __str__(self) -> str:
        return f"no reply to {self.message_type} from {self.peer} within {self.timeout_s:g} s"


class RemoteCallError(RpcError):
    """The remote handler raised an exception that could not be shipped back as itself."""

    def __init__(self, type_name: str, message: str, remote_traceback: str) -> None:
        super().__init__(type_name, message, remote_traceback)
        self.type_name = type_name
        self.message = message
        self.remote_traceback = remote_traceback

    def __str__(self) -> str:
        return f"remote {self.type_name}: {self.message}"


class RemoteTraceback(RpcError):
    """Attached as ``__cause__`` of an exception re-raised from a remote handler, so the
    printed traceback shows where it happened on the other side."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return f"\n\nremote traceback:\n{self.text}"


class UnknownMessageError(RpcError):
    """A message type no handler is registered for."""

    def __init__(self, type_name: str) -> None:
        super().__init__(type_name)
        self.type_name = type_name

    def __str__(self) -> str:
        return f"no RPC handler for message type {self.type_name}"
