"""The notices of one cluster: its connections, their subscriptions, and the loop that tells
each what changed (live/channel.py is one connection).

A subscription is checked as its list would be answered (lists/pipeline.py ``validator``: the
caller authorized with their own token, the page's validator made, nothing of the page built)
when it is made, whenever what its page depends on has moved, and every RECHECK seconds
regardless (a right revoked, a token no longer accepted ends it). Every TICK seconds the loop
compares, per subscription, the versions of the stores its page reads (the rows' store in its
namespaces, each related read's, what the decorators add): a few tuple compares, nothing asked
of anyone; only a subscription whose versions moved is checked, and it is told "changed" when
its validator moved, at most once every DEBOUNCE seconds (a change within that second is told
at its end). It also says when the cluster's API server stops and starts answering
(cache/outage.py).

A list that has no validator (read from the API server on each request, or a page that reads
per row, as nodes') cannot be watched: its subscription is refused, and the browser refreshes
it itself. A list of a cached kind that is answered from the API server only for now (its
store re-lists) or that could not be checked (the API server away) is subscribed all the same
and checked again a little later. The hub's memory is its connections' subscriptions (at most
MAX_SUBSCRIPTIONS each, and connections are bounded by --max-connections); a slow connection is
closed by its own bounded queue (handlers/live.py). The loop runs while the hub has
connections; ``close_all`` ends them (the cluster let go or removed).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from typing import Any

from dashboard_api.cache import outage
from dashboard_api.live import subscriptions
from dashboard_api.live.channel import GONE, UNAUTHORIZED
from dashboard_api.query.reads import STANDARD
from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.live")

TICK = 0.25        # seconds between two looks at the subscriptions' versions
DEBOUNCE = 1.0     # at most one notice a second per subscription
RECHECK = 30.0     # a subscription is authorized again at least this often
RETRY = 1.0        # a validator that could not be made now is tried again after this
UNSERVED_RETRY = 5.0   # ... and one whose cached kind is answered from the API server for now
BATCH = 64         # checks awaited together (the event loop is free between batches)


class Subscription:
    """One subscription of a connection: its ``listing`` (live/subscriptions.py), the
    validator it was last told of (``tag``), its rows (a cache/view.py StoreView), the
    versions last seen (``seen``) and when it was checked and told."""

    __slots__ = ("id", "listing", "tag", "rows", "related", "seen", "due", "noticed",
                 "pending")

    def __init__(self, sid: str, listing: Any):
        self.id = sid
        self.listing = listing
        self.tag = None
        self.rows = None
        self.related = ()
        self.seen = None
        self.due = 0.0
        self.noticed = float("-inf")
        self.pending = False


class NotWatched(ApiError):
    def __init__(self, what):
        super().__init__(501, "%s: the gateway cannot tell when it changes, so it cannot "
                         "notify of it; refresh it instead" % what, "NotWatched")


class Hub:
    """``cluster``: what the hub reads of its cluster (clusters/context.py ClusterContext):
    ``api``, ``pipeline``, ``cache``, ``unanswered_since()``."""

    def __init__(self, cluster: Any, clock=time.monotonic, wall=time.time):
        self.cluster = cluster
        self.clock = clock
        self.wall = wall
        self.channels = set()
        self.since = None      # what the connections were last told of the API server
        self.notices = 0       # "changed" notices sent
        self.checks = 0        # subscriptions checked as their lists
        self._task = None

    @property
    def active(self) -> bool:
        return bool(self.channels)

    # --- connections -------------------------------------------------------------------------

    def join(self, channel: Any) -> None:
        self.channels.add(channel)
        self.since = self.cluster.unanswered_since()
        channel.send(dict(self._cluster_state(self.since), type="ready"))
        self._wake()

    def _wake(self):
        """Starts the loop unless it runs."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._loop())

    def leave(self, channel: Any) -> None:
        self.channels.discard(channel)
        channel.subscriptions.clear()

    def close_all(self, reason: str) -> None:
        """Ends every connection (the cluster is let go or no longer served)."""
        for channel in list(self.channels):
            channel.close(GONE, reason)
        if self._task is not None:
            self._task.cancel()
            self._task = None

    # --- subscriptions -----------------------------------------------------------------------

    async def subscribe(self, channel: Any, sid: str, path: Any) -> None:
        sub = None
        try:
            listing = subscriptions.parse(path)
            if listing.kind.page_needs is not None:
                raise NotWatched("a %s list reads each of its items' own objects"
                                 % listing.kind.name)
            sub = Subscription(sid, listing)
            sub.tag = await self._check(channel, sub)
        except ApiError as exc:
            if exc.code == 401:
                channel.close(UNAUTHORIZED, "the token was not accepted: sign in again")
                return
            if sub is None or exc.code < 500 or isinstance(exc, NotWatched):
                channel.send(_refused(sid, exc))
                return
            # the API server away or slow (an outage, an authorization review that timed
            # out): subscribed all the same, and checked again after RETRY, as a recheck is
            sub.rows, sub.related, sub.due = None, (), self.clock() + RETRY
            sub.seen = self._versions(sub)
        if channel.closed:
            return
        channel.subscriptions[sid] = sub
        channel.send({"type": "subscribed", "id": sid})

    def unsubscribe(self, channel: Any, sid: str) -> None:
        channel.subscriptions.pop(sid, None)

    async def _check(self, channel, sub):
        """The subscription's validator now, its caller authorized as for its list; the
        versions it depends on are noted. Raises what the list would (and NotWatched)."""
        listing = sub.listing
        pipeline = self.cluster.pipeline
        fetch = pipeline.fetch(channel.handle, self.cluster.api)
        try:
            tag, rows = await pipeline.validator(fetch, listing.kind, listing.namespaces,
                                                 listing.query)
            self.checks += 1
            if getattr(rows, "version", lambda: None)() is None:
                if not await fetch.cached(listing.kind):
                    raise NotWatched("this list is read from the API server on each request")
                # a cached kind answered from the API server for now (its store re-lists, or
                # the review and the LIST disagreed): no versions to follow until it serves
                # again; checked every UNSERVED_RETRY seconds (each check is a LIST) till then
                sub.rows, sub.related = None, ()
                sub.seen = self._versions(sub)
                sub.due = self.clock() + UNSERVED_RETRY
                return None
        finally:
            fetch.close()
        sub.rows = rows
        sub.related = self._related(listing.kind, rows)
        sub.seen = self._versions(sub)
        sub.due = self.clock() + (RECHECK if tag is not None else RETRY)
        return tag

    def _related(self, kind, rows):
        """(store, namespaces) of each related read the kind's list makes, when cached."""
        cache = self.cluster.cache
        out = []
        for need in kind.list_needs:
            cached = cache.by_name.get(STANDARD[need]) if cache is not None else None
            out.append((cached.store if cached is not None else None, rows.namespaces))
        return tuple(out)

    def _versions(self, sub):
        """What the subscription's page depends on, as the stores and decorators say now."""
        stamps = tuple(stamp() for stamp in (getattr(d, "stamp", None)
                                              for d in self.cluster.pipeline.decorators)
                       if stamp is not None) if sub.listing.kind.metrics else ()
        return (sub.rows.version() if sub.rows is not None else None,
                tuple(store.version(names) if store is not None else None
                      for store, names in sub.related),
                stamps)

    # --- the loop ----------------------------------------------------------------------------

    async def _loop(self):
        while self.channels:
            try:
                await self._tick()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 (a fault of one look must not end the notices)
                log.exception("the notices of cluster %s failed a look",
                              getattr(self.cluster, "name", "?"))
            await asyncio.sleep(TICK)

    async def _tick(self):
        self._tell_cluster_state()
        now, wall = self.clock(), self.wall()
        if any(sub.listing.kind.metrics for channel in self.channels
               for sub in channel.subscriptions.values()):
            await self._refresh_decorations()
        due = []
        for channel in list(self.channels):
            if channel.expires is not None and wall >= channel.expires:
                channel.close(UNAUTHORIZED, "the credentials expired at %s: sign in again"
                              % _stamp(channel.expires))
                continue
            for sub in list(channel.subscriptions.values()):
                if sub.pending and now - sub.noticed >= DEBOUNCE:
                    self._notice(channel, sub, now)
                if now >= sub.due or self._versions(sub) != sub.seen:
                    due.append((channel, sub))
        for start in range(0, len(due), BATCH):
            await asyncio.gather(*(self._recheck(channel, sub)
                                   for channel, sub in due[start:start + BATCH]))

    async def _recheck(self, channel, sub):
        if channel.closed or channel.subscriptions.get(sub.id) is not sub:
            return
        try:
            tag = await self._check(channel, sub)
        except ApiError as exc:
            if channel.closed or channel.subscriptions.get(sub.id) is not sub:
                return
            if exc.code == 401:
                channel.close(UNAUTHORIZED, "the token is no longer accepted: sign in again")
            elif exc.code < 500:   # a right taken away, a namespace gone, no longer watched
                channel.subscriptions.pop(sub.id, None)
                channel.send(_refused(sub.id, exc))
            else:   # the API server away: tried again at the next change or RETRY
                sub.due = self.clock() + RETRY
            return
        if tag is None:   # could not be told now (a scrape under way): again after RETRY
            return
        if tag != sub.tag:
            sub.tag = tag
            now = self.clock()
            if now - sub.noticed >= DEBOUNCE:
                self._notice(channel, sub, now)
            else:
                sub.pending = True

    def _notice(self, channel, sub, now):
        sub.noticed = now
        sub.pending = False
        self.notices += 1
        channel.send({"type": "changed", "id": sub.id})

    async def _refresh_decorations(self):
        """Lets the decorators learn what their additions now depend on (the sidecar's
        newest scrape: at most one question while one is due, metrics/sidecar.py)."""
        for decorate in self.cluster.pipeline.decorators:
            refresh = getattr(decorate, "refresh", None)
            if refresh is not None:
                await refresh()

    def _tell_cluster_state(self):
        since = self.cluster.unanswered_since()
        if (since is None) == (self.since is None):
            return
        self.since = since
        message = dict(self._cluster_state(since), type="cluster")
        for channel in list(self.channels):
            channel.send(message)

    def _cluster_state(self, since):
        if since is None:
            return {"answering": True}
        return {"answering": False, "since": _stamp(since),
                "message": outage.described(since, self.wall())}


def _refused(sid, error):
    return {"type": "refused", "id": sid, "code": error.code, "reason": error.reason,
            "message": error.message}


def _stamp(seconds):
    return datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
