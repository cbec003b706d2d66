"""Identical concurrent work done once: ``SingleFlight.run(key, start)``.

The gateway has several places where many requests ask for the same thing at the same moment
(a page polled by sixteen tabs, an authorization review per namespace, one LIST, one selection of
the cache's rows). Each used to carry its own dictionary of futures; this is the one helper.

The first caller's ``start()`` runs as a task of its own: a caller that goes away (its client
closed the connection) does not cancel it for the others, who each await it shielded. A run is
forgotten as soon as it ends, so the next call starts a new one: remembering answers is a cache's
job (cachetools' TTLCache and LRUCache, where the callers need one), not this one's.
"""

import asyncio
import functools


class SingleFlight:
    def __init__(self):
        self._runs = {}   # key -> task

    def __contains__(self, key):
        return key in self._runs

    def __len__(self):
        return len(self._runs)

    async def run(self, key, start):
        """The result of the run of ``key`` under way, else of ``start()`` (an awaitable)."""
        task = self._runs.get(key)
        if task is None:
            task = asyncio.ensure_future(start())
            self._runs[key] = task
            task.add_done_callback(functools.partial(self._ended, key))
        return await asyncio.shield(task)

    def _ended(self, key, task):
        if self._runs.get(key) is task:
            del self._runs[key]
        if not task.cancelled():
            task.exception()  # every caller got it (or went away): nothing is left unread
