"""A re-list's plan, made in the executor (issue #19): the changes from the live rows to a full
LIST's when they are few, else the whole new state (rows, names, index states, sorted indexes,
status counters), and the freeing of a replaced state without holding the event loop."""

from dashboard_api.cache import tally
from dashboard_api.cache.categories import Counts
from dashboard_api.cache.rows import bucket_key
from dashboard_api.cache.sorted import SortedIndex, mirror_of
from dashboard_api.query.rows import slashed

# A re-list whose changes are at most this many, or a quarter of the store, applies them as
# events, a batch at a time with the loop free between batches (store.RELIST_BATCH); a larger
# one builds the new state in the executor and swaps it in (first syncs too).
SMALL_RELIST = 5000
SMALL_SHARE = 0.25


def state_of(rows, builders):
    """(namespace -> sorted names, index name -> its state) of a rows dict."""
    names = {}
    for namespace, name in rows:
        names.setdefault(namespace, []).append(name)
    for values in names.values():
        values.sort()
    values = list(rows.values())
    keys = [bucket_key(row) for row in values] if builders else ()   # one per row, shared
    states = {index_name: build(values, keys) for index_name, build in builders.items()}
    return names, states


def plan(kind, live, rows, builders, specs, counting, pause=None, names=None, counted=()):
    """A re-list's plan, made in the executor: ([(old, new)] the changes from ``live``, None)
    when they are few enough to apply as events, else (None, the whole new state: (rows dict,
    names, buckets, a SortedIndex per spec of ``specs``, the status counters when
    ``counting``, {at: Counts} of the values at each place of ``counted``,
    cache/categories.py); the indexes' builds step aside for requests by ``pause``, as
    cache/foreground.py says). ``names`` (the live store's namespace -> sorted names) finds the
    objects gone without a set of every listed key (``changes_of``). ``live`` and ``names``
    are only read with single dict and list operations (get, a copy), each whole under the
    GIL; the caller checks the store did not change meanwhile."""
    if live:   # a first sync has nothing to compare with: built whole
        changes = changes_of(live, rows, names)
        if len(changes) <= SMALL_RELIST or len(changes) <= len(live) * SMALL_SHARE:
            return changes, None
        del changes
    fresh = {(row.namespace, row.name): row for row in rows}
    names, buckets = state_of(fresh, builders)
    built = {}   # spec -> its index; one whose mirror is built already reads it backwards
    for spec in specs:
        mirror = built.get(mirror_of(spec))
        built[spec] = SortedIndex(spec, fresh.values(), kind.properties, pause) if mirror is None \
            else SortedIndex(spec, mirror.all, kind.properties, pause, mirrored=True)
    sorted_indexes = [built[spec] for spec in specs]
    del built
    counters = tally.tally_of(kind, fresh.values()) if counting else None
    counts = {at: Counts(at, fresh.values()) for at in counted}
    return None, (fresh, names, buckets, sorted_indexes, counters, counts)


def changes_of(live, rows, names=None):
    """[(old, new)] taking ``live`` (a rows dict) to ``rows`` (a full LIST's, no key twice),
    old None for an addition, new None for a deletion. No dict of the LIST's rows is made
    unless some live object is gone from it (at 150,000 pods, ~14 MiB at a re-list's peak).

    The objects gone are found by walking the LIST and ``names`` (the live store's namespace
    -> its sorted names) side by side when the LIST is in the API server's list order (etcd's
    key order: by namespace + "/", then name), as it is: a set of every listed key was ~20 MiB
    at 200,000 events, and every kind re-listing at once made the whole composition's peak
    (issue #41). Otherwise, or without ``names``, by that set."""
    get = live.get
    changes = []
    found = 0
    ordered, previous = names is not None, None
    for row in rows:
        old = get((row.namespace, row.name))
        if old is not None:
            found += 1
        if old is not row:
            changes.append((old, row))
        if ordered:
            place = (slashed(row.namespace), row.name)
            ordered = previous is None or previous < place
            previous = place
    if found < len(live):
        gone = _gone_in_order(names, rows) if ordered else None
        if gone is None:
            listed = {(row.namespace, row.name) for row in rows}
            gone = [key for key in list(live) if key not in listed]
            del listed
        for key in gone:
            row = get(key)
            if row is not None:
                changes.append((row, None))
    return changes


def _gone_in_order(names, rows):
    """The keys of ``names`` (namespace -> sorted names) that ``rows`` (in list order) lack,
    by one walk of both in list order; each namespace's names copied by one C call (the loop
    may change them meanwhile: the caller then plans again)."""
    gone = []
    listed = iter(rows)
    row = next(listed, None)
    for namespace in sorted(list(names), key=slashed):
        ns = slashed(namespace)
        for name in list(names.get(namespace, ())):
            place = (ns, name)
            while row is not None and (slashed(row.namespace), row.name) < place:
                row = next(listed, None)
            if row is None or row.namespace != namespace or row.name != name:
                gone.append((namespace, name))
    return gone



def drop(previous):
    """Frees a previous state in the executor: its rows dict (only the store had it) one item
    at a time, the rest first, at once (buckets and sorted indexes may be in a reader's hands:
    never emptied, only let go). Freeing 150,000 rows in one call would hold the GIL, and so
    the event loop, throughout; one at a time, the loop gets it back every switch interval."""
    rows = previous.pop(0)
    previous.clear()
    while rows:
        rows.popitem()

