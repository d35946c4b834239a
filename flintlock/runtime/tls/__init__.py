"""TLS for flintlock's connections (issue 14, docs/security.md "What TLS adds").

- ``certificates``: the per-job certificate authority and certificate made at submission,
  and the ``JobSecret`` that carries them to the TaskManagers wherever the job secret goes.
- ``contexts``: ``ssl.SSLContext`` objects for the internal planes (mutual, per-job CA) and
  for the REST endpoint and its CLI client (PEM files); ``TlsHandshakeError``.
- ``channel``: ``TlsSocket``, TLS over a plain socket through memory BIOs, safe for one
  reader thread beside sending threads and for non-blocking selector loops.
- ``accepting``: the accepting side of an internal connection (TLS, then the job-secret
  handshake) for a selector loop, and the connecting side for a blocking socket.

May import ``flintlock.common`` and ``flintlock.runtime.auth``; the data transport, the RPC
layer, the REST endpoint, the JobManager and the CLI import it. No module-level state.
"""
