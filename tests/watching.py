"""What the watch tests share: one torch thread per tiny training, and a notifier that keeps what it is given."""
import pytest
import torch

from analysis.live_warning import LiveWarning


@pytest.fixture(autouse=True)
def one_thread():
    """A tiny model's steps must not swell with a busy machine's thread contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


class Collect:
    def __init__(self) -> None:
        self.docs: list[dict] = []

    def post(self, warning: LiveWarning) -> None:
        self.docs.append(warning.to_dict())          # the JSON document, as a file or the service gets it
