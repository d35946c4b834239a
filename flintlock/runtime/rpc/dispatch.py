"""``MessageDispatcher``: an ``RpcHandler`` that routes each message by its type.

The JobManager and the TaskManager register one function per message class instead of writing
an ``isinstance`` ladder. An unregistered type fails the call with ``UnknownMessageError``
(a TELL of one is logged by the connection). Registration happens before the server or client
starts; afterwards the tables are only read (from dispatcher threads), so they need no lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flintlock.runtime.rpc.connection import RpcConnection
from flintlock.runtime.rpc.errors import UnknownMessageError

M = TypeVar("M")
MessageFunction = Callable[[RpcConnection, Any], object]
DisconnectFunction = Callable[[RpcConnection, BaseException | None], None]


class MessageDispatcher:
    """Maps message classes to functions ``fn(connection, message) -> reply``."""

    def __init__(self) -> None:
        self._routes: dict[type, MessageFunction] = {}
        self._disconnect_listeners: list[DisconnectFunction] = []

    def register(
        self, message_type: type[M], function: Callable[[RpcConnection, M], object]
    ) -> MessageDispatcher:
        if message_type in self._routes:
            raise ValueError(f"a function for {message_type.__qualname__} is already registered")
        self._routes[message_type] = function
        return self

    def on_disconnect(self, listener: DisconnectFunction) -> MessageDispatcher:
        self._disconnect_listeners.append(listener)
        return self

    def on_message(self, connection: RpcConnection, message: object) -> object:
        function = self._routes.get(type(message))
        if function is None:
            raise UnknownMessageError(type(message).__qualname__)
        return function(connection, message)

    def on_disconnected(self, connection: RpcConnection, cause: BaseException | None) -> None:
        for listener in self._disconnect_listeners:
            listener(connection, cause)
