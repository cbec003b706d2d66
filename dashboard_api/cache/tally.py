"""A store's list status counters (issue #19): per namespace, how many rows are in each bucket
of the kind's status, from each row's facts alone (``Kind.status_split``), and the rows whose
bucket the related reads may change, kept by bucket for ``Kind.status_counted``."""

import collections


def count(kind, tally, row, sign):
    found = tally.get(row.namespace)
    if found is None:
        found = tally[row.namespace] = (collections.Counter(), {})
    bucket, related = kind.status_split(row.facts)
    if bucket:
        found[0][bucket] += sign
        if not found[0][bucket]:
            del found[0][bucket]
    if related is not None:   # kept by bucket: status_counted moves a bucket's rows at once
        if sign > 0:
            found[1].setdefault(bucket, {})[related] = row.facts
        else:
            group = found[1].get(bucket)
            if group is not None:
                group.pop(related, None)
                if not group:
                    del found[1][bucket]
    if not found[0] and not found[1]:
        del tally[row.namespace]


def tally_of(kind, rows):
    """The list status counters of ``rows`` (namespace -> (Counter, {key: facts})), or None
    when a row has no facts."""
    tally = {}
    for row in rows:
        if row.facts is None:
            return None
        count(kind, tally, row, 1)
    return tally

