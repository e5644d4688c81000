import os
import socket

import pytest

from tests import scenarios
from tests.fakes.slack_api import SlackStandIn

_LOOPBACK = ("127.0.0.1", "::1", "localhost")


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """Nothing leaves the machine: the stand-in servers, moto, PostgreSQL and Redis listen on
    loopback; any other outbound connection in a test is a bug."""
    connect, create_connection = socket.socket.connect, socket.create_connection

    def local(address) -> bool:
        return not isinstance(address, tuple) or address[0] in _LOOPBACK

    def guarded_connect(self, address, *args, **kwargs):
        if not local(address):
            raise RuntimeError(f"network access in a test: {address}")
        return connect(self, address, *args, **kwargs)

    def guarded_create_connection(address, *args, **kwargs):
        if not local(address):
            raise RuntimeError(f"network access in a test: {address}")
        return create_connection(address, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "create_connection", guarded_create_connection)


@pytest.fixture(scope="module")
def slack():
    """The Slack Web API stand-in, one per test module (its call log is the module's)."""
    s = SlackStandIn()
    yield s
    s.close()


@pytest.fixture(scope="session")
def scenario():
    return scenarios.cached


os.environ.setdefault("MPLBACKEND", "Agg")
