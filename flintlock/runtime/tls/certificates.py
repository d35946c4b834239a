"""The per-job certificate authority and certificate of ``security.ssl.internal.enabled``.

At submission the JobManager makes, with the ``cryptography`` package:

- a certificate authority for this job alone: a fresh P-256 key and a self-signed CA
  certificate (``basicConstraints CA``, may sign certificates only);
- one job certificate, a fresh P-256 key signed by that CA, for both TLS roles (server and
  client authentication): every TaskManager and the JobManager present it, as every Flink
  process presents the one internal keystore.

The CA's private key signs once and is dropped: it never leaves ``authority.issue``, so a
leaked job key cannot mint other certificates, and nothing issued for one job is trusted by
another (each trusts only its own CA). Peers are verified against the job's CA only; host
names are not checked (TaskManagers live on whatever hosts Spark gives them), the CA is the
identity.

The material (``InternalTls``: PEM bytes) travels inside ``JobSecret``, a ``bytes`` subclass
holding the job secret, so it reaches the TaskManagers exactly where the secret already
goes (the Spark task closure) with no new field on any payload. Its ``repr`` hides both.

Validity: from an hour before submission (clock skew between driver and executors) for
``authority.VALIDITY_DAYS``; a streaming job may run for years, and the trust anchor dies with
the job.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from flintlock.common.config import Configuration
from flintlock.common.options.security import INTERNAL_ENABLED
from flintlock.runtime.auth import new_job_secret


@dataclass(frozen=True, slots=True)
class InternalTls:
    """A job's TLS material, PEM-encoded: the CA certificate to verify peers against, and
    the job certificate with its private key to present."""

    ca_cert_pem: bytes
    cert_pem: bytes
    key_pem: bytes = b""

    def __repr__(self) -> str:
        return "InternalTls(<job certificate and key>)"


class JobSecret(bytes):
    """The job secret (its bytes) and, with internal TLS, the job's ``InternalTls``.

    A ``bytes`` so that every place that carries or checks the secret keeps working
    unchanged; ``tls`` rides along, pickled with it (``__reduce__``)."""

    tls: InternalTls | None

    def __new__(cls, secret: bytes, tls: InternalTls | None = None) -> JobSecret:
        value = super().__new__(cls, secret)
        value.tls = tls
        return value

    def __reduce__(self) -> tuple[type[JobSecret], tuple[bytes, InternalTls | None]]:
        return (JobSecret, (bytes(self), self.tls))

    def __repr__(self) -> str:
        return f"JobSecret(<{len(self)} bytes>, tls={self.tls is not None})"


def internal_tls_of(secret: bytes) -> InternalTls | None:
    """The TLS material a job secret carries (None: this job's connections are plain TCP)."""
    return secret.tls if isinstance(secret, JobSecret) else None


def new_job_credentials(configuration: Configuration) -> JobSecret:
    """A fresh job secret, with a fresh CA and job certificate if
    ``security.ssl.internal.enabled`` (called once per job, at submission)."""
    tls = new_internal_tls() if configuration.get(INTERNAL_ENABLED) else None
    return JobSecret(new_job_secret(), tls)


def new_internal_tls(now: datetime.datetime | None = None) -> InternalTls:
    """A new per-job CA and a job certificate it signed (``authority.issue``)."""
    # Imported only here: ``cryptography`` costs a driver 30-60 ms of imports, and only a job
    # with internal TLS makes certificates.
    from flintlock.runtime.tls.authority import issue

    return InternalTls(*issue(now))
