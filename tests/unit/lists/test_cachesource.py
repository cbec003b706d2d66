"""lists/cachesource.CacheSource.answers_at_once: a list is read in line (lists/fetch.py) only
when the cache answers it with nothing to wait for: its store serves and the caller's right is
remembered in every namespace asked; a review or a first sync is waited for beside the others."""

from dashboard_api.kubeapi.discovery import Resource
from dashboard_api.lists.cachesource import CacheSource
from dashboard_api.query.reads import ALL, Namespaces

PODS = Resource("", "v1", "pods", "Pod", True, ())
NODES = Resource("", "v1", "nodes", "Node", False, ())


class Flag:
    def __init__(self, value):
        self.value = value

    def is_set(self):
        return self.value


class Store:
    state = "unavailable"   # when not serving: the service may not list it

    def __init__(self, serving):
        self._serving = serving

    def serving(self):
        return self._serving


class Cache:
    def __init__(self, stores, registered=True):
        self.stores = stores
        self.registered = Flag(registered)

    def store_of(self, resource):
        return self.stores.get(resource.plural)


class Access:
    def __init__(self, known):
        self._known = known   # (plural, namespace) -> True / False

    def known(self, handle, verb, resource, namespace=""):
        return self._known.get((resource.plural, namespace))


class Fallback:
    def __init__(self, access):
        self.access = access


class Fetch:
    handle = object()


def source(known, stores=None, registered=True):
    stores = {"pods": Store(True), "nodes": Store(True)} if stores is None else stores
    return CacheSource(Cache(stores, registered), Fallback(Access(known)))


def test_a_serving_store_and_remembered_rights_answer_at_once():
    known = {("pods", "a"): True, ("pods", "b"): True, ("pods", ""): True, ("nodes", ""): True}
    cached = source(known)
    assert cached.answers_at_once(Fetch(), PODS, Namespaces(("a", "b")))
    assert cached.answers_at_once(Fetch(), PODS, ALL)
    assert cached.answers_at_once(Fetch(), NODES, Namespaces(("a",)))   # cluster-scoped


def test_a_right_to_ask_or_refused_is_not_answered_at_once():
    assert not source({("pods", "a"): True}).answers_at_once(Fetch(), PODS,
                                                              Namespaces(("a", "b")))
    assert not source({("pods", "a"): False}).answers_at_once(Fetch(), PODS,
                                                               Namespaces(("a",)))


def test_a_store_not_serving_or_not_cached_is_not_answered_at_once():
    known = {("pods", "a"): True}
    assert not source(known, {"pods": Store(False)}).answers_at_once(
        Fetch(), PODS, Namespaces(("a",)))
    assert not source(known, {}).answers_at_once(Fetch(), PODS, Namespaces(("a",)))
    assert not source(known, registered=False).answers_at_once(
        Fetch(), PODS, Namespaces(("a",)))


class Warming(Access):
    def __init__(self):
        super().__init__({})
        self.warmed = []

    def warm(self, handle, verb, resource, namespace=""):
        self.warmed.append((verb, resource.plural, namespace))


def test_authorize_beside_starts_the_reviews_of_a_cached_list_only():
    """lists/fetch.py Fetch.authorize_beside: the review a related read of the cache will
    wait for starts early, for one namespace or all (cluster-wide for a cluster-scoped kind);
    not for many namespaces (the list may read nothing related: a review each for nothing);
    a kind passed through is authorized by the API server on its own LIST: nothing."""
    access = Warming()
    cached = CacheSource(Cache({"pods": Store(True), "nodes": Store(True)}), Fallback(access))
    cached.authorize_beside(Fetch(), PODS, Namespaces(("a",)))
    cached.authorize_beside(Fetch(), PODS, ALL)
    cached.authorize_beside(Fetch(), NODES, Namespaces(("a", "b")))
    cached.authorize_beside(Fetch(), PODS, Namespaces(("a", "b")))
    assert access.warmed == [("list", "pods", "a"), ("list", "pods", ""),
                             ("list", "nodes", "")]
    passed = CacheSource(Cache({"pods": Store(False)}), Fallback(Warming()))
    passed.authorize_beside(Fetch(), PODS, ALL)
    passed.authorize_beside(Fetch(), NODES, ALL)
    assert passed.access.warmed == []
