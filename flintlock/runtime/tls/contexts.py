"""``ssl.SSLContext`` objects for each plane, and the typed errors of a TLS handshake.

Internal planes (data, RPC): TLS 1.3 only, both sides present the job certificate and
require the peer's, verified against the job's CA and nothing else (no system roots, no host
name: the per-job CA is the identity, see ``certificates``).

REST: the endpoint presents ``security.ssl.rest.cert``; with
``security.ssl.rest.authentication-enabled`` it requires a client certificate that chains to
``security.ssl.rest.trusted-certs`` (default: the endpoint's own certificate). The CLI's
context trusts exactly the endpoint's certificate, which the job file records: a pin, so a
certificate for another name or from a public CA cannot stand in for it, and host names do
not matter (the CLI dials the address the job file names, often 127.0.0.1).

Python's ``ssl`` loads a certificate and key only from files; ``_load_chain`` writes the job's
PEM material to a private temporary directory (0700, files 0600) for the length of the call.
"""

from __future__ import annotations

import enum
import ipaddress
import logging
import os
import ssl
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flintlock.common.config import Configuration
from flintlock.common.config_option import ConfigOption
from flintlock.common.errors import ConfigurationError
from flintlock.common.options import security as options
from flintlock.runtime.auth import AuthenticationError, AuthFailure
from flintlock.runtime.tls.certificates import InternalTls, internal_tls_of

log = logging.getLogger(__name__)

# OpenSSL's reasons, as ssl.SSLError.reason, by who refused whom
_WE_REFUSED = frozenset({
    "CERTIFICATE_VERIFY_FAILED", "PEER_DID_NOT_RETURN_A_CERTIFICATE",
})
_PEER_REFUSED = frozenset({
    "TLSV13_ALERT_CERTIFICATE_REQUIRED", "TLSV1_ALERT_UNKNOWN_CA", "SSLV3_ALERT_BAD_CERTIFICATE",
    "SSLV3_ALERT_CERTIFICATE_UNKNOWN", "TLSV1_ALERT_DECRYPT_ERROR", "TLSV1_ALERT_ACCESS_DENIED",
    "SSLV3_ALERT_UNSUPPORTED_CERTIFICATE", "SSLV3_ALERT_CERTIFICATE_EXPIRED",
})


class TlsRole(enum.Enum):
    SERVER = "server"
    CLIENT = "client"


class TlsHandshakeError(AuthenticationError):
    """A TLS handshake failed: the peer's certificate is not trusted (CERTIFICATE_REJECTED),
    the peer refused ours (REJECTED_BY_PEER), or TLS itself failed (TLS_FAILED: e.g. the
    peer does not speak TLS). An ``AuthenticationError``: the connection is closed unused."""


class TlsConfigurationError(ConfigurationError):
    """TLS is asked for but its material is missing or unreadable; names the key."""

    def __init__(self, key: str, detail: str) -> None:
        super().__init__(key, detail)
        self.key = key
        self.detail = detail

    def __str__(self) -> str:
        return f"{self.key}: {self.detail}"


def handshake_error(exc: ssl.SSLError, plane: str) -> TlsHandshakeError:
    """The typed error for an ``ssl.SSLError`` raised during (or right after) a handshake."""
    reason = exc.reason or ""
    if reason in _WE_REFUSED:
        failure, what = AuthFailure.CERTIFICATE_REJECTED, "the peer's certificate is not trusted"
    elif reason in _PEER_REFUSED:
        failure, what = AuthFailure.REJECTED_BY_PEER, "the peer refused our certificate"
    else:
        failure, what = AuthFailure.TLS_FAILED, "is TLS enabled on both sides?"
    error = TlsHandshakeError(failure, f"{plane}: {what} ({reason or exc})")
    error.__cause__ = exc
    return error


def internal_context(material: InternalTls, role: TlsRole) -> ssl.SSLContext:
    """Mutual TLS 1.3 with the job certificate, trusting the job's CA alone."""
    protocol = ssl.PROTOCOL_TLS_SERVER if role is TlsRole.SERVER else ssl.PROTOCOL_TLS_CLIENT
    context = ssl.SSLContext(protocol)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=material.ca_cert_pem.decode("ascii"))
    _load_chain(context, material.cert_pem, material.key_pem)
    return context


def internal_contexts(secret: bytes, required: bool = False
                      ) -> tuple[ssl.SSLContext | None, ssl.SSLContext | None]:
    """The (server, client) contexts of the job whose secret is ``secret``; (None, None) for a
    job without TLS material, which is a ``TlsConfigurationError`` when ``required`` (the
    configuration says ``security.ssl.internal.enabled``)."""
    material = required_material(secret, required)
    if material is None:
        return None, None
    return internal_context(material, TlsRole.SERVER), internal_context(material, TlsRole.CLIENT)


def required_material(secret: bytes, required: bool) -> InternalTls | None:
    """The TLS material ``secret`` carries; a ``TlsConfigurationError`` if it carries none
    although ``required`` (``security.ssl.internal.enabled``)."""
    material = internal_tls_of(secret)
    if material is None and required:
        raise TlsConfigurationError(
            options.INTERNAL_ENABLED.key, "is true but the job secret carries no certificate "
            "(a JobManager makes one at submission: new_job_credentials)")
    return material


@dataclass(frozen=True, slots=True)
class RestTls:
    """The REST endpoint's TLS: its context, its certificate (PEM, for the job file, which
    the CLI pins) and, with authentication-enabled, the certificate and key files the CLI
    presents as a client."""

    context: ssl.SSLContext
    cert_pem: str
    client_cert: str = ""
    client_key: str = ""


def rest_server_tls(configuration: Configuration) -> RestTls | None:
    """The REST endpoint's TLS, or None when ``security.ssl.rest.enabled`` is off; a
    ``TlsConfigurationError`` naming the key when a file is missing or unusable."""
    if not configuration.get(options.REST_ENABLED):
        return None
    cert = _required_file(configuration, options.REST_CERT)
    key = _required_file(configuration, options.REST_KEY)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigurationError(
            options.REST_KEY.key, f"cannot use {cert} with {key}: {exc}") from exc
    cert_pem = Path(cert).read_text(encoding="ascii", errors="replace")
    if not configuration.get(options.REST_AUTHENTICATION):
        return RestTls(context, cert_pem)
    trusted = configuration.get(options.REST_TRUSTED_CERTS) or cert
    _trust(context, Path(trusted).expanduser(), options.REST_TRUSTED_CERTS.key)
    context.verify_mode = ssl.CERT_REQUIRED
    return RestTls(context, cert_pem, cert, key)


def rest_client_context(endpoint_cert_pem: str, client_cert: str | None = None,
                        client_key: str | None = None) -> ssl.SSLContext:
    """The CLI's context: trusts exactly ``endpoint_cert_pem`` (a pin, host name unchecked);
    presents ``client_cert``/``client_key`` when the endpoint asks for a certificate."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = False
    context.verify_mode = ssl.CERT_REQUIRED
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    context.load_verify_locations(cadata=_first_certificate(endpoint_cert_pem))
    if client_cert and client_key:
        context.load_cert_chain(client_cert, client_key)  # OSError, ssl.SSLError: the caller's
    return context


def _first_certificate(pem: str) -> str:
    end = "-----END CERTIFICATE-----"
    cut = pem.find(end)
    return pem if cut < 0 else pem[: cut + len(end)] + "\n"


def _required_file(configuration: Configuration, option: ConfigOption[Any]) -> str:
    key = option.key
    value = configuration.get(option)
    if not value:
        raise TlsConfigurationError(
            key, f"is required with {options.REST_ENABLED.key}: true (a PEM file)")
    path = Path(str(value)).expanduser()
    if not path.is_file():
        raise TlsConfigurationError(key, f"{path} is not a readable file")
    return str(path)


def _trust(context: ssl.SSLContext, path: Path, key: str) -> None:
    context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN
    try:
        context.load_verify_locations(cafile=str(path))
    except (ssl.SSLError, OSError) as exc:
        raise TlsConfigurationError(key, f"cannot read certificates from {path}: {exc}") from exc


def _load_chain(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    with tempfile.TemporaryDirectory(prefix="flintlock-tls-") as directory:
        cert, key = Path(directory, "cert.pem"), Path(directory, "key.pem")
        for path, data in ((cert, cert_pem), (key, key_pem)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
        context.load_cert_chain(str(cert), str(key))


def warn_if_exposed(host: str, what: str, option_key: str) -> bool:
    """Logs a warning (and returns True) when ``what`` listens beyond loopback in clear text:
    TLS is off by default because on one machine only local users reach the ports."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return False
    log.warning("%s listens on %s without TLS: anyone on the network can read its traffic "
                "(set %s: true, docs/security.md)", what, host, option_key)
    return True
