"""Whether a cluster's API server has stopped answering the watch cache, and since when.

A watch hears its API server all the time (events, bookmarks, the answer to a resumed watch).
When every store that answers lists has been stale (cache/store.py ``stale_since``: its watch
failed or went silent) for GRACE seconds, the cache is answering from what it last saw: the API
server has not answered since the newest of those moments. One store re-listing (a 410, a quiet
kind's watch resumed every idle period) is not an outage, so that is not said while any store
is current.

Read by the system banner and the pushed notices (they say "the cluster has not answered since
..."); nothing here changes how a list is answered.
"""

from __future__ import annotations

import datetime
import time
from typing import Iterable

# Seconds every store must have been stale before the cache says the API server is away: a
# restart of every watch at once (the API server restarted, the network blinked) that recovers
# at once says nothing.
GRACE = 2.0


def unanswered_since(stores: Iterable, clock=time.monotonic, wall=time.time,
                     grace: float = GRACE) -> float | None:
    """The Unix time since which no store that answers lists has heard its API server, when
    every one of them has been stale for ``grace`` seconds at least; None otherwise (or when
    no store answers yet). ``clock`` is the stores' clock."""
    now = clock()
    newest = None
    for store in stores:
        if not store.serving():
            continue   # not synced yet, or not cached: answers nothing from here
        since = store.stale_since
        if since is None or now - since < grace:
            return None
        newest = since if newest is None else max(newest, since)
    if newest is None:
        return None
    return wall() - (now - newest)


def of_cache(cache) -> float | None:
    """``unanswered_since`` of a watch cache's stores (None for no cache)."""
    if cache is None:
        return None
    stores = [cached.store for cached in list(cache.by_name.values())]
    if not stores:
        return None
    return unanswered_since(stores, clock=stores[0].clock)


def described(since: float, now: float | None = None) -> str:
    """What a person is told: "The cluster's API server has not answered since 12:03:04 UTC:
    the lists show what was last seen then." (the date too when it is not today's)."""
    at = datetime.datetime.fromtimestamp(since, datetime.timezone.utc)
    today = datetime.datetime.fromtimestamp(time.time() if now is None else now,
                                            datetime.timezone.utc).date()
    when = at.strftime("%H:%M:%S UTC" if at.date() == today else "%Y-%m-%d %H:%M:%S UTC")
    return ("The cluster's API server has not answered since %s: the lists show what was "
            "last seen then." % when)
