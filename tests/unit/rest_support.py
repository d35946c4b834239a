"""What the REST endpoint tests share: a fake job to serve, a JSON call over loopback HTTP, and
a self-signed certificate with the configuration that serves HTTPS with it."""

from __future__ import annotations

import datetime
import json
import urllib.error
import urllib.request
from concurrent.futures import Future
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from flintlock.common.config import Configuration
from flintlock.common.job_status import JobStatus
from flintlock.runtime.jobmanager import JobDescription

JOB_ID = "feedc0de" * 4


class FakeJob:
    """A running job that describes itself and keeps the savepoint futures it was asked for."""

    job_id = JOB_ID

    def __init__(self):
        self.futures = []

    def describe(self, timeout_s=10.0):
        return JobDescription(JOB_ID, "fake", "RUNNING", 0, 1, (), None)

    def get_status(self):
        return JobStatus.RUNNING

    def cancel(self):
        pass

    def trigger_savepoint(self, target_dir=None, stop=False):
        self.futures.append(Future())
        return self.futures[-1]

    def stop_with_savepoint(self, target_dir=None, drain=False):
        return self.trigger_savepoint(target_dir, True)


def call(endpoint, method, path, body=None, token=None, headers=None):
    """(status, JSON body) of ``method path`` on ``endpoint``, with its token unless given
    another (or ``False``: none)."""
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    request = urllib.request.Request(endpoint.url + path, data=data, method=method,
                                     headers=headers or {})
    if token is not False:
        request.add_header("Authorization", f"Bearer {token or endpoint.token}")
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def self_signed(directory: Path, name: str) -> tuple[Path, Path]:
    """A self-signed certificate and its key, as PEM files (key 0600)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(hours=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = directory / f"{name}.crt", directory / f"{name}.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return cert_path, key_path


def tls_config(cert: Path, key: Path, mutual: bool = False) -> Configuration:
    """The REST endpoint on an ephemeral port serving HTTPS with ``cert``/``key`` (and asking
    for a client certificate when ``mutual``)."""
    config = Configuration()
    config.set_string("rest.port", "0")
    config.set_string("security.ssl.rest.enabled", "true")
    config.set_string("security.ssl.rest.cert", str(cert))
    config.set_string("security.ssl.rest.key", str(key))
    config.set_string("security.ssl.rest.authentication-enabled", str(mutual).lower())
    return config
