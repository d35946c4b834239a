"""A PyFlink Kafka job ported to flintlock: JSON orders in, a running total per customer out.

Orders are JSON objects ``{"customer": str, "amount": long}`` on one topic; the job keeps a
running total per customer and writes ``{"customer": ..., "total": ...}`` to another topic,
exactly once (one Kafka transaction per checkpoint). The program is PyFlink's with
``pyflink`` replaced by ``flintlock`` in the imports (``build`` is the whole pipeline;
``main`` runs it against the broker named on the command line)::

    python -m flintlock.examples.kafka_orders broker:9092 orders totals

The integration tests run ``build`` against the test broker (tests/integration).
"""

from __future__ import annotations

import sys
import tempfile

from flintlock.common import Configuration, Types, WatermarkStrategy
from flintlock.datastream import CheckpointingMode, StreamExecutionEnvironment
from flintlock.datastream.connectors.kafka import (
    DeliveryGuarantee,
    KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema,
    KafkaSink,
    KafkaSource,
)
from flintlock.datastream.formats.json import (
    JsonRowDeserializationSchema,
    JsonRowSerializationSchema,
)

ORDER = Types.ROW_NAMED(["customer", "amount"], [Types.STRING(), Types.LONG()])
TOTAL = Types.ROW_NAMED(["customer", "total"], [Types.STRING(), Types.LONG()])


def build(env: StreamExecutionEnvironment, bootstrap: str, orders: str, totals: str,
          bounded: bool = False) -> None:
    builder = (KafkaSource.builder()
               .set_bootstrap_servers(bootstrap)
               .set_topics(orders)
               .set_group_id("order-totals")
               .set_starting_offsets(KafkaOffsetsInitializer.earliest())
               .set_value_only_deserializer(
                   JsonRowDeserializationSchema.builder().type_info(ORDER).build()))
    if bounded:
        builder.set_bounded(KafkaOffsetsInitializer.latest())
    sink = (KafkaSink.builder()
            .set_bootstrap_servers(bootstrap)
            .set_record_serializer(
                KafkaRecordSerializationSchema.builder()
                .set_topic(totals)
                .set_value_serialization_schema(
                    JsonRowSerializationSchema.builder().with_type_info(TOTAL).build())
                .build())
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
            .set_transactional_id_prefix("order-totals")
            .build())
    (env.from_source(builder.build(), WatermarkStrategy.no_watermarks(), "orders")
     .map(lambda order: (order["customer"], order["amount"]),
          output_type=Types.TUPLE([Types.STRING(), Types.LONG()]))
     .key_by(lambda pair: pair[0])
     .reduce(lambda a, b: (a[0], a[1] + b[1]))
     .map(lambda pair: (pair[0], pair[1]), output_type=TOTAL)
     .sink_to(sink))


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python -m flintlock.examples.kafka_orders BOOTSTRAP ORDERS TOTALS",
              file=sys.stderr)
        return 2
    config = Configuration()
    config.set_string("execution.checkpointing.dir", tempfile.mkdtemp(prefix="flintlock-"))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(1000, CheckpointingMode.EXACTLY_ONCE)
    bootstrap, orders, totals = argv
    build(env, bootstrap, orders, totals)
    env.execute("order totals")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
