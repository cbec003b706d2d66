"""A dict whose keys come and go, made again at its natural size when its table grows.

CPython never shrinks a dict's table, and each key that goes leaves a dummy slot behind. When a
dict that lost keys fills its table, it is rebuilt for three times its entries, where a dict
made from the same items is sized for one and a half: under churn it settles at twice a copy's
size. That happened to a store's rows (events: 200,000, 50 replaced a second, 10 -> 20 MiB) and
to an index's table of buckets (the events' by involved object, +2 MiB at 50,000 events once
45,000 were replaced): issue #41's soak.

So the owner of such a dict keeps the size it had when last made at its natural size
(``fitted``), and after each new key asks ``refit``: a copy when the table has just grown past
that size. The check is two O(1) calls; the copy is O(entries), once a table's worth of new
keys (~18 ms at 200,000 rows). Readers hold whole dicts, never a view across a change, so the
old one is simply let go: a reader still holding it sees it whole, as if it had read a moment
before.
"""

import sys

# A dict smaller than this is never copied: its waste costs too little to matter.
MIN_ENTRIES = 4096


def fitted(table):
    """The bytes of ``table`` as it is now, made at its natural size (a LIST's, a copy)."""
    return sys.getsizeof(table)


def refit(table, size):
    """``(table, size)`` as they were, or a copy of ``table`` and its size when ``table`` holds
    at least MIN_ENTRIES keys and its table grew past ``size``."""
    if len(table) < MIN_ENTRIES or sys.getsizeof(table) <= size:
        return table, size
    table = dict(table)
    return table, sys.getsizeof(table)
