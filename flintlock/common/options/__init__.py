"""Every configuration option flintlock knows, one module per area.

Each module defines its options with ``config_option.ConfigOption``; importing this package
registers all of them (``option_lookup.all_options`` imports it). Keys are Flink's where Flink
has the setting; flintlock-only settings live under ``flintlock.``.
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
    table,
    table_optimizer,
    table_udf,
)
