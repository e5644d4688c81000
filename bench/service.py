"""The Slack service under load, on loopback: `mltd serve --no-worker` and `mltd worker`
processes, PostgreSQL state and a Redis queue (this machine's servers), the Slack stand-in, moto's
S3 with a real scenario run.

    python bench/service.py                 # 10 single mentions, 10 follow-ups, then a burst of 200
    python bench/service.py --burst 400 --workers 2

Prints, for single mentions one after another, the time from mention to final reply (p50/p99);
for follow-ups in the thread of one diagnosis (answered from the cached run, without the agent),
the time from mention to reply (p50/p99);
for the burst, ack latency p50/p99, diagnoses completed per minute, and how many mentions got
exactly one reply. The workers run at a lower CPU priority (nice 10), as a web front would sit
beside workers on one machine; on separate machines that is moot.
"""
from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes.service import S3, env, mention, signed  # noqa: E402
from tests.fakes.slack_api import SlackStandIn  # noqa: E402
from tests.scenarios import cached  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def final_answers(slack: SlackStandIn) -> dict[str, int]:
    """Thread -> number of final (non-placeholder) updates on that thread's placeholder."""
    placeholder_thread = {p["_response"]["ts"]: p["thread_ts"] for p in slack.called("chat.postMessage")}
    out: dict[str, int] = {}
    for u in slack.called("chat.update"):
        thread = placeholder_thread.get(u.get("ts"))
        if thread is not None:
            out[thread] = out.get(thread, 0) + 1
    return out


def placeholders_per_thread(slack: SlackStandIn) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in slack.called("chat.postMessage"):
        out[p["thread_ts"]] = out.get(p["thread_ts"], 0) + 1
    return out


async def send(client: httpx.AsyncClient, body: dict) -> float:
    raw, headers = signed(body)
    t = time.perf_counter()
    r = await client.post("/slack/events", content=raw, headers=headers)
    dt = time.perf_counter() - t
    if r.status_code != 200:
        raise SystemExit(f"event answered {r.status_code}: {r.text[:200]}")
    return dt


async def burst(base: str, bodies: list[dict], concurrency: int) -> list[float]:
    sem = asyncio.Semaphore(concurrency)
    async with httpx.AsyncClient(base_url=base, timeout=30) as client:
        async def one(b):
            async with sem:
                return await send(client, b)
        return await asyncio.gather(*(one(b) for b in bodies))


def _send_burst(base: str, bodies: list[dict], concurrency: int) -> list[float]:
    return asyncio.run(burst(base, bodies, concurrency))


def wait_until(pred, timeout: float) -> bool:
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--singles", type=int, default=10)
    ap.add_argument("--burst", type=int, default=200)
    ap.add_argument("--followups", type=int, default=10, help="follow-ups in one diagnosed thread, one after another")
    ap.add_argument("--workers", type=int, default=2, help="worker processes")
    ap.add_argument("--concurrency", type=int, default=8, help="events in flight during the burst")
    ap.add_argument("--database", default="postgresql://postgres@127.0.0.1:5432/test",
                    help="MLTD_DATABASE_URL (the deployment shape: PostgreSQL state, Redis queue)")
    args = ap.parse_args()

    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)       # moto's access log
    slack, s3 = SlackStandIn(), S3()
    s3.upload(cached("lr_jump_mlp"), "runs/42")
    tmp = Path(tempfile.mkdtemp(prefix="mltd-bench-"))
    e = {**os.environ, **env(slack.api_url, s3.url, tmp, MLTD_QUEUE_URL="redis://127.0.0.1:6379/0",
                             MLTD_DATABASE_URL=args.database,
                             MLTD_QUEUE_NAME=f"bench-{uuid.uuid4().hex[:8]}", MLTD_WORKERS="1")}
    port = 18000 + os.getpid() % 1000
    web = subprocess.Popen([sys.executable, "-m", "handlers.cli", "serve", "--no-worker", "--port", str(port)],
                           cwd=ROOT, env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers = [subprocess.Popen(["nice", "-n", "10", sys.executable, "-m", "handlers.cli", "worker"], cwd=ROOT, env=e,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(args.workers)]
    base = f"http://127.0.0.1:{port}"
    try:
        if not wait_until(lambda: _up(base), 60):
            raise SystemExit("the service did not start")
        # one after another: mention -> final reply
        latencies = []
        for i in range(args.singles):
            body = mention(f"<@UBOT> why did run 42 diverge? ({i})")
            t = time.perf_counter()
            asyncio.run(burst(base, [body], 1))
            thread = body["event"]["ts"]
            if not wait_until(lambda: final_answers(slack).get(thread), 120):
                raise SystemExit(f"no reply to single mention {i}")
            latencies.append(time.perf_counter() - t)
        print(f"single mentions ({args.singles}, one after another): mention -> final reply "
              f"p50 {statistics.median(latencies):.2f}s  p99 {pct(latencies, 99):.2f}s")
        follow = follow_ups(base, slack, args.followups)
        print(f"follow-ups ({args.followups}, one after another, in the thread of run 42's diagnosis; no agent): "
              f"mention -> reply p50 {statistics.median(follow):.2f}s  p99 {pct(follow, 99):.2f}s")

        bodies = [mention(f"<@UBOT> run 42 diverged, burst {i}") for i in range(args.burst)]
        threads = [b["event"]["ts"] for b in bodies]
        t0 = time.perf_counter()
        # the sender runs in its own process, as Slack does: this one serves the stand-in and S3
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            acks = pool.apply(_send_burst, (base, bodies, args.concurrency))
        sent = time.perf_counter() - t0
        done = wait_until(lambda: all(final_answers(slack).get(t) for t in threads), 1800)
        elapsed = time.perf_counter() - t0
        answers, holders = final_answers(slack), placeholders_per_thread(slack)
        once = sum(1 for t in threads if answers.get(t) == 1 and holders.get(t) == 1)
        print(f"burst: {args.burst} signed mentions sent in {sent:.1f}s ({args.concurrency} in flight)")
        print(f"  ack latency p50 {statistics.median(acks) * 1000:.0f} ms  p99 {pct(acks, 99) * 1000:.0f} ms "
              f""
              f"(the server's own histogram: {_server_acks(base)})")
        completed = sum(1 for t in threads if answers.get(t))
        print(f"  diagnoses completed: {completed} in {elapsed:.0f}s "
              f"= {completed / elapsed * 60:.0f} per minute ({args.workers} worker processes)")
        print(f"  answered exactly once (one placeholder, one final update): {once}/{args.burst}"
              + ("" if done else "  (timed out waiting)"))
        ok = (pct(acks, 99) < 0.1 and once == args.burst and statistics.median(latencies) < 5
              and statistics.median(follow) < 5)
        print(f"floors (ack p99 < 100 ms, all answered exactly once, median reply < 5 s, median follow-up reply "
              f"< 5 s): {'ok' if ok else 'NOT MET'}")
    finally:
        # the workers stop as huey stops gracefully (SIGINT): a job whose reply is posted records itself done,
        # so no row is left `running` in the shared database for a later reaper to run again
        for p in workers:
            p.send_signal(signal.SIGINT)
        web.terminate()
        for p in workers + [web]:
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        slack.close()
        s3.close()


FOLLOW_UPS = ("what about the grad norm around step 250?", "why not exploding gradients?", "show me the config",
              "what about the loss between step 200 and 230?", "which files did you read?")


def follow_ups(base: str, slack: SlackStandIn, n: int) -> list[float]:
    """Mention -> reply of `n` follow-ups, one after another, in the thread of one diagnosis (the
    run cached by the worker that fetched it; the workers share the machine's cache folder)."""
    root = mention("<@UBOT> why did run 42 diverge? (the thread for follow-ups)")
    thread = root["event"]["ts"]
    asyncio.run(burst(base, [root], 1))
    if not wait_until(lambda: final_answers(slack).get(thread), 120):
        raise SystemExit("no reply to the diagnosis the follow-ups are about")
    out = []
    for i in range(n):
        body = mention(f"<@UBOT> {FOLLOW_UPS[i % len(FOLLOW_UPS)]}", thread_ts=thread)
        t = time.perf_counter()
        asyncio.run(burst(base, [body], 1))
        if not wait_until(lambda: final_answers(slack).get(thread, 0) >= i + 2, 120):
            raise SystemExit(f"no reply to follow-up {i}")
        out.append(time.perf_counter() - t)
    return out


def _server_acks(base: str) -> str:
    """The share of acks under each bucket bound, from the service's /metrics."""
    counts = {}
    for line in httpx.get(base + "/metrics", timeout=5).text.splitlines():
        if line.startswith('mltd_ack_seconds_bucket{le="') and 'route="/slack/events"' in line:
            le = line.split('le="')[1].split('"')[0]
            counts[le] = float(line.rsplit(" ", 1)[1])
    total = counts.get("+Inf", 0) or 1
    return ", ".join(f"<= {float(le) * 1000:.0f} ms {n / total:.1%}" for le, n in counts.items()
                     if le in ("0.025", "0.05", "0.1"))


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


if __name__ == "__main__":
    main()
