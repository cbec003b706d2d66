"""The watch cache's series on /metrics: state per kind, objects held, events applied, watch
restarts, seconds each kind has not been known current (0 while its watch streams; during a
re-list, since the watch ended), authorization answers reused and asked."""

from prometheus_client.core import Metric

STATES = ("syncing", "synced", "unavailable")


class CacheCollector:
    def __init__(self, cache, access):
        self.cache = cache
        self.access = access

    def describe(self):
        return []

    def collect(self):
        state = Metric("dashboard_cache_state", "1 for the state each cached kind is in", "gauge")
        objects = Metric("dashboard_cache_objects", "objects held per cached kind", "gauge")
        events = Metric("dashboard_cache_events_applied", "watch events applied per kind",
                        "counter")
        restarts = Metric("dashboard_cache_watch_restarts",
                          "watches restarted or re-listed after an error or 410", "counter")
        for kind, (current, held, applied, restarted) in sorted(self.cache.states().items()):
            for name in STATES:
                state.add_sample("dashboard_cache_state", {"kind": kind, "state": name},
                                 1 if name == current else 0)
            objects.add_sample("dashboard_cache_objects", {"kind": kind}, held)
            events.add_sample("dashboard_cache_events_applied", {"kind": kind}, applied)
            restarts.add_sample("dashboard_cache_watch_restarts", {"kind": kind}, restarted)
        stale = Metric("dashboard_cache_stale_seconds",
                       "seconds since the kind's store was last known current (0 while its "
                       "watch streams; during a re-list or a failed watch, since it ended)",
                       "gauge")
        quiet = Metric("dashboard_cache_watch_quiet_seconds",
                       "seconds since the kind's watch last heard from the API server (an "
                       "event or a bookmark, about every minute); past --watch-idle-timeout "
                       "the watch is taken for dead and resumed", "gauge")
        silent = Metric("dashboard_cache_watch_silent",
                        "watches closed and resumed for hearing nothing within "
                        "--watch-idle-timeout", "counter")
        for kind, cached in sorted(self.cache.by_name.items()):
            stale.add_sample("dashboard_cache_stale_seconds", {"kind": kind},
                             round(cached.store.staleness(), 3))
            if cached.reflector is not None:
                quiet.add_sample("dashboard_cache_watch_quiet_seconds", {"kind": kind},
                                 round(cached.reflector.quiet(), 3))
                silent.add_sample("dashboard_cache_watch_silent", {"kind": kind},
                                  cached.reflector.silent)
        authz = Metric("dashboard_cache_authorization_checks",
                       "list rights answered from the authorization cache (hit) or asked of the "
                       "API server (miss)", "counter")
        authz.add_sample("dashboard_cache_authorization_checks", {"result": "hit"},
                         self.access.hits)
        authz.add_sample("dashboard_cache_authorization_checks", {"result": "miss"},
                         self.access.misses)
        return [state, objects, events, restarts, stale, quiet, silent, authz]
