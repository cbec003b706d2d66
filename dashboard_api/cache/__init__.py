"""The shared watch cache: per cached kind a store of slim rows (cache/store.py) filled by a
reflector with the service's own identity (cache/watchcache.py), its indexes kept per event,
and one paging call over a scope of it (cache/view.py)."""
