"""The clusters the gateway serves, by name: built from the configuration, started on first
use, let go when idle, and following the kubeconfig files without a restart.

Every cluster has its own API client (pools, executor, rate limit, deadlines), so a cluster
that is down or hung holds only its own workers; the registry's own work (re-reading the files,
building a cluster's client) runs off the event loop.
"""

import asyncio
import logging

from dashboard_api.clusters import sources
from dashboard_api.clusters.context import ClusterContext
from dashboard_api.clusters.usable import Usability
from dashboard_api.kubeapi import config as cluster_config
from dashboard_api.serving.paths import split_path

log = logging.getLogger("dashboard_api")


class Clusters:
    """``make_api(config)`` builds a kubeapi.client.Cluster from a ClusterConfig (one executor
    of its own each); ``secret`` is the shared key terminal ids are sealed under."""

    def __init__(self, options, make_api, secret):
        self.options = options
        self.make_api = make_api
        self.secret = secret
        self.by_name = {}
        self.default_name = None
        self.auth_modes = {}   # name -> identity mode (--cluster-auth); others: forward
        self.audit = None      # the audit trail's record(entries), and who tokens name:
        self.persons = None    # given to every cluster (attach_audit), for its terminals
        self.usability = Usability()   # which clusters a signed-in person can use
        self._tasks = []

    # --- building ----------------------------------------------------------------------------

    def load(self):
        """Builds every configured cluster (at start-up). Raises cluster_config.ConfigError."""
        entries, default = sources.read(self.options)
        self.auth_modes = sources.auth_modes(self.options, entries, default)
        for entry in entries:
            self.by_name[entry.name] = self._build(entry, entry.name == default)
        self.default_name = default

    def _build(self, entry, default, config=None):
        # On the event loop: a cluster's cache makes asyncio objects (bound to the loop that
        # is current when they are made, on Python 3.9).
        if config is None:
            config = sources.load(entry, self.options, default)
        built = ClusterContext(entry.name, self.make_api(config), self.options, self.secret,
                               default=default, fingerprint=entry.fingerprint,
                               auth_mode=self.auth_modes.get(entry.name, sources.FORWARD))
        built.audit, built.persons = self.audit, self.persons
        return built

    def attach_audit(self, record, persons):
        """Terminal sessions of every cluster, now and later, are recorded with ``record``
        (audit.trail.AuditTrail.record, or None), their people named by ``persons``."""
        self.audit, self.persons = record, persons
        for cluster in self:
            cluster.audit, cluster.persons = record, persons

    # --- lookup --------------------------------------------------------------------------------

    def impersonating(self):
        """Whether any cluster is in ``impersonate`` mode."""
        return sources.IMPERSONATE in self.auth_modes.values()

    @property
    def default(self):
        return self.by_name[self.default_name]

    def get(self, name):
        """The cluster named ``name`` (None: the default), marked used; None when unknown."""
        cluster = self.default if name is None else self.by_name.get(name)
        return cluster.use() if cluster is not None else None

    def sessions_of(self, path):
        """The terminal sessions of the cluster a SockJS path belongs to (None: unknown)."""
        name, _rest = split_path(path)
        cluster = self.default if name is None else self.by_name.get(name)
        return cluster.terminals if cluster is not None else None

    def __iter__(self):
        return iter(list(self.by_name.values()))

    def __len__(self):
        return len(self.by_name)

    # --- keeping up ----------------------------------------------------------------------------

    def start_upkeep(self):
        """Starts the idle reaper and the configuration poll (flags permitting)."""
        idle = getattr(self.options, "cluster_idle_timeout", 0)
        if idle:
            self._tasks.append(asyncio.ensure_future(self._reap(idle)))
        poll = getattr(self.options, "cluster_config_poll", 0)
        if poll and (self.options.kubeconfig or getattr(self.options, "clusters", None)):
            self._tasks.append(asyncio.ensure_future(self._follow(poll)))

    async def _reap(self, idle):
        while True:
            await asyncio.sleep(min(idle, 60.0))
            for cluster in self:
                if not cluster.default and cluster.started and cluster.idle_for() >= idle:
                    try:
                        cluster.sleep()
                    except Exception:  # one cluster's failure must not end the upkeep
                        log.exception("cluster %s could not be let go", cluster.name)

    async def _follow(self, period):
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(period)
            try:
                entries, default = await loop.run_in_executor(None, sources.read, self.options)
            except cluster_config.ConfigError as exc:
                log.warning("kubeconfig not re-read (keeping the clusters served): %s", exc)
                continue
            try:
                await self._apply(entries, default, loop)
            except Exception:  # keep following the files whatever one change did
                log.exception("the clusters' configuration was not applied in full")

    async def _apply(self, entries, default, loop):
        wanted = {e.name: e for e in entries}
        for name in list(self.by_name):
            cluster = self.by_name[name]
            entry = wanted.get(name)
            if cluster.default:
                continue  # the default cluster stays as started; a restart picks up its change
            if entry is None or entry.fingerprint != cluster.fingerprint:
                del self.by_name[name]
                cluster.stop()
                log.info("cluster %s %s", name, "removed" if entry is None else "changed")
        for name, entry in wanted.items():
            if name in self.by_name:
                continue
            try:
                config = await loop.run_in_executor(None, sources.load, entry, self.options,
                                                    False)
                built = self._build(entry, False, config)
            except cluster_config.ConfigError as exc:
                log.warning("cluster %s not added: %s", name, exc)
                continue
            self.by_name[name] = built
            log.info("cluster %s added (%s)", name, built.api.config.host)

    def stop(self):
        for task in self._tasks:
            task.cancel()
        for cluster in self:
            cluster.stop()
