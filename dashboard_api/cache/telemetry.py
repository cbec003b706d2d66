"""The watch cache's series on /metrics: state per kind, objects held, events applied, watch
restarts, seconds each kind has not been known current (0 while its watch streams; during a
re-list, since the watch ended), authorization answers reused and asked."""

from prometheus_client.core import Metric

STATES = ("syncing", "synced", "unavailable")


class CacheCollector:
    """Every cluster's watch cache (``clusters``: clusters.registry.Clusters), each series
    labelled with its ``cluster``; a cluster whose cache is off or let go has none."""

    def __init__(self, clusters):
        self.clusters = clusters

    def describe(self):
        return []

    def collect(self):
        state = Metric("dashboard_cache_state", "1 for the state each cached kind is in", "gauge")
        objects = Metric("dashboard_cache_objects", "objects held per cached kind", "gauge")
        events = Metric("dashboard_cache_events_applied", "watch events applied per kind",
                        "counter")
        restarts = Metric("dashboard_cache_watch_restarts",
                          "watches restarted or re-listed after an error or 410", "counter")
        clusters = [(c.name, c.cache, c.source.access) for c in self.clusters]
        for cluster, cache, _access in clusters:
            if cache is None:
                continue
            for kind, (current, held, applied, restarted) in sorted(cache.states().items()):
                labels = {"kind": kind, "cluster": cluster}
                for name in STATES:
                    state.add_sample("dashboard_cache_state", dict(labels, state=name),
                                     1 if name == current else 0)
                objects.add_sample("dashboard_cache_objects", labels, held)
                events.add_sample("dashboard_cache_events_applied", labels, applied)
                restarts.add_sample("dashboard_cache_watch_restarts", labels, restarted)
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
        for cluster, cache, _access in clusters:
            for kind, cached in sorted((cache.by_name if cache else {}).items()):
                labels = {"kind": kind, "cluster": cluster}
                stale.add_sample("dashboard_cache_stale_seconds", labels,
                                 round(cached.store.staleness(), 3))
                if cached.reflector is not None:
                    quiet.add_sample("dashboard_cache_watch_quiet_seconds", labels,
                                     round(cached.reflector.quiet(), 3))
                    silent.add_sample("dashboard_cache_watch_silent", labels,
                                      cached.reflector.silent)
        authz = Metric("dashboard_cache_authorization_checks",
                       "list rights answered from the authorization cache (hit; vouched: past "
                       "--access-cache-ttl, the watched RBAC unchanged) or asked of the API "
                       "server (miss)", "counter")
        for cluster, _cache, access in clusters:
            authz.add_sample("dashboard_cache_authorization_checks",
                             {"result": "hit", "cluster": cluster}, access.hits - access.vouched)
            authz.add_sample("dashboard_cache_authorization_checks",
                             {"result": "vouched", "cluster": cluster}, access.vouched)
            authz.add_sample("dashboard_cache_authorization_checks",
                             {"result": "miss", "cluster": cluster}, access.misses)
        return [state, objects, events, restarts, stale, quiet, silent, authz]
