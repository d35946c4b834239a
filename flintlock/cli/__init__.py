"""The ``flintlock`` command line (docs/cli.md).

``main`` parses and dispatches; ``run`` runs job scripts; ``jobs`` holds ``list``, ``cancel``,
``savepoint`` and ``stop``, which reach running jobs through ``client`` (job files and the
REST endpoint of ``flintlock.runtime.rest``); ``errors`` is the one error type shown to users.

May import every other flintlock package; nothing imports it.
"""
