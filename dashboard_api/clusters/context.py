"""What belongs to one cluster: its API client, discovery, watch cache, list pipeline, access
answers, settings, metrics sidecar and terminal sessions.

A handler is given the ClusterContext of its request's path (app/server.py) and reaches
nothing of a cluster through anything else, so that one cluster's objects, answers, budgets and
faults never meet another's.
"""

import asyncio
import logging
import time

from dashboard_api.audit import entry as audit_entry
from dashboard_api.audit.store import TERMINAL_ROUTE
from dashboard_api.auth import persons as persons_mod
from dashboard_api.cache import outage
from dashboard_api.cache.watchcache import WatchCache
from dashboard_api.clusters.probe import Probe
from dashboard_api.lists.access import OUTAGE_MEMORY, Access
from dashboard_api.lists.cachesource import CacheSource
from dashboard_api.lists.candidates import NamespaceCandidates
from dashboard_api.lists.passthrough import ChunkedList, ListSlots
from dashboard_api.lists.rbacstamp import RbacStamp
from dashboard_api.live.hub import Hub
from dashboard_api.lists.pipeline import Pipeline
from dashboard_api.metrics import lists as metric_lists
from dashboard_api.metrics.sidecar import SidecarClient, read_token as read_sidecar_token
from dashboard_api.serving.bearer import subject
from dashboard_api.terminal import endpoint as terminal
from dashboard_api.web.settingsstore import SettingsStore

log = logging.getLogger("dashboard_api")


class ClusterContext:
    """``name`` (its path segment), ``api`` (kubeapi.client.Cluster: pools, executor, rate limit,
    discovery), ``default`` (served at the root too), ``settings``, ``sidecar`` (None when
    metrics are off), ``cache`` (None when off), ``source`` and ``pipeline`` (the list
    pipeline over the cache or the caller's own LISTs), ``terminals``, ``probe`` (version and
    reachability, clusters/probe.py), ``auth_mode`` (``forward``: callers' tokens go to the
    API server as they are; ``impersonate``: a person the gateway verified goes with the
    cluster's own credentials and Impersonate-* headers naming them, auth/persons.py).

    The watch cache and the sidecar client start on first use (``use``); ``sleep`` lets them go
    after an idle time and the next use starts them afresh."""

    def __init__(self, name, api, options, secret, default=False, fingerprint="",
                 clock=time.monotonic, auth_mode="forward"):
        self.name = name
        self.api = api
        self.options = options
        self.default = default
        self.auth_mode = auth_mode
        self.fingerprint = fingerprint
        self.clock = clock
        self.settings = SettingsStore(api, options.namespace, options.settings_config_map_name)
        self.terminals = terminal.make_sessions(api, secret, name,
                                                impersonate=self.impersonates,
                                                on_event=self._terminal_event)
        # Where terminal sessions are recorded: the audit trail's record(entries), and who a
        # token names (auth.persons.Persons); set by the registry (Clusters.attach_audit).
        self.audit = None
        self.persons = None
        self.probe = Probe(api)  # its version and reachability, for the list of clusters
        self.live = Hub(self)    # the browsers told when its lists change (live/)
        self.last_used = clock()
        self._starting = None   # the task starting the cache and sidecar, once used
        self._build()

    def _terminal_event(self, event, ticket, client, facts):
        """A terminal of this cluster started a shell or ended: its audit entry (who, pod,
        container, how it went; never what was typed or shown)."""
        if self.audit is not None:
            asyncio.ensure_future(self._record_terminal(event, ticket, client, facts,
                                                        time.time()))

    async def _record_terminal(self, event, ticket, client, facts, now):
        lines = dict(ticket.impersonation)
        person = None
        if ticket.via_gateway:   # the gateway verified this person when it issued the id
            person = persons_mod.Person(lines.get("Impersonate-User", ""), (), None, 0)
        elif self.persons is not None:
            person = await self.persons.resolve_quietly(ticket.token)
        started = event == "opened" or facts.get("started") is not None
        status = 101 if started else 502
        user, verified, source, details = audit_entry.who(
            person, subject(ticket.token),
            None if ticket.via_gateway else lines.get("Impersonate-User"), 200 if started
            else 0)
        details.update({"event": event, "container": ticket.container})
        for name in ("shell", "code", "reason"):
            if facts.get(name) is not None:
                details[name] = facts[name]
        if event == "closed" and facts.get("started") is not None:
            details["shell"] = facts["started"]
        reason = "" if started else "NoShell"
        message = "" if started else str(facts.get("reason") or "")
        self.audit([audit_entry.make(
            now, self.name, user, verified, source, client, TERMINAL_ROUTE, "EXEC",
            audit_entry.Target("pod", "", "pods", ticket.namespace, ticket.pod), status,
            reason, message, facts.get("session", ""), details)])

    @property
    def impersonates(self):
        return self.auth_mode == "impersonate"

    def _build(self):
        self.cache, self.source = make_source(self.options, self.api, self.settings)
        self.sidecar = make_sidecar(self.options, self.api, self.default)
        self.pipeline = make_pipeline(self.source, self.sidecar,
                                      web_ui=self.options.web_ui_compat)

    @property
    def started(self):
        return self._starting is not None

    def use(self):
        """Marks the cluster used now and starts its cache and sidecar the first time (in the
        background: until its kinds have synced, lists wait for them or pass through)."""
        self.last_used = self.clock()
        if self._starting is None:
            self._starting = asyncio.ensure_future(self._start())
        return self

    async def start(self):
        """Starts the cluster now and waits until its cache has registered its kinds (the
        default cluster, at start-up)."""
        await asyncio.shield(self.use()._starting)

    async def _start(self):
        if self.sidecar is not None:
            self.sidecar.start()
        if self.cache is not None:
            try:
                await self.cache.start()
            except Exception:  # discovery of a cluster that is down: lists pass through
                log.warning("cluster %s: the watch cache did not start", self.name,
                            exc_info=True)

    def idle_for(self):
        return self.clock() - self.last_used

    def sleep(self):
        """Lets the cache and the sidecar client go (a cluster unused for the idle time);
        kept while a terminal runs or a browser is told of its changes. Returns whether it
        slept."""
        if self._starting is None or self.terminals.running or self.live.active:
            return False
        log.info("cluster %s unused for %ds: its watch cache is let go until next used",
                 self.name, self.idle_for())
        self.live.close_all("this cluster's watch cache was let go: reconnect to watch it")
        self._stop_services()
        self._starting = None
        self._build()
        return True

    def stop(self):
        """For good: the cluster is removed or the process exits."""
        self.terminals.close_all("This cluster is no longer served here.")
        self.live.close_all("this cluster is no longer served here")
        self.probe.stop()
        self._stop_services()
        self.api.shutdown()

    def _stop_services(self):
        if self._starting is not None and not self._starting.done():
            self._starting.cancel()
        if self.sidecar is not None:
            self.sidecar.stop()
        if self.cache is not None:
            self.cache.stop()

    def unanswered_since(self):
        """The Unix time since which the cluster's API server has not answered its watch
        cache, while the cache answers lists from what it last saw (cache/outage.py); None
        while it answers, or before the cache has synced, or when there is no cache."""
        if self._starting is None:
            return None
        return outage.of_cache(self.cache)

    def access(self):
        """The cluster's access answers (lists/access.py), the cache's or the pass-through's."""
        return self.source.access

    def cache_state(self):
        """``off``, ``stopped`` (not used yet, or let go), ``syncing``, ``synced``."""
        if self.cache is None:
            return "off"
        if self._starting is None:
            return "stopped"
        return "synced" if self.cache.registered.is_set() and self.cache.synced() \
            else "syncing"


def make_sidecar(options, api, default=True):
    """The sidecar client, or None where the metrics integration is off. --sidecar-host is
    the default cluster's sidecar; another cluster's is reached through its own API server's
    service proxy."""
    if options.proxy or options.metrics_provider == "none":
        return None
    token_file = getattr(options, "sidecar_token_file", None)
    return SidecarClient(api, options.sidecar_host if default else None, options.namespace,
                         options.metrics_scraper_service_name,
                         options.metric_client_check_period,
                         token=read_sidecar_token(token_file) if token_file else None)


def make_source(options, api, settings):
    """(the watch cache or None, the list source): the cache unless it is turned off or the
    service has no identity of its own (--proxy); pass-through lists are bounded either way."""
    use_cache = options.watch_cache and not options.proxy
    cache = WatchCache(api, opt_in=options.watch_cache_opt_in,
                       idle=options.watch_idle_timeout) if use_cache else None
    candidates = NamespaceCandidates(api, settings, cache)
    max_age = getattr(options, "access_cache_max_age", 0.0)
    passthrough = ChunkedList(
        slots=ListSlots(options.max_large_lists, options.large_list_wait),
        access=Access(options.access_cache_ttl,
                      memory=getattr(options, "access_outage_memory", OUTAGE_MEMORY),
                      vouch=RbacStamp(cache) if cache is not None and max_age else None,
                      max_age=max_age),
        candidates=candidates)
    if cache is None:
        return None, passthrough
    return cache, CacheSource(cache, passthrough, candidates, sync_wait=options.cache_sync_wait)


def make_pipeline(source, sidecar, web_ui=False):
    """A cluster's list pipeline: its source, selection cache and decorators (metrics in
    lists and details, with ``sidecar``; None: metrics off; upstream's shapes for the web UI
    with ``web_ui``), built once per cluster."""
    metrics = metric_lists.MetricsDecorator(sidecar, web_ui)
    return Pipeline(source, decorators=[metrics], detail_decorators=[metrics.detail])
