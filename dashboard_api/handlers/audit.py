"""GET /api/v1/audit: the audit trail of the request's cluster, newest first, paged like lists.

``user``, ``namespace`` and ``kind`` filter exactly (kind without regard to case: ``deployment``
as the lists spell it, or ``<plural>.<group>``); ``since`` and ``until`` are RFC 3339 times
(``since`` included, ``until`` not); ``itemsPerPage`` (default 10, at most ``MAX_PER_PAGE``) and
``page`` (from 1, at most ``MAX_PAGE``). A bad parameter is a 400 naming it; more than
``audit.trail.MAX_READS`` reads at once in the process, a 429 with Retry-After. The caller sees
an entry only when the cluster would let them read what it is about (audit/visibility.py); the
answer is ``{"listMeta": {"totalItems"}, "entries": [...], "errors": [...]}``, ``totalItems``
counting the entries they may see.
"""

from dashboard_api.audit import store as audit_store, visibility
from dashboard_api.audit.entry import millis_of
from dashboard_api.handlers.base import BaseHandler
from dashboard_api.serving import params
from dashboard_api.serving.errors import ApiError, bad_request, not_found
from dashboard_api.serving.routes import Route

DEFAULT_PER_PAGE = 10
MAX_PER_PAGE = 500
MAX_PAGE = 100000
MAX_TEXT = 512


def filters_of(handler):
    """audit.store.Filters from the query; 400 on a malformed value."""
    texts = {}
    for name in ("user", "namespace", "kind"):
        value = handler.get_query_argument(name, "")
        if len(value) > MAX_TEXT:
            raise bad_request("%s is longer than %d characters" % (name, MAX_TEXT))
        if any(c < " " or c == "\x7f" for c in value):
            raise bad_request("%s holds a control character" % name)
        texts[name] = value or None
    times = {}
    for name in ("since", "until"):
        value = handler.get_query_argument(name, "")
        try:
            times[name] = millis_of(value) if value else None
        except ValueError:
            raise bad_request("%s must be an RFC 3339 time such as 2026-11-28T06:00:00Z, got %r"
                              % (name, value[:64]))
    if times["since"] is not None and times["until"] is not None \
            and times["since"] > times["until"]:
        raise bad_request("since is later than until")
    return audit_store.Filters(texts["user"], texts["namespace"], texts["kind"],
                               times["since"], times["until"])


class AuditHandler(BaseHandler):
    async def get(self):
        trail = self.ctx.audit
        handle = self.caller()   # 401 before anything else
        filters = filters_of(self)
        per_page = params.integer("itemsPerPage", self.get_query_argument("itemsPerPage", None),
                                  DEFAULT_PER_PAGE, 1)
        if per_page > MAX_PER_PAGE:
            raise bad_request("itemsPerPage must be at most %d, got %d" % (MAX_PER_PAGE,
                                                                            per_page))
        page = params.integer("page", self.get_query_argument("page", None), 1, 1)
        if page > MAX_PAGE:
            raise bad_request("page must be at most %d, got %d" % (MAX_PAGE, page))
        if trail is None:
            raise not_found("the audit trail is kept in the log only here (--audit-db none)")
        cluster = self.cluster.name
        scopes = await trail.read(lambda store: store.scopes(cluster, filters))
        errors = []
        if len(scopes) > audit_store.MAX_SCOPES:
            scopes = scopes[:audit_store.MAX_SCOPES]
            errors.append(ApiError(
                422, "the entries asked for touch more than %d kinds and namespaces: only "
                     "some are shown; narrow them with namespace, kind, user, since or until"
                % audit_store.MAX_SCOPES, "TooManyScopes").as_status_error())
        allowed = await visibility.allowed_scopes(self.cluster.source.access, handle, scopes)
        offset = (page - 1) * per_page
        total, entries = await trail.read(
            lambda store: store.page(cluster, filters, allowed, offset, per_page))
        self.write_json({"listMeta": {"totalItems": total}, "entries": entries,
                         "errors": errors})


ROUTES = [
    Route("/api/v1/audit", AuditHandler, "audit",
          summary="The audit trail of this cluster, newest first: every change made through the "
                  "gateway and every terminal session ({listMeta, entries, errors}); ?user, "
                  "namespace, kind, since, until (RFC 3339), itemsPerPage, page; only entries "
                  "the caller may read the objects of"),
]
