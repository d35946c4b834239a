"""A Kafka-protocol broker for connector tests: librdkafka's mock cluster, hosted by a helper
process, reached over TCP on 127.0.0.1 by every process of a test (the test itself, thread
TaskManagers, Spark's Python workers).

librdkafka ships inside the ``confluent-kafka`` wheel, the client the connector is built on
(the ``kafka`` extra; the ``test`` extra installs it too): no download, no root, no JVM. Why
this broker and what it does not enforce (transactions: ``read_committed`` readers see aborted
and open transactions' records): docs/decisions.md, "A Kafka broker for the tests".

The helper process (this file run as a script) loads that librdkafka with ``ctypes``, creates a
one-broker mock cluster (which listens on 127.0.0.1 only), prints its bootstrap address and then
takes commands on stdin, one per line: ``topic <name> <partitions>`` creates a topic (the mock
does not implement the CreateTopics request). It answers ``ok`` or ``error <text>``, and exits
when stdin closes, so a test that dies takes its broker with it.

``FLINTLOCK_KAFKA_BOOTSTRAP`` names a real broker instead (``real_kafka_broker``): the tests
that need enforced transactions run only against one.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REAL_BROKER_ENV = "FLINTLOCK_KAFKA_BOOTSTRAP"


class KafkaBrokerUnavailableError(RuntimeError):
    """confluent-kafka (with its librdkafka) is not installed in this environment."""


class KafkaBrokerError(RuntimeError):
    """The helper process failed to start, or refused a command."""


def librdkafka_path() -> Path:
    """The librdkafka shared library inside the installed confluent-kafka wheel."""
    spec = importlib.util.find_spec("confluent_kafka")
    if spec is None or not spec.submodule_search_locations:
        raise KafkaBrokerUnavailableError(
            "the Kafka tests run librdkafka's mock cluster from the 'confluent-kafka' package "
            "of the test extra, which is not installed: run `make test`, or "
            "`pip install -e '.[test]'` in this environment")
    package = Path(spec.submodule_search_locations[0])
    # Where the wheels put it: auditwheel (Linux) and delocate (macOS).
    found = sorted([*(package.parent / "confluent_kafka.libs").glob("librdkafka*.so*"),
                    *(package / ".dylibs").glob("librdkafka*.dylib")])
    if not found:
        raise KafkaBrokerUnavailableError(
            f"confluent-kafka is installed without a bundled librdkafka next to {package} (a "
            "source build?): install the wheel (`pip install --force-reinstall "
            "--only-binary :all: confluent-kafka`)")
    return found[0]


class KafkaBroker:
    """A running mock cluster: its bootstrap address and topic creation."""

    def __init__(self, process: subprocess.Popen[str], bootstrap: str) -> None:
        self._process = process
        self.bootstrap = bootstrap

    def create_topic(self, name: str, partitions: int) -> None:
        answer = self._command(f"topic {name} {partitions}")
        if answer != "ok":
            raise KafkaBrokerError(f"creating topic {name!r}: {answer}")

    def _command(self, line: str) -> str:
        stdin, stdout = self._process.stdin, self._process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(line + "\n")
        stdin.flush()
        answer = stdout.readline().strip()
        if not answer:
            raise KafkaBrokerError(f"the mock cluster exited (code {self._process.poll()})")
        return answer


@contextmanager
def kafka_broker(timeout_s: float = 20.0) -> Iterator[KafkaBroker]:
    """Starts a mock cluster in a helper process; stops it on exit."""
    librdkafka_path()  # a clear error here rather than a dead helper
    process = subprocess.Popen(
        [sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        bootstrap = process.stdout.readline().strip()
        if not bootstrap.startswith("127.0.0.1:"):
            raise KafkaBrokerError(f"the mock cluster did not start (said {bootstrap!r})")
        yield KafkaBroker(process, bootstrap)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout_s)
        if process.stdout is not None:
            process.stdout.close()


def real_kafka_bootstrap() -> str | None:
    """The real broker named by ``FLINTLOCK_KAFKA_BOOTSTRAP``, if any."""
    return os.environ.get(REAL_BROKER_ENV) or None


def _serve() -> None:
    lib = ctypes.CDLL(str(librdkafka_path()))
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.restype = ctypes.c_void_p
    lib.rd_kafka_new.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_mock_cluster_new.restype = ctypes.c_void_p
    lib.rd_kafka_mock_cluster_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rd_kafka_mock_cluster_bootstraps.restype = ctypes.c_char_p
    lib.rd_kafka_mock_cluster_bootstraps.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_mock_topic_create.restype = ctypes.c_int
    lib.rd_kafka_mock_topic_create.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                               ctypes.c_int]
    lib.rd_kafka_err2str.restype = ctypes.c_char_p
    lib.rd_kafka_err2str.argtypes = [ctypes.c_int]
    errstr = ctypes.create_string_buffer(512)
    handle = lib.rd_kafka_new(0, lib.rd_kafka_conf_new(), errstr, len(errstr))
    if not handle:
        print(f"error {errstr.value.decode()}", flush=True)
        return
    cluster = lib.rd_kafka_mock_cluster_new(handle, 1)
    print(lib.rd_kafka_mock_cluster_bootstraps(cluster).decode(), flush=True)
    for line in sys.stdin:
        words = line.split()
        if len(words) == 3 and words[0] == "topic" and words[2].isdigit():
            err = lib.rd_kafka_mock_topic_create(cluster, words[1].encode(), int(words[2]), 1)
            print("ok" if err == 0 else f"error {lib.rd_kafka_err2str(err).decode()}",
                  flush=True)
        else:
            print(f"error unknown command {line.strip()!r}", flush=True)
    # The process exits without destroying the cluster: the OS closes its sockets.


if __name__ == "__main__":
    _serve()
