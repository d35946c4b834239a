"""A connection over the REST endpoint's cap of unauthenticated connections is answered
"busy" (503, Retry-After) before it is closed, and the CLI's client reports it as busy, not as
a failed authentication or a dead driver (issue 30)."""

from __future__ import annotations

import pytest

from flintlock.cli.client import RestCallError, RestClient
from flintlock.runtime.rest.jobfiles import JobFile
from flintlock.runtime.rest.server import RestEndpoint
from flintlock.testing.waiting import wait_until
from tests.bad_clients import close_all, closed_by_peer, open_silent
from tests.unit.rest_support import FakeJob, call


def test_a_client_over_the_cap_is_told_the_endpoint_is_busy(tmp_path) -> None:
    endpoint = RestEndpoint("127.0.0.1", 0, jobs_directory=tmp_path, max_pending_requests=2)
    endpoint.serve(FakeJob(), "fake")
    try:
        silent = open_silent(endpoint.address, 2)  # the cap: both wait for their token
        try:
            assert not closed_by_peer(silent[0], timeout_s=0.2)
            host, port = endpoint.address[:2]
            job = JobFile("f" * 32, "fake", host, port, "t" * 43, 0, 0)
            with pytest.raises(RestCallError) as refused:
                RestClient(job, timeout_s=10).get("/jobs")
            assert refused.value.status == 503
            assert "busy" in refused.value.message
            assert "authentication" not in refused.value.message
            assert "retry" in refused.value.hint
        finally:
            close_all(silent)
        wait_until(lambda: call(endpoint, "GET", "/jobs")[0] == 200)
    finally:
        endpoint.close()
