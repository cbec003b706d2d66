"""The notices' WebSocket queue (handlers/live.py): at most MAX_QUEUED messages written and not
yet taken by the network; beyond, the connection is said to be too slow."""

import asyncio

from dashboard_api.handlers import live


def test_messages_not_taken_by_the_network_are_bounded():
    loop = asyncio.new_event_loop()
    try:
        handler = live.LiveHandler.__new__(live.LiveHandler)
        handler._queued = 0
        pending = []

        def write_message(text):
            future = loop.create_future()
            pending.append(future)
            return future
        handler.write_message = write_message
        assert all(handler._send({"type": "changed", "id": str(i)})
                   for i in range(live.MAX_QUEUED))
        assert handler._send({"type": "changed", "id": "one more"}) is False
        pending[0].set_result(None)
        loop.run_until_complete(asyncio.sleep(0))
        assert handler._queued == live.MAX_QUEUED - 1
        assert handler._send({"type": "changed", "id": "now"}) is True
    finally:
        loop.close()
