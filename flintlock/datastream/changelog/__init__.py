"""Changelog-aware relational operators for the Table API and SQL (issue 28): group
aggregation with retraction and its built-in aggregate functions, regular joins, Top-N and
deduplication, as keyed process functions over ``Row``s carrying a ``RowKind``. They emit
exactly the changelog Flink 2.x's operators emit without mini-batch, and keep all their state
in keyed state (checkpointed, rescalable, exactly-once).

May import ``flintlock.common`` and ``flintlock.datastream``; never ``flintlock.table`` (the
planner above instantiates these operators) nor the runtime. docs/table.md, "Changelog
operators", lists every operator's constructor arguments.
"""

from flintlock.datastream.changelog.aggregates import (
    Avg,
    Count,
    Count1,
    FirstValue,
    LastValue,
    Max,
    Min,
    RetractionNotSupportedError,
    Sum,
    Sum0,
)
from flintlock.datastream.changelog.aggregates_retract import (
    Collect,
    FirstValueWithRetract,
    LastValueWithRetract,
    ListAgg,
    MaxWithRetract,
    MinWithRetract,
)
from flintlock.datastream.changelog.dedup_rowtime import (
    RowTimeKeepFirstRowFunction,
    RowTimeKeepLastRowFunction,
)
from flintlock.datastream.changelog.deduplicate import (
    ChangelogNormalizeFunction,
    KeepFirstRowFunction,
    KeepLastRowFunction,
)
from flintlock.datastream.changelog.errors import (
    ChangelogError,
    InvalidOperatorArgumentError,
    NotInsertOnlyError,
    UpsertInputError,
)
from flintlock.datastream.changelog.group_agg import (
    AggregateCall,
    GlobalGroupAggFunction,
    GroupAggFunction,
)
from flintlock.datastream.changelog.join import JoinType, StreamingJoinFunction
from flintlock.datastream.changelog.rows import key_selector
from flintlock.datastream.changelog.sort_keys import sort_key_selector
from flintlock.datastream.changelog.topn_append import AppendOnlyTopNFunction
from flintlock.datastream.changelog.topn_retract import RetractableTopNFunction
from flintlock.datastream.changelog.topn_update import UpdatableTopNFunction
from flintlock.datastream.changelog.upsert_materializer import SinkUpsertMaterializer

__all__ = [
    "AggregateCall", "AppendOnlyTopNFunction", "Avg", "ChangelogError",
    "ChangelogNormalizeFunction", "Collect", "Count", "Count1", "FirstValue",
    "FirstValueWithRetract", "GlobalGroupAggFunction", "GroupAggFunction",
    "InvalidOperatorArgumentError", "JoinType", "KeepFirstRowFunction", "KeepLastRowFunction",
    "LastValue", "LastValueWithRetract", "ListAgg", "Max", "MaxWithRetract", "Min",
    "MinWithRetract", "NotInsertOnlyError", "RetractableTopNFunction",
    "RetractionNotSupportedError", "RowTimeKeepFirstRowFunction", "RowTimeKeepLastRowFunction",
    "SinkUpsertMaterializer", "StreamingJoinFunction", "Sum", "Sum0", "UpdatableTopNFunction",
    "UpsertInputError", "key_selector", "sort_key_selector",
]
