"""The list road: a request's reads (Fetch), its rows from a source (the watch cache's view or
the caller's own LISTs), their one paging call, the items, the envelope and the decorators
(lists/pipeline.py), and the authorization the cache's answers wait for."""
