"""What a scrape joins of one pod (``PodFacts``), and the LIST that reads them.

``PodFacts`` = (namespace, name, uid, node, {container: (cpu_request, cpu_limit,
memory_request, memory_limit)}, (claim names)): the containers' requests and limits (the
``cpu/request``... metrics, and a node's sums), the pod's UID and the claims it mounts.

At 150,000 pods (issue #19) they are kept small: a pod's JSON is decoded with msgspec into
structs of only the fields read here (the rest of the ~5 KB is skipped, never built);
namespaces, nodes and container names are interned; quantities are converted once per distinct
string; and the container table is shared by every pod of the same template (the same dict
object), so a pod costs its tuple, its name and its UID.

``list_facts`` is the chunked LIST of the pods that are not done (``status.phase`` neither
Succeeded nor Failed): each page is decoded and reduced to facts in the pool thread that read it.
The pod watch (podwatch.py) uses it to sync; a scrape uses it only while the pods are not
watched (not yet synced, or the watch is forbidden).
"""

import functools
import logging
import sys
from typing import Optional

import msgspec

from metrics_sidecar import units
from metrics_sidecar.api import ScrapeError

log = logging.getLogger("metrics_sidecar.podfacts")

CHUNK = 500
MAX_CHUNKS = 1000
NOT_DONE = "status.phase!=Succeeded,status.phase!=Failed"
MAX_SHARED = 20000   # distinct container tables shared; beyond, each pod has its own
NO_RESOURCES = (0, 0, 0, 0)


class PodFacts(tuple):
    """(namespace, name, uid, node, {container: resources}, (claim names))."""

    __slots__ = ()


def pods_path(namespace):
    return "/api/v1/namespaces/%s/pods" % namespace if namespace else "/api/v1/pods"


def key(facts):
    """Where a pod's facts are kept: its UID (a string the facts hold already)."""
    return facts[2] or (facts[0], facts[1])


def _interned(value):
    return sys.intern(value) if isinstance(value, str) else value


@functools.lru_cache(maxsize=4096)
def _nanocores(text):
    return units.nanocores(text)


@functools.lru_cache(maxsize=4096)
def _bytes(text):
    return units.bytes_(text)


def _resources(requests, limits):
    """(cpu_request, cpu_limit, memory_request, memory_limit); a malformed quantity is 0."""
    out = []
    for quantities, name, convert in ((requests, "cpu", _nanocores), (limits, "cpu", _nanocores),
                                      (requests, "memory", _bytes), (limits, "memory", _bytes)):
        try:
            out.append(convert(quantities[name]) if quantities and name in quantities else 0)
        except (ValueError, TypeError, AttributeError):
            out.append(0)
    out = tuple(out)
    return NO_RESOURCES if out == NO_RESOURCES else out


_SHARED = {}


def _containers(items):
    """The {container: resources} dict of ``items`` ((name, resources) pairs), one object for
    every pod of the same template. Never mutated by anyone."""
    items = tuple(items)
    found = _SHARED.get(items)
    if found is None:
        found = dict(items)
        if len(_SHARED) < MAX_SHARED:
            found = _SHARED.setdefault(items, found)
    return found


def _facts(namespace, name, uid, node, containers, claims):
    return PodFacts((_interned(namespace), name, uid, _interned(node), _containers(containers),
                     tuple(claims) or ()))


# -- msgspec: only the fields read above ----------------------------------------------------

class _Claim(msgspec.Struct):
    claimName: Optional[str] = None


class _Volume(msgspec.Struct):
    persistentVolumeClaim: Optional[_Claim] = None


class _Resources(msgspec.Struct):
    requests: Optional[dict] = None
    limits: Optional[dict] = None


class _Container(msgspec.Struct):
    name: Optional[str] = None
    resources: Optional[_Resources] = None


class _Spec(msgspec.Struct):
    nodeName: Optional[str] = None
    containers: Optional[list[_Container]] = None
    volumes: Optional[list[_Volume]] = None


class _Meta(msgspec.Struct):
    namespace: Optional[str] = None
    name: Optional[str] = None
    uid: Optional[str] = None
    resourceVersion: Optional[str] = None


class Pod(msgspec.Struct):
    metadata: Optional[_Meta] = None
    spec: Optional[_Spec] = None


class _ListMeta(msgspec.Struct):
    resourceVersion: Optional[str] = None
    next: Optional[str] = msgspec.field(default=None, name="continue")


class _List(msgspec.Struct):
    metadata: Optional[_ListMeta] = None
    items: Optional[list[msgspec.Raw]] = None   # one item decoded at a time


decode_pod = msgspec.json.Decoder(Pod).decode
_decode_list = msgspec.json.Decoder(_List).decode
_NO_SPEC = _Spec()


def facts_of(pod):
    """The facts of a decoded ``Pod`` struct; None without a name."""
    meta, spec = pod.metadata, pod.spec or _NO_SPEC
    if meta is None or not meta.name:
        return None
    containers = []
    for c in spec.containers or ():
        res = c.resources
        containers.append((_interned(c.name), _resources(res.requests, res.limits)
                           if res is not None else NO_RESOURCES))
    claims = (v.persistentVolumeClaim.claimName for v in spec.volumes or ()
              if v.persistentVolumeClaim is not None and v.persistentVolumeClaim.claimName)
    return _facts(meta.namespace, meta.name, meta.uid, spec.nodeName, containers, claims)


def pod_facts(pod):
    """The facts of a pod decoded as a dict (or facts already): the same fields as ``facts_of``
    reads, through the same struct; None without a name."""
    if isinstance(pod, PodFacts):
        return pod
    return facts_of(msgspec.convert(pod, Pod))


class Page:
    __slots__ = ("facts", "version", "next")

    def __init__(self, facts, version, next_):
        self.facts, self.version, self.next = facts, version, next_


def _page(path, data, reuse=None):
    """The facts of one LIST page's bytes (in the pool thread that read it). With ``reuse`` (the
    kept facts, during a re-list), a pod whose facts did not change keeps its kept tuple: a
    re-list then holds the kept facts plus only what changed."""
    try:
        body = _decode_list(data)
    except msgspec.DecodeError:
        raise ScrapeError("GET %s answered a body that is not a list of pods" % path) from None
    del data
    out = []
    for raw in body.items or ():
        try:
            facts = facts_of(decode_pod(raw))
        except msgspec.DecodeError as exc:
            log.warning("skipped a malformed pod: %s", exc)
            continue
        if facts is None:
            continue
        if reuse is not None:
            kept = reuse.get(key(facts))
            if kept == facts:
                facts = kept
        out.append(facts)
    meta = body.metadata or _ListMeta()
    return Page(out, meta.resourceVersion, meta.next)


async def list_facts(api, namespace, reuse=None):
    """(facts of every pod not done in ``namespace`` ("" = all), the list's resourceVersion),
    by a chunked LIST."""
    api.pod_lists += 1
    path = pods_path(namespace)
    params = {"limit": CHUNK, "fieldSelector": NOT_DONE}
    decode = functools.partial(_page, reuse=reuse) if reuse is not None else _page
    facts = []
    for _ in range(MAX_CHUNKS):
        page = await api.fetch(path, params, decode)
        facts.extend(page.facts)
        if not page.next:
            return facts, page.version
        params["continue"] = page.next
    raise ScrapeError("listing %s did not end" % path)
