"""The REST endpoint with security.ssl.rest.*: HTTPS with PEM files, the CLI trusting exactly
the certificate its job file records, mutual TLS with authentication-enabled, and what a
client without the right certificate is told and leaves behind."""

from __future__ import annotations

import socket
from dataclasses import replace
from pathlib import Path

import pytest

from flintlock.cli.client import RestCallError, RestClient, TlsRefusedError
from flintlock.common.config import Configuration
from flintlock.runtime.rest.jobfiles import JobFile
from flintlock.runtime.rest.server import RestEndpoint
from flintlock.runtime.tls.contexts import TlsConfigurationError
from flintlock.testing.waiting import wait_until
from tests.unit.rest_support import FakeJob, self_signed, tls_config


def serve(config: Configuration, jobs: Path) -> RestEndpoint:
    return RestEndpoint.bind(config, jobs_directory=jobs).serve(FakeJob(), "fake")  # type: ignore[arg-type]


def nothing_held(endpoint: RestEndpoint) -> None:
    server = endpoint._server
    wait_until(lambda: not server._exchanges and server._admission.pending == 0)


def test_the_cli_talks_https_to_the_endpoint_it_pins(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "endpoint")
    endpoint = serve(tls_config(cert, key), tmp_path)
    try:
        job = endpoint.job_file
        assert job is not None and job.url.startswith("https://")
        assert job.tls_cert == cert.read_text() and not job.client_key
        with pytest.raises(RestCallError) as answered:  # an answer over TLS: token, routing
            RestClient(job).get("/jobs/" + "0" * 32)
        assert answered.value.status == 404
        with pytest.raises(RestCallError) as answered:
            RestClient(replace(job, token="wrong")).get("/jobs")
        assert answered.value.status == 401
    finally:
        endpoint.close()


def test_a_cli_pinned_to_another_certificate_refuses_the_endpoint(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path, "endpoint")
    impostor, _ = self_signed(tmp_path, "impostor")
    endpoint = serve(tls_config(cert, key), tmp_path)
    try:
        assert endpoint.job_file is not None
        job = replace(endpoint.job_file, tls_cert=impostor.read_text())
        with pytest.raises(TlsRefusedError, match="other than the one its job file records"):
            RestClient(job).get("/jobs")
        nothing_held(endpoint)
    finally:
        endpoint.close()


def test_plain_http_to_the_https_endpoint_gets_nothing_and_holds_nothing(
    tmp_path: Path,
) -> None:
    cert, key = self_signed(tmp_path, "endpoint")
    endpoint = serve(tls_config(cert, key), tmp_path)
    try:
        with socket.create_connection(endpoint.address, timeout=5) as plain:
            plain.sendall(b"GET /jobs HTTP/1.0\r\nAuthorization: Bearer "
                          + endpoint.token.encode() + b"\r\n\r\n")
            answer = b""
            try:
                while chunk := plain.recv(4096):
                    answer += chunk
            except ConnectionResetError:  # closed with the request unread: a reset
                pass
        assert b"HTTP/" not in answer  # closed in the handshake: the request was never read
        nothing_held(endpoint)
    finally:
        endpoint.close()


def test_with_authentication_the_cli_presents_the_configured_certificate(
    tmp_path: Path,
) -> None:
    cert, key = self_signed(tmp_path, "endpoint")
    endpoint = serve(tls_config(cert, key, mutual=True), tmp_path)
    try:
        job = endpoint.job_file
        assert job is not None and (job.client_cert, job.client_key) == (str(cert), str(key))
        with pytest.raises(RestCallError) as answered:
            RestClient(job).get("/jobs/" + "0" * 32)
        assert answered.value.status == 404
    finally:
        endpoint.close()


@pytest.mark.parametrize("client", ["none", "another CA"])
def test_with_authentication_a_client_without_a_trusted_certificate_is_refused(
    tmp_path: Path, client: str,
) -> None:
    cert, key = self_signed(tmp_path, "endpoint")
    stranger_cert, stranger_key = self_signed(tmp_path, "stranger")
    endpoint = serve(tls_config(cert, key, mutual=True), tmp_path)
    try:
        assert endpoint.job_file is not None
        if client == "none":
            job: JobFile = replace(endpoint.job_file, client_cert="", client_key="")
        else:
            job = replace(endpoint.job_file, client_cert=str(stranger_cert),
                          client_key=str(stranger_key))
        with pytest.raises(TlsRefusedError) as refused:
            RestClient(job).get("/jobs")
        assert "client certificate" in refused.value.hint
        nothing_held(endpoint)
    finally:
        endpoint.close()


def test_enabled_without_a_certificate_is_a_typed_error_naming_the_key(tmp_path: Path) -> None:
    config = Configuration()
    config.set_string("security.ssl.rest.enabled", "true")
    with pytest.raises(TlsConfigurationError, match=r"security\.ssl\.rest\.cert"):
        RestEndpoint.bind(config, jobs_directory=tmp_path)


def test_a_key_that_does_not_match_the_certificate_is_a_typed_error(tmp_path: Path) -> None:
    cert, _ = self_signed(tmp_path, "endpoint")
    _, other_key = self_signed(tmp_path, "other")
    with pytest.raises(TlsConfigurationError, match=r"security\.ssl\.rest\.key"):
        RestEndpoint.bind(tls_config(cert, other_key), jobs_directory=tmp_path)


def test_off_by_default_the_endpoint_speaks_http(tmp_path: Path) -> None:
    config = Configuration()
    config.set_string("rest.port", "0")
    endpoint = RestEndpoint.bind(config, jobs_directory=tmp_path)
    try:
        assert endpoint.url.startswith("http://")
    finally:
        endpoint.close()
