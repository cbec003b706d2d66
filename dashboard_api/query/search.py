"""The search query language, its one parser, and the matching of rows by it (pure).

A query is terms separated by spaces; a row matches when every term holds:

- ``web``: a plain word: the object's name contains it, ignoring case;
- ``name:TEXT``: the same, for a TEXT that holds a colon (``name:system:node``);
- ``label:KEY=VALUE``, ``label:KEY=V1|V2`` (one of), ``label:KEY!=VALUE`` (or lacks the key,
  as a selector's ``!=``), ``label:KEY`` (has it), ``label:!KEY`` (lacks it): labels compare
  exactly, case included, as the API server's selectors do;
- ``ns:NAME[|NAME]``: the object's namespace is one of these;
- ``status:TEXT[|TEXT]``: the status the kind's list shows holds TEXT at the start of one of its
  words, ignoring case (``status:crash`` finds ``Init:CrashLoopBackOff``, ``status:ready`` a
  ``Ready`` node and not a ``NotReady`` one); kinds whose list shows no status match none;
- ``node:NAME[|NAME]``: a pod on that node (other kinds match none);
- ``image:TEXT[|TEXT]``: one of the object's container images contains TEXT, ignoring case
  (pods and workloads; other kinds match none);
- ``kind:KIND[|KIND]``: the object's kind (its route name or plural, ``pod`` or ``pods``): in a
  search, the kinds searched; in a list, the list's rows when it names the list's kind, else
  none.

Any other ``prefix:`` is an error, as is an empty value or a malformed label: ``parse`` raises
the specification's 400 naming the term. Commas are never needed (the web UI splits
``filterBy`` on them). Bounded: at most MAX_LENGTH characters, MAX_TERMS terms, MAX_CHOICES
alternatives a term; parsing is linear in the text, and matching a row costs at most a few
substring tests per term.

A ``Search`` is matched against a kind's rows once bound to the kind (``bind``): the name comes
from the row's ``name`` key (query/properties.py), the namespace and labels from the row and
its slim object, and the rest from the kind's ``Facets`` (what its list shows as status, its
images, its node). Both sources of a list (the watch cache's rows, rows in memory) match through
the same ``Bound.filter``, so they give the same answer.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Sequence

from dashboard_api.query.properties import position
from dashboard_api.serving.errors import bad_request

MAX_LENGTH = 256
MAX_TERMS = 16
MAX_CHOICES = 16
MAX_TEXTS = 1024   # status texts remembered by one status term (a kind shows a few)

PREFIXES = ("name", "label", "ns", "status", "node", "image", "kind")

# A label key: an optional DNS-subdomain prefix and "/", then a name of at most 63 characters
# starting and ending with an alphanumeric; a value: empty, or such a name.
_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?"
_LABEL_KEY = re.compile(r"([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?" + _NAME + r"\Z")
_LABEL_VALUE = re.compile(r"(" + _NAME + r")?\Z")
_EMPTY = {}


class Facets:
    """What a kind offers a search beyond its name, namespace and labels (kinds/kind.py
    ``Kind.search``): ``status(row, rel)``, the status its list shows (None: it shows none;
    ``rel`` read only when ``status_reads`` is true, e.g. a workload's pods);
    ``images(obj)``, its container images; ``node(obj)``, the node it runs on.

    ``buckets(rel) -> (((text, uids), ...), rest)``: for a status read from the related reads,
    the same status as sets of object UIDs (the first set holding an object's UID gives its
    text, ``rest`` for those in none): a ``status:`` term then costs a dictionary lookup per
    row (tens of thousands of replica sets), not the status of each."""

    __slots__ = ("status", "status_reads", "images", "node", "buckets", "status_at")

    def __init__(self, status: Callable | None = None, images: Callable | None = None,
                 node: Callable | None = None, status_reads: bool = False,
                 buckets: Callable | None = None, status_at: int | None = None):
        self.status = status
        self.status_reads = status_reads
        self.images = images
        self.node = node
        self.buckets = buckets
        self.status_at = status_at   # the status's place in the row's keys, when it is one

    @classmethod
    def of_properties(cls, props: Any, **facets: Any) -> Facets:
        """Facets whose status is the list's own ``status`` property when it has one (its
        precomputed key: the watch cache keeps it per object)."""
        if "status" in props and "status" not in facets:
            at = position(props, "status")
            facets["status"] = lambda row, rel: row.keys[at]
            facets["status_at"] = at
        return cls(**facets)


def of_object(fn: Callable[[dict], str | None]) -> Callable:
    """A status read from the object alone: ``fn(obj)``."""
    return lambda row, rel: fn(row.obj)


def of_related(fn: Callable[[dict, Any], str | None]) -> Callable:
    """A status read from the object and the list's related reads: ``fn(obj, rel)``."""
    return lambda row, rel: fn(row.obj, rel)


class Term:
    """One term: ``prefix`` (None: a plain word), ``values`` (alternatives; lower-cased
    but for labels), ``op`` (labels: "=", "!=", "has", "lacks"), ``key`` (labels)."""

    __slots__ = ("prefix", "values", "op", "key", "text")

    def __init__(self, prefix, values, op=None, key=None, text=""):
        self.prefix = prefix
        self.values = tuple(values)
        self.op = op
        self.key = key
        self.text = text

    def ident(self):
        return (self.prefix, self.values, self.op, self.key)

    def __repr__(self):
        return "Term(%r)" % self.text


def parse(text: str | None) -> Search:
    """The Search a query text says; a 400 naming the first bad term."""
    text = text or ""
    if len(text) > MAX_LENGTH:
        raise bad_request("search query: at most %d characters, got %d"
                          % (MAX_LENGTH, len(text)))
    parts = text.split()
    if len(parts) > MAX_TERMS:
        raise bad_request("search query: at most %d terms, got %d" % (MAX_TERMS, len(parts)))
    return Search(tuple(_term(part) for part in parts))


def _bad(part, why):
    return bad_request("search query: term %r: %s" % (part, why))


def _choices(part, value, lower=True):
    values = value.split("|")
    if len(values) > MAX_CHOICES:
        raise _bad(part, "at most %d alternatives" % MAX_CHOICES)
    if any(not v for v in values):
        raise _bad(part, "an empty value")
    return tuple(dict.fromkeys(v.lower() if lower else v for v in values))


def _term(part):
    prefix, colon, value = part.partition(":")
    if not colon:
        return Term(None, (part.lower(),), text=part)
    prefix = prefix.lower()
    if prefix not in PREFIXES:
        raise _bad(part, "unknown prefix %r (known: %s; a name with a colon is name:TEXT)"
                   % (prefix + ":", ", ".join(p + ":" for p in PREFIXES)))
    if not value:
        raise _bad(part, "%s: needs a value" % prefix)
    if prefix == "name":
        return Term(None, (value.lower(),), text=part)
    if prefix == "label":
        return _label(part, value)
    return Term(prefix, _choices(part, value), text=part)


def _label(part, value):
    if value.startswith("!"):
        key, op, values = value[1:], "lacks", ()
    elif "!=" in value:
        key, _, rest = value.partition("!=")
        op, values = "!=", rest.split("|")
    elif "=" in value:
        key, _, rest = value.partition("=")
        op, values = "=", rest.split("|")
    else:
        key, op, values = value, "has", ()
    if not _LABEL_KEY.match(key):
        raise _bad(part, "%r is not a label key" % key)
    if len(values) > MAX_CHOICES:
        raise _bad(part, "at most %d alternatives" % MAX_CHOICES)
    for v in values:
        if not _LABEL_VALUE.match(v):
            raise _bad(part, "%r is not a label value" % v)
    return Term("label", tuple(dict.fromkeys(values)), op, key, text=part)


class Search:
    """A parsed query: its terms, all of which must hold. Equal queries (the same terms in
    the same order) are equal and hash alike: the watch cache remembers selections and keeps
    filtered indexes by them."""

    __slots__ = ("terms", "_ident")

    def __init__(self, terms: Sequence[Term] = ()):
        self.terms = tuple(terms)
        self._ident = tuple(t.ident() for t in self.terms)

    def __eq__(self, other):
        return isinstance(other, Search) and other._ident == self._ident

    def __hash__(self):
        return hash(("search", self._ident))

    def __repr__(self):
        return "Search(%r)" % " ".join(t.text for t in self.terms)

    def __bool__(self):
        return bool(self.terms)

    @property
    def words(self) -> tuple[str, ...]:
        """The plain words (lower-cased): what ranks a search's names."""
        return tuple(t.values[0] for t in self.terms if t.prefix is None)

    def values(self, prefix: str) -> frozenset | None:
        """The values every term of ``prefix`` allows (their intersection), or None when the
        query has no such term: ``kinds`` and ``ns`` narrow a search before it reads."""
        found = None
        for term in self.terms:
            if term.prefix == prefix:
                found = frozenset(term.values) if found is None else found & set(term.values)
        return found

    def reads_related(self, kind: Any) -> bool:
        """Whether matching ``kind``'s rows reads the list's related reads (a status term on a
        kind whose status does)."""
        facets = getattr(kind, "search", None)
        return bool(facets is not None and facets.status_reads
                    and any(t.prefix == "status" for t in self.terms))

    def object_part(self, kind: Any) -> Search:
        """This search without the terms that read ``kind``'s related reads: what an index
        kept per event may hold the matches of (a superset of the whole search's)."""
        if not self.reads_related(kind):
            return self
        return Search(t for t in self.terms if t.prefix != "status")

    def bind(self, kind: Any, rel: Any = None) -> Bound:
        """This search as it matches ``kind``'s rows (``rel``: the list's related reads, for a
        status that reads them)."""
        return Bound(self, kind, rel)

    def filter(self, rows: Sequence[Any], props: Any) -> list:
        """The rows that match, for rows of no particular kind (names, namespaces and labels
        only): what an unbound search in a filter means."""
        return Bound(self, _Plain(props)).filter(rows)


class _Plain:
    """A kind of nothing but properties (query/rows.py select_items' wire items)."""

    name = plural = ""
    search = None

    def __init__(self, props):
        self.properties = props


def kind_names(kind: Any) -> frozenset:
    """What ``kind:`` accepts for a kind: its route name and its plural, lower-cased."""
    return frozenset(n.lower() for n in (kind.name, getattr(kind, "plural", "")) if n)


def _namespace(row):
    namespace = row.namespace
    if namespace is None:
        obj = getattr(row, "obj", None) or _EMPTY
        namespace = (obj.get("metadata") or _EMPTY).get("namespace") or ""
    return namespace


def _labels(row):
    obj = getattr(row, "obj", None) or _EMPTY
    return (obj.get("metadata") or _EMPTY).get("labels") or _EMPTY


def _has_word(text, value):
    """Whether lower-cased ``text`` holds ``value`` at the start of one of its words (after
    a character that is not a letter or a digit)."""
    at = text.find(value)
    while at >= 0:
        if at == 0 or not text[at - 1].isalnum():
            return True
        at = text.find(value, at + 1)
    return False


class Bound:
    """A Search bound to one kind (and its related reads): ``filter(rows)`` keeps the rows
    that match, in their order. Equal when the search and the kind are (the related reads
    are not compared: a search that reads them is never kept in an index)."""

    __slots__ = ("search", "kind", "rel", "_steps")

    def __init__(self, search: Search, kind: Any, rel: Any = None):
        self.search = search
        self.kind = kind
        self.rel = rel
        self._steps = None

    def __eq__(self, other):
        return isinstance(other, Bound) and other.search == self.search and \
            other.kind.name == self.kind.name

    def __hash__(self):
        return hash((self.search, self.kind.name))

    def __bool__(self):
        return bool(self.search)

    def __repr__(self):
        return "Bound(%r, %s)" % (self.search, self.kind.name)

    def impossible(self) -> bool:
        """Whether no row of the kind can match (a term the kind lacks: ``image:`` of config
        maps, a status its list never shows): then no row need be read."""
        if self._steps is None:
            self._steps = self._compile()
        return _nothing in self._steps

    def filter(self, rows: Iterable[Any], props: Any = None) -> list:
        if self._steps is None:
            self._steps = self._compile()
        rows = list(rows)
        for step in self._steps:
            if not rows:
                break
            rows = step(rows)
        return rows

    def _compile(self):
        """The terms as steps ``rows -> rows``, the cheapest and narrowest first."""
        order = {"kind": 0, "ns": 1, "label": 2, "node": 3, None: 4, "image": 5, "status": 6}
        terms = sorted(self.search.terms, key=lambda t: order[t.prefix])
        return [_step(term, self.kind, self.rel) for term in terms]


def _nothing(rows):
    return []


def _step(term, kind, rel):
    prefix, values = term.prefix, term.values
    facets = getattr(kind, "search", None)
    if prefix is None:
        props = kind.properties
        if "name" not in props:
            return _nothing
        at = position(props, "name")
        word = values[0]
        return lambda rows: [r for r in rows if word in r.keys[at] or (
            not r.keys[at].islower() and word in r.keys[at].lower())]
    if prefix == "kind":
        return (lambda rows: rows) if kind_names(kind) & set(values) else _nothing
    if prefix == "ns":
        wanted = frozenset(values)
        return lambda rows: [r for r in rows if _namespace(r).lower() in wanted]
    if prefix == "label":
        return _label_step(term)
    if prefix == "node":
        node_of = facets.node if facets is not None else None
        if node_of is None:
            return _nothing
        wanted = frozenset(values)
        return lambda rows: [r for r in rows if (node_of(r.obj) or "").lower() in wanted]
    if prefix == "image":
        images_of = facets.images if facets is not None else None
        if images_of is None:
            return _nothing
        return lambda rows: [r for r in rows if any(
            v in image.lower() for image in images_of(r.obj) for v in values)]
    # status
    status_of = facets.status if facets is not None else None
    if status_of is None:
        return _nothing
    if facets.buckets is not None and rel is not None:
        return _bucket_step(facets.buckets(rel), values)
    if facets.status_at is not None:
        return _key_step(facets.status_at, values)
    return lambda rows: [r for r in rows if _status_matches(status_of(r, rel), values)]


def _key_step(at, values):
    """The status step of a status kept in the row's keys: a kind shows a few statuses (the
    watch cache shares each text), so each text is matched once and remembered (at most
    MAX_TEXTS of them), then a lookup per row."""
    decided = {}

    def step(rows):
        out = []
        append = out.append
        for r in rows:
            text = r.keys[at]
            keep = decided.get(text)
            if keep is None:
                keep = _status_matches(text, values)
                if len(decided) < MAX_TEXTS:
                    decided[text] = keep
            if keep:
                append(r)
        return out
    return step


def _uid(row):
    obj = getattr(row, "obj", None) or _EMPTY
    return (obj.get("metadata") or _EMPTY).get("uid")


def _bucket_step(buckets, values):
    """The status step of a status given as sets of UIDs (Facets.buckets): which UIDs the
    query keeps or drops, decided once; then a lookup per row, by its facts when they are its
    UID (a workload's, in the watch cache), else by its object's."""
    groups, rest = buckets
    kept = [_status_matches(text, values) for text, _uids in groups]
    rest_kept = _status_matches(rest, values)
    if not rest_kept and not any(kept):
        return _nothing   # no status of the kind matches: no row need be read
    decided = {}
    for keep, (_text, uids) in zip(kept, groups):
        for uid in uids:
            decided.setdefault(uid, keep)
    return lambda rows: [r for r in rows if decided.get(
        r.facts if r.facts.__class__ is str else _uid(r), rest_kept)]


def _status_matches(status, values):
    if not status:
        return False
    status = status.lower()
    return any(_has_word(status, v) for v in values)


def _label_step(term):
    key, op, values = term.key, term.op, frozenset(term.values)
    if op == "has":
        return lambda rows: [r for r in rows if key in _labels(r)]
    if op == "lacks":
        return lambda rows: [r for r in rows if key not in _labels(r)]
    if op == "=":
        return lambda rows: [r for r in rows if _labels(r).get(key) in values]
    return lambda rows: [r for r in rows if _labels(r).get(key) not in values]


def bind_filters(filters: Sequence[tuple[str, Any]], kind: Any, rel: Any = None) -> tuple:
    """``filters`` ((property, value), ...) with each Search bound to ``kind`` (and ``rel``):
    what query/rows.py filter_rows matches a kind's rows by."""
    return tuple((prop, value.bind(kind, rel) if isinstance(value, Search) else value)
                 for prop, value in filters)


def impossible(filters: Sequence[tuple[str, Any]]) -> bool:
    """Whether a bound search of ``filters`` matches no row of its kind whatever it holds."""
    return any(isinstance(value, Bound) and value.impossible() for _p, value in filters)


def reads_related(filters: Sequence[tuple[str, Any]], kind: Any) -> bool:
    """Whether a Search of ``filters`` reads ``kind``'s related reads."""
    return any(isinstance(value, Search) and value.reads_related(kind) for _p, value in filters)


def object_part(filters: Sequence[tuple[str, Any]], kind: Any) -> tuple:
    """``filters`` with each Search cut to its ``object_part`` (empty ones dropped)."""
    out = []
    for prop, value in filters:
        if isinstance(value, Search):
            value = value.object_part(kind)
            if not value:
                continue
        out.append((prop, value))
    return tuple(out)
