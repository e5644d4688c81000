"""The web front answers Slack before it talks to Slack: a placeholder post gives way to the acks
in flight, waits no longer than PLACEHOLDER_DEFER_S, and only a few run at once."""
import asyncio

from handlers import slack_events
from handlers.slack_events import AcksFirst


def test_a_placeholder_waits_for_the_ack_in_flight():
    async def go():
        acks, order = AcksFirst(), []

        async def post():
            order.append("post")

        acks.start()
        task = asyncio.create_task(acks.after_acks(post))
        await asyncio.sleep(0.05)
        order.append("ack done")
        acks.done()
        await task
        return order
    assert asyncio.run(go()) == ["ack done", "post"]


def test_a_burst_that_never_pauses_delays_a_placeholder_by_the_cap_only(monkeypatch):
    monkeypatch.setattr(slack_events, "PLACEHOLDER_DEFER_S", 0.05)

    async def go():
        acks = AcksFirst()
        acks.start()                        # an ack always in flight
        loop = asyncio.get_running_loop()
        t = loop.time()
        done = asyncio.Event()

        async def post():
            done.set()
        await asyncio.wait_for(acks.after_acks(post), 2)
        return done.is_set(), loop.time() - t
    posted, waited = asyncio.run(go())
    assert posted and 0.04 < waited < 1


def test_only_a_few_placeholders_post_at_once():
    async def go():
        acks, running, peak = AcksFirst(), 0, 0

        async def post():
            nonlocal running, peak
            running += 1
            peak = max(peak, running)
            await asyncio.sleep(0.01)
            running -= 1
        await asyncio.gather(*(acks.after_acks(post) for _ in range(10)))
        return peak
    assert asyncio.run(go()) == slack_events.PLACEHOLDERS_AT_ONCE


def test_one_gate_serves_a_second_event_loop():
    acks = AcksFirst()

    async def go():
        posted = []

        async def post():
            posted.append(1)
        acks.start()                        # the post waits on the gate: its Event binds to this loop
        task = asyncio.create_task(acks.after_acks(post))
        await asyncio.sleep(0.01)
        acks.done()
        await task
        return posted
    assert asyncio.run(go()) == [1] and asyncio.run(go()) == [1]       # a fresh loop each time
