"""The per-job certificate authority and certificate of ``security.ssl.internal.enabled``.

At submission the JobManager makes, with the ``cryptography`` package:

- a certificate authority for this job alone: a fresh P-256 key and a self-signed CA
  certificate (``basicConstraints CA``, may sign certificates only);
- one job certificate, a fresh P-256 key signed by that CA, for both TLS roles (server and
  client authentication): every TaskManager and the JobManager present it, as every Flink
  process presents the one internal keystore.

The CA's private key signs once and is dropped: it never leaves ``new_internal_tls``, so a
leaked job key cannot mint other certificates, and nothing issued for one job is trusted by
another (each trusts only its own CA). Peers are verified against the job's CA only; host
names are not checked (TaskManagers live on whatever hosts Spark gives them), the CA is the
identity.

The material (``InternalTls``: PEM bytes) travels inside ``JobSecret``, a ``bytes`` subclass
holding the job secret, so it reaches the TaskManagers exactly where the secret already
goes (the Spark task closure) with no new field on any payload. Its ``repr`` hides both.

Validity: from an hour before submission (clock skew between driver and executors) for
``VALIDITY_DAYS``; a streaming job may run for years, and the trust anchor dies with the job.
"""

from __future__ import annotations

import datetime
import secrets
from dataclasses import dataclass
from typing import Final

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from flintlock.common.config import Configuration
from flintlock.common.options.security import INTERNAL_ENABLED
from flintlock.runtime.auth import new_job_secret

VALIDITY_DAYS: Final = 3650
_SKEW: Final = datetime.timedelta(hours=1)


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
    """A new per-job CA and a job certificate it signed; the CA key is dropped here."""
    start = (now or datetime.datetime.now(datetime.UTC)) - _SKEW
    end = start + datetime.timedelta(days=VALIDITY_DAYS)
    label = secrets.token_hex(8)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = _name(f"flintlock job CA {label}")
    ca_cert = (
        _builder(ca_name, ca_name, ca_key.public_key(), start, end)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        _builder(_name(f"flintlock job {label}"), ca_name, key.public_key(), start, end)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage(
            [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return InternalTls(
        ca_cert.public_bytes(serialization.Encoding.PEM),
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                          serialization.NoEncryption()),
    )


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _builder(subject: x509.Name, issuer: x509.Name, public_key: ec.EllipticCurvePublicKey,
             start: datetime.datetime, end: datetime.datetime) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(end)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def _usage(cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=not cert_sign, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=cert_sign,
        crl_sign=cert_sign, encipher_only=False, decipher_only=False,
    )
