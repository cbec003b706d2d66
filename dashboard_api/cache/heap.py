"""The C allocator under a process holding a large watch cache (issue #19), glibc only.

Two settings, made once when the cache starts (``configure``):

- a fixed mmap threshold (1 MiB): LIST pages (a few MB of bytes each) are then always mapped and
  unmapped whole. By default glibc raises the threshold to the size of the last mapped block
  freed, after which every page's buffer comes from the heap, between long-lived objects, and
  the holes it leaves stay in the RSS;
- at most two malloc arenas: the executor's threads make the rows, and by default each thread
  gets an arena of its own whose free space no other thread reuses.

``trim`` gives the free pages of the heap back to the system, after a full LIST (first sync
or re-list) freed the previous store's objects; it runs in a worker (it walks the heap).
Elsewhere than glibc both do nothing.

And the garbage collector: ``freeze_heap`` after each full LIST, so that collections stop
walking the long-lived stores.
"""

import ctypes
import ctypes.util
import gc
import logging
import sys

log = logging.getLogger("dashboard_api.cache")

M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8
MMAP_THRESHOLD = 1 << 20
ARENA_MAX = 2
TRIM_ROWS = 5000   # a full LIST of at least this many objects is followed by a trim

_libc = None


def _glibc():
    global _libc
    if _libc is None:
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            libc.mallopt  # noqa: B018 (glibc has it; musl and others do not)
            libc.malloc_trim
            _libc = libc
        except (OSError, AttributeError):
            _libc = False
    return _libc


def configure():
    libc = _glibc()
    if not libc:
        return False
    ok = libc.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) and libc.mallopt(M_ARENA_MAX, ARENA_MAX)
    if not ok:
        log.info("the C allocator's settings were refused")
    return bool(ok)


def trim():
    libc = _glibc()
    if libc:
        libc.malloc_trim(0)


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def report():
    """Where the process's memory is, for a soak's diagnosis (the SIGUSR1 test hook of
    kubeapi/watch.py): the C allocator's heap (bytes from the system, in use, free) and its
    mapped blocks, in MiB, and Python's own allocator's blocks in use; its arenas are written
    to stderr by ``sys._debugmallocstats``. Not on a request's road."""
    out = {"python_blocks": sys.getallocatedblocks()}
    libc = _glibc()
    if libc and hasattr(libc, "mallinfo2"):
        libc.mallinfo2.restype = _Mallinfo2
        info = libc.mallinfo2()
        mib = 1 << 20
        out.update(malloc_heap_mib=round(info.arena / mib, 1),
                   malloc_in_use_mib=round(info.uordblks / mib, 1),
                   malloc_free_mib=round(info.fordblks / mib, 1),
                   malloc_mapped_mib=round(info.hblkhd / mib, 1))
    sys._debugmallocstats()
    return out


def freeze_heap():
    """After a full LIST is in (first sync or re-list), move everything alive into the garbage
    collector's permanent generation: the stores are long-lived, and a full collection would
    otherwise walk every one of their objects (seconds at 150,000 pods, on the event loop).

    No unfreeze around re-lists: rows are acyclic (dicts, lists, strings and slotted Rows),
    so the rows a re-list replaces are freed by reference counting, frozen or not; unfreezing
    would only make the next full collection walk the whole heap again. Objects made later
    (watch events, requests) are collected as usual until the next freeze."""
    gc.freeze()
