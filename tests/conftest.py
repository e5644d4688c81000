import os
import socket

import pytest

from tests import scenarios


@pytest.fixture(autouse=True)
def _no_network(monkeypatch):
    """The engine never needs the network: any outbound connection in a test is a bug."""
    def refuse(*args, **kwargs):
        raise RuntimeError("network access in a test")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(scope="session")
def scenario():
    return scenarios.cached


os.environ.setdefault("MPLBACKEND", "Agg")
