"""Which group/version serves a resource, learned from the API server's discovery documents.

Versions are never hard-coded: a 1.20 cluster serves CronJob as batch/v1beta1, a current one as
batch/v1. A caller names the versions it understands, best first; the first one the server
serves wins, else the group's preferred version. Discovery is readable by every authenticated
user, so the caller's own handle fetches it; the result is shared by the process and refreshed
after ``ttl`` seconds, or sooner when a resource is not found. A refresh after ``ttl`` runs in
the background, the groups known answering meanwhile: while the API server does not answer,
lists from the watch cache need no discovery that waits for it (a failed refresh is tried
again ``min_refresh`` seconds later).
"""

import asyncio
import logging
import time
import urllib.parse

from dashboard_api.serving.errors import ApiError

log = logging.getLogger("dashboard_api.discovery")


class Resource:
    """One served resource: where it lives and what it is."""

    __slots__ = ("group", "version", "plural", "kind", "namespaced", "subresources")

    def __init__(self, group, version, plural, kind, namespaced, subresources):
        self.group = group
        self.version = version
        self.plural = plural
        self.kind = kind
        self.namespaced = namespaced
        self.subresources = subresources

    @property
    def api_version(self):
        return "%s/%s" % (self.group, self.version) if self.group else self.version

    def path(self, namespace=None, name=None, subresource=None):
        """The REST path of the collection, of one object, or of one object's subresource.

        Namespace and name come from the caller's URL, already decoded: each is quoted as one
        path segment, so `a%2F..%2Fsecrets` cannot reach another resource or add a query.
        """
        base = "/apis/%s/%s" % (self.group, self.version) if self.group else "/api/" + self.version
        if self.namespaced and namespace:
            base += "/namespaces/" + segment(namespace)
        base += "/" + self.plural
        if name is not None:
            base += "/" + segment(name)
            if subresource:
                base += "/" + subresource
        return base


def segment(value):
    """One path segment of a user-given name. No object name is `.` or `..` or holds `/` or
    `%` (the API server's path-segment rule), and the API server would decode `%2F` itself."""
    if value in ("", ".", "..") or "/" in value or "%" in value:
        raise ApiError(400, "invalid name %r" % value, "BadRequest")
    return urllib.parse.quote(value, safe="")


class Discovery:
    def __init__(self, ttl=300.0, min_refresh=10.0, clock=time.monotonic):
        self.ttl = ttl
        self.min_refresh = min_refresh
        self._clock = clock
        self._groups = None     # group -> {"preferred": version, "versions": [versions]}
        self._resources = {}    # (group, version) -> future of {plural: Resource}
        self._fetched = 0.0
        self._lock = asyncio.Lock()
        self._refreshing = None   # the background refresh after ttl, while under way

    async def resolve(self, handle, group, plural, versions=()):
        """The Resource for ``plural`` in ``group`` ("" is the core group); 404 if not served."""
        for attempt in range(2):
            await self._ensure_groups(handle, force=attempt == 1)
            found = await self._find(handle, group, plural, versions)
            if found:
                return found
        raise ApiError(404, "the server does not serve %s%s"
                       % (plural, "." + group if group else ""), "NotFound")

    async def find_kind(self, handle, kind):
        """The Resource whose lower-cased Kind is ``kind`` (what the UI's typeMeta says), in
        each group's preferred version, the core group first; 404 if none."""
        for attempt in range(2):
            await self._ensure_groups(handle, force=attempt == 1)
            for group, info in list(self._groups.items()):
                try:
                    served = await self._group_version(handle, group, info["preferred"])
                except ApiError as exc:
                    if exc.code == 401:
                        raise
                    continue  # an aggregated API that is down must not hide the others
                for resource in served.values():
                    if resource.kind.lower() == kind:
                        return resource
        raise ApiError(404, "the server serves no resource of kind %s" % kind, "NotFound")

    async def by_kind(self, handle, api_version, kind):
        """The Resource of an object's ``apiVersion`` and ``kind`` (a deploy file's document);
        404 if that version does not serve that kind."""
        group, _, version = api_version.rpartition("/")
        for attempt in range(2):
            await self._ensure_groups(handle, force=attempt == 1)
            if version in (self._groups.get(group) or {}).get("versions", ()):
                for resource in (await self._group_version(handle, group, version)).values():
                    if resource.kind == kind:
                        return resource
        raise ApiError(404, "unknown resource kind: %s in %s" % (kind, api_version), "NotFound")

    async def versions(self, handle, group):
        """The versions the server serves of ``group``, as discovery lists them ([] if none)."""
        await self._ensure_groups(handle)
        return list((self._groups.get(group) or {}).get("versions", ()))

    async def _find(self, handle, group, plural, versions):
        info = self._groups.get(group)
        if not info:
            return None
        candidates = [v for v in versions if v in info["versions"]] or [info["preferred"]]
        for version in candidates:
            resource = (await self._group_version(handle, group, version)).get(plural)
            if resource:
                return resource
        return None

    async def _ensure_groups(self, handle, force=False):
        now = self._clock()
        stale = self._groups is None or now - self._fetched > self.ttl
        if force and now - self._fetched > self.min_refresh:
            stale = True
        if not stale:
            return
        if self._groups is not None and not force:
            if self._refreshing is None or self._refreshing.done():
                self._refreshing = asyncio.ensure_future(self._refresh_behind(handle))
            return
        await self._refresh(handle, force)

    async def _refresh_behind(self, handle):
        """The refresh after ``ttl``, in the background; a failure keeps the groups known and
        is tried again after ``min_refresh``."""
        try:
            await self._refresh(handle, False)
        except Exception as exc:  # noqa: BLE001 (the API server away, a token refused: later)
            self._fetched = self._clock() - self.ttl + self.min_refresh
            log.info("discovery not refreshed (the groups known still answer): %s",
                     getattr(exc, "message", exc))

    async def _refresh(self, handle, force):
        async with self._lock:
            if self._groups is not None and self._clock() - self._fetched <= \
                    (self.min_refresh if force else self.ttl):
                return
            core = await handle.get("/api")
            groups = {"": {"preferred": core["versions"][0], "versions": core["versions"]}}
            for g in (await handle.get("/apis")).get("groups", []):
                groups[g["name"]] = {
                    "preferred": g["preferredVersion"]["version"],
                    "versions": [v["version"] for v in g.get("versions", [])],
                }
            self._groups = groups
            self._resources = {}
            self._fetched = self._clock()

    async def _group_version(self, handle, group, version):
        """The resources of one group/version, fetched once however many ask at the same time.

        The fetch runs with the first asker's token; if it fails, the others fetch again with
        their own, so one caller's bad token never fails another's request.
        """
        key = (group, version)
        pending = self._resources.get(key)
        if pending is not None:
            try:
                return await asyncio.shield(pending)
            except ApiError:
                pass
        pending = asyncio.ensure_future(self._fetch_group_version(handle, group, version))
        self._resources[key] = pending
        try:
            return await asyncio.shield(pending)
        except ApiError:
            if self._resources.get(key) is pending:
                del self._resources[key]
            raise

    @staticmethod
    async def _fetch_group_version(handle, group, version):
        path = "/apis/%s/%s" % (group, version) if group else "/api/" + version
        try:
            doc = await handle.get(path)
        except ApiError as exc:
            if exc.code != 404:
                raise
            doc = {}
        return parse_resource_list(group, version, doc)


def parse_resource_list(group, version, doc):
    resources = {}
    subresources = {}
    for r in doc.get("resources", []):
        name = r["name"]
        if "/" in name:
            parent, sub = name.split("/", 1)
            subresources.setdefault(parent, []).append(sub)
            continue
        resources[name] = Resource(group, version, name, r.get("kind", ""),
                                   bool(r.get("namespaced")), [])
    for parent, subs in subresources.items():
        if parent in resources:
            resources[parent].subresources = subs
    return resources
