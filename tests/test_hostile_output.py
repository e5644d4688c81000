"""No output of any format or channel carries a planted secret, an active link, an image, raw HTML,
a comment opener, a live mention or a terminal escape.

Run folders (real scenario runs) get secrets and markup planted everywhere text can come from: the
exception line and the traceback's source line of a log, a config line that ends up as a patch's
context, an artifact's file name, the run folder's name, and the user's symptom. Each is diagnosed
through `mltd diagnose --format text|markdown|json` and rendered for Slack and GitHub; the GitHub
markdown is rendered to HTML by a real CommonMark parser and the HTML is inspected.
"""
import json
import random
import re
import shutil
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from analysis import diagnose
from analysis.model import Diagnosis
from bot.render import render_json, render_markdown, render_text
from bot.render.github import render_github
from bot.render.slack import render as render_slack
from handlers.cli import main
from tests.secret_corpus import CORPUS

MARKUP = ["[Click to fix](https://evil.example/fix)", "![](https://evil.example/pixel.png)",
          "<img src=https://evil.example/i.png>", '<a href="https://evil.example">docs</a>', "<details open>",
          "<!-- hide the rest", "@octocat", "`@octocat", "(@acme/ml-team)", "https://evil.example/autolink",
          "www.evil.example", "<!channel>", "<@U024BE7LH>", "[x](javascript:alert(1))",
          "\x1b]52;c;Y3VybCBldmlsLnNofHNo\x07", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\", "```"]
# what a file or folder name can hold (no `/`)
NAME_MARKUP = ["[fix](javascript:alert(1))", "<img src=x onerror=alert(1)>", "@octocat", "<!--"]
RUN_URL, JOB_URL = "https://github.com/o/r/actions/runs/1", "https://github.com/o/r/actions/runs/1/job/2"
ALLOWED_TAGS = {"h3", "h4", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "strong", "em", "code",
                "pre", "details", "summary", "sub", "blockquote", "hr", "br", "a"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LIVE_MENTION = re.compile(r"(?<![A-Za-z0-9])@[A-Za-z0-9]")
_BARE_URL = re.compile(r"(?i)https?://|www\.")   # GitHub would autolink it
_SGR = re.compile(r"\x1b\[[0-9;]*m")              # rich's own colours


def _single_line_secrets() -> list[tuple[str, str]]:
    return [(t, s) for t, s in CORPUS.values() if "\n" not in t]


def _plant(tmp_path, scenario, seed: int):
    """Two hostile runs and the symptom; returns [(folder, symptom)] and the secrets planted."""
    rng = random.Random(seed)
    secrets = _single_line_secrets()
    rng.shuffle(secrets)
    pick = iter(secrets)
    planted = []

    def secret() -> str:
        text, part = next(pick)
        planted.append(part)
        return text

    def markup(k: int = 4) -> str:
        return " ".join(rng.sample(MARKUP, k))

    name_bits = " ".join(rng.sample(NAME_MARKUP, 3))
    crash = tmp_path / f"run {name_bits} AKIA{seed:016d}"[:200]
    planted.append(f"AKIA{seed:016d}")
    shutil.copytree(scenario("worker_exception"), crash)
    log = (crash / "train.log").read_text()
    log = log.replace("ValueError: cannot decode record 300: unexpected end of stream in shard-00003.tar",
                      f"ValueError: cannot decode record 300: {secret()} {markup()}")
    log = log.replace("    for xb, yb in batches:", f"    for xb, yb in batches:  # {secret()} {markup(3)}")
    (crash / "train.log").write_text(log)
    bad_name = f"{rng.choice(NAME_MARKUP)} ghp_{seed:036d}.pt"
    planted.append(f"ghp_{seed:036d}")
    (crash / bad_name).write_bytes(b"PK\x03\x04 not a checkpoint")

    patched = tmp_path / f"lr {name_bits}"
    shutil.copytree(scenario("lr_jump_mlp"), patched)
    cfg = (patched / "config.yaml").read_text()
    note = f"{secret()} {markup()}".replace("'", "''")
    cfg = cfg.replace("    lr: 0.8\n", f"    lr: 0.8\n    note: '{note}'\n")
    (patched / "config.yaml").write_text(cfg)
    symptom = f"diverged, see {markup(5)} {secret()}"
    return [(crash, symptom), (patched, symptom)], planted


class _Html(HTMLParser):
    """Tags, links and text outside code in rendered markdown."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.hrefs, self.comments, self.text, self._code = [], [], [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.hrefs += [v for k, v in attrs if k in ("href", "src")]
        self._code += tag in ("code", "pre")

    def handle_endtag(self, tag):
        self._code -= tag in ("code", "pre")

    def handle_comment(self, data):
        self.comments.append(data)

    def handle_data(self, data):
        if not self._code:
            self.text.append(data)


def assert_inert_markdown(md: str, allowed_links=()):
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(md)
    page = _Html()
    page.feed(html)
    assert set(page.tags) <= ALLOWED_TAGS, (set(page.tags) - ALLOWED_TAGS, html)
    assert set(page.hrefs) <= set(allowed_links), page.hrefs
    assert not page.comments, page.comments
    prose = "".join(page.text)
    assert not _LIVE_MENTION.search(prose), _LIVE_MENTION.search(prose)
    assert not _BARE_URL.search(prose), prose[max(0, _BARE_URL.search(prose).start() - 80):][:200]


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _strings(v)


def _cli(capsys, path, symptom, fmt, *extra) -> str:
    main(["diagnose", str(path), "--symptom", symptom, "--format", fmt, *extra])
    return capsys.readouterr().out


@pytest.mark.parametrize("seed", [0, 1])
def test_no_output_carries_a_planted_secret_link_or_mention(tmp_path, scenario, capsys, seed):
    runs, planted = _plant(tmp_path, scenario, seed)
    reached, outputs = set(), []
    for path, symptom in runs:
        raw = _cli(capsys, path, symptom, "json", "--no-redact")
        reached |= {s for s in planted if s in raw}
        outputs += [(form, _cli(capsys, path, symptom, form)) for form in ("text", "markdown", "json")]
        doc = diagnose(path, [symptom])[0]
        hostile_job = "train <img src=x> @octocat `` ](https://evil.example) ghp_" + "9" * 36
        outputs += [("github", render_github(doc, RUN_URL, [(hostile_job, JOB_URL)])),
                    ("markdown()", render_markdown(doc)), ("text()", render_text(doc, color=True)),
                    ("json()", render_json(doc))]
        blocks, fallback, _ = render_slack(doc)
        outputs.append(("slack", json.dumps(blocks) + fallback))
        assert all("<" not in s for s in [*_strings(blocks), fallback]), "slack markup"
    # the plants really reach the report: unredacted, most of them are there to be found
    assert len(reached) >= len(planted) // 2, (sorted(set(planted) - reached), planted)
    for name, out in outputs:
        leaked = [s for s in planted + ["9" * 36] if s in out]
        assert not leaked, (name, leaked)
        if name.startswith("json"):
            assert not any(_CONTROL.search(s) for s in _strings(json.loads(out))), name
        else:
            assert not _CONTROL.search(_SGR.sub("", out)), (name, _CONTROL.search(_SGR.sub("", out)))
        if name in ("markdown", "markdown()", "github"):
            assert_inert_markdown(out, allowed_links=(RUN_URL, JOB_URL) if name == "github" else ())


def test_a_patch_cannot_close_its_fence_or_leak_a_context_secret():
    key = "WANDB_API_KEY=" + "f" * 40
    doc = {"status": "diagnosis_complete", "run": {"id": "r", "artifacts": []}, "symptoms": [], "questions": [],
           "root_causes": [{"code": "lr_too_high", "issue": "x", "severity": "high", "confidence": 0.9, "evidence": [],
                            "fix": "f", "patch": f"--- a/c\n+++ b/c\n@@ -1,2 +1,2 @@\n {key}\n-lr: 1\n+lr: 0.1\n"
                                                 "```\n<img src=https://evil.example/x> @octocat\n"}],
           "quick_fixes": [], "missing_artifacts": [], "analysis_artifacts": {}, "engine": {}}
    md = render_github(Diagnosis.from_dict(doc))
    assert "f" * 40 not in md
    assert_inert_markdown(md)


def test_no_redact_shows_the_users_own_secrets(tmp_path, scenario, capsys):
    run = tmp_path / "mine"
    shutil.copytree(scenario("worker_exception"), run)
    key = "hf_" + "Q" * 34
    (run / "train.log").write_text((run / "train.log").read_text().replace("unexpected end of stream", key))
    assert key in _cli(capsys, run, "x", "text", "--no-redact")
    assert key not in _cli(capsys, run, "x", "text")


def test_a_secret_cut_by_a_quote_length_never_leaks_a_prefix(tmp_path, capsys):
    """Quoted lines are cut to a length: never inside a word, so no prefix of a token too short to
    recognise reaches the reply."""
    token = "ghp_" + "Ab3" * 12
    run = tmp_path / "run"
    run.mkdir()
    head = "torch.OutOfMemoryError: CUDA out of memory. "
    for pad in range(260 - len(head), 300 - len(head), 6):     # the token straddles the 300th character
        line = head + "x " * (pad // 2) + token
        (run / "train.log").write_text("step=1 loss=2.0\nstep=2 loss=1.9\n" + line + "\n")
        assert main(["diagnose", str(run), "--format", "json"]) in (0, 2)
        out = capsys.readouterr().out
        assert "ghp_Ab3" not in out
