"""Pushed "changed" notices: one connection per browser carries a notice when a list it
subscribed to has changed (debounced, at most one a second per subscription), and says when
the cluster's API server stops and starts answering. The browser then fetches the list; a
conditional GET makes that fetch cheap (lists/validators.py). The WebSocket itself is
handlers/live.py; here is what it carries, without HTTP."""
