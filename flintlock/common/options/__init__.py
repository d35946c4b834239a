"""Every configuration option flintlock knows, one module per area.

Importing this package registers all of them (``flintlock.common.config.all_options``). Keys are
Flink's where Flink has the setting; flintlock-only settings live under ``flintlock.``.
"""

from flintlock.common.options import (  # noqa: F401  (imported to register the options)
    checkpointing,
    cluster,
    execution,
    metrics,
    network,
    python,
    restart,
    security,
    state,
)
