"""Container logs without I/O: parsing timestamped lines, choosing the page to show, and the
wire shapes of the log view and of log sources. The handlers in handlers/logs.py do the calls."""
