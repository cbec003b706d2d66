"""The loop-lag monitor itself (no cluster): a step that holds the loop is reported with the
request it belonged to, a SockJS session id only as its fingerprint, and the lag histogram
records how late its timer ran."""

import asyncio
import logging
import time

import prometheus_client

from dashboard_api.serving import looplag, requestlog


def test_a_slow_step_is_logged_with_its_request(caplog):
    registry = prometheus_client.CollectorRegistry()

    async def request(path):
        looplag.CURRENT.set(looplag.describe("POST", path))
        await asyncio.sleep(0)
        time.sleep(0.15)   # one step holding the loop

    async def main():
        lag = looplag.LoopLag(registry, interval=0.02)
        lag.start()
        await asyncio.create_task(request("/api/v1/appdeployment/validate/imagereference"))
        await asyncio.create_task(request("/api/sockjs/123/secret-session-id/xhr_send"))
        await asyncio.sleep(0.05)
        lag.stop()

    try:
        with caplog.at_level(logging.WARNING, logger="dashboard_api.looplag"):
            asyncio.run(main())
    finally:
        looplag.uninstall_step_timer()
    messages = [r.getMessage() for r in caplog.records]
    assert any("POST /api/v1/appdeployment/validate/imagereference" in m for m in messages), \
        messages
    sockjs = [m for m in messages if "/api/sockjs/123/" in m]
    assert sockjs and "secret-session-id" not in sockjs[0]
    assert requestlog.fingerprint("secret-session-id") in sockjs[0]
    assert registry.get_sample_value("dashboard_event_loop_lag_seconds_bucket",
                                     {"le": "0.1"}) < \
        registry.get_sample_value("dashboard_event_loop_lag_seconds_count")


def test_quick_steps_say_nothing(caplog):
    async def main():
        looplag.install_step_timer()
        for _ in range(50):
            await asyncio.sleep(0)

    try:
        with caplog.at_level(logging.WARNING, logger="dashboard_api.looplag"):
            asyncio.run(main())
    finally:
        looplag.uninstall_step_timer()
    assert not caplog.records
