"""The tests' Kafka broker helper: a mock cluster on 127.0.0.1 in its own process, topics
made on request, gone when the context ends."""

import socket

import pytest
from confluent_kafka.admin import AdminClient

from .kafka_broker import KafkaBrokerError, kafka_broker


def _accepts(address):
    host, port = address.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=2):
            return True
    except OSError:
        return False


def test_the_mock_cluster_listens_on_loopback_makes_topics_and_stops():
    with kafka_broker() as broker:
        assert broker.bootstrap.startswith("127.0.0.1:")
        broker.create_topic("made", 3)
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        assert len(admin.list_topics(timeout=10).topics["made"].partitions) == 3
        with pytest.raises(KafkaBrokerError, match="already exists"):
            broker.create_topic("made", 3)
        address = broker.bootstrap
        assert _accepts(address)
    assert not _accepts(address)
