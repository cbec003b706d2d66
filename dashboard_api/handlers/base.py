"""What every handler shares: the caller's identity, JSON in and out, errors, CSRF, metrics."""

import logging
import math
import os
import time

import tornado.web
import ujson

from dashboard_api.audit import entry as audit_entry, targets as audit_targets
from dashboard_api.cache.applied import own_writes
from dashboard_api.kubeapi.client import is_impersonation_header
from dashboard_api.serving import bounded, conditional, params, proxies, requestlog
from dashboard_api.serving.bearer import bearer_token, subject
from dashboard_api.serving.errors import REASONS, ApiError, bad_request, unauthorized
from dashboard_api.web import webui

log = logging.getLogger("dashboard_api.handlers")

JSON = "application/json; charset=UTF-8"


class BaseHandler(tornado.web.RequestHandler):
    route = None

    def initialize(self, route=None, **_):
        self.route = route
        self._started = time.monotonic()
        self._fetches = []
        self.lag_warnings = []   # Warning headers of writes the watch cache has not shown yet

    @property
    def ctx(self):
        """The process's context (app/context.py)."""
        return self.application.ctx

    @property
    def cluster(self):
        """The cluster of the request's path (clusters/context.py): everything of a cluster a
        handler reaches, it reaches through this."""
        return self.request.cluster

    def csrf_action(self, action):
        """A CSRF token's action bound to this cluster: one issued for another cluster's
        path is refused here."""
        return "%s/%s" % (self.cluster.name, action)

    _request_id = None

    @property
    def request_id(self):
        """A random id of this request: answered as ``X-Request-Id``, kept in its audit
        entries, so that a person can name the request they made."""
        if self._request_id is None:
            self._request_id = os.urandom(8).hex()
        return self._request_id

    def set_default_headers(self):
        self.set_header("X-Request-Id", self.request_id)
        self.set_header("Content-Type", JSON)
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Content-Type-Options", "nosniff")

    # --- identity -------------------------------------------------------------------------

    def token(self):
        """The caller's bearer token; 401 when the header does not follow the Bearer rule."""
        token = bearer_token(self.request.headers.get("Authorization"))
        if token is None:
            raise unauthorized()
        return token

    # The person of a request to a cluster in impersonate mode, verified by the gateway from
    # their ID token (auth/persons.py; set by prepare); None otherwise.
    person = None

    def client_impersonation(self):
        """The client's own Impersonate-* header lines. Impersonate-Group and
        Impersonate-Extra-* may repeat: each line stays a line of its own, since the API
        server reads "a,b" in one line as one group "a,b"."""
        return tuple((name, value) for name, value in self.request.headers.get_all()
                     if is_impersonation_header(name))

    async def identify(self):
        """On a cluster in impersonate mode: a client's own Impersonate-* headers are refused
        (with the gateway's credentials they would borrow its right to impersonate), and an
        ID token of the configured provider is verified here, the person named from it (a
        401 when it fails a check). Any other token is forwarded as it is."""
        cluster = getattr(self.request, "cluster", None)
        if cluster is None or not cluster.impersonates:
            return
        if self.client_impersonation():
            raise ApiError(403, "Impersonate-* headers are refused on cluster %s: the gateway "
                                "names the signed-in person itself there" % cluster.name,
                           "Forbidden")
        route = self.route
        if route is not None and not route.needs_token(self.request.method.lower()):
            return  # sign-in, CSRF tokens, pages: no call made with the caller's identity
        token = bearer_token(self.request.headers.get("Authorization"))
        if token is not None and self.ctx.persons is not None:
            self.person = await self.ctx.persons.resolve(token)

    async def _audit_identify(self):
        """For an audited write on a cluster in forward mode: the person of an ID token of
        the provider, verified (remembered per token: auth/persons.py), so that the audit
        trail names them as verified. Never a refusal: the API server judges the token."""
        if self.person is not None or self.ctx.persons is None \
                or not requestlog.audited(self):
            return
        token = bearer_token(self.request.headers.get("Authorization"))
        if token is not None:
            self.audit_person = await self.ctx.persons.resolve_quietly(token)

    def handle_for(self, token, person=None):
        """A handle of this cluster for ``token``: with a verified ``person`` (impersonate
        mode), the cluster's own credentials naming them; else the token as it is, with the
        client's Impersonate-* headers (the API server judges both)."""
        if person is not None:
            return self.cluster.api.impersonating(person.impersonation(), token)
        return self.cluster.api.handle(token, self.client_impersonation())

    def caller(self):
        """A cluster handle for the caller (handle_for); its writes answer once the watch
        cache shows them (cache/applied.py)."""
        return own_writes(self.handle_for(self.token(), self.person), self.cluster.cache, self,
                          self.ctx.options.read_your_writes_timeout)

    def reads(self):
        """The request's lists.fetch.Fetch (401 without a token); the list slots it holds are
        given back when the request ends, however it ends."""
        fetch = self.cluster.pipeline.fetch(self.caller(), self.cluster.api)
        self._fetches.append(fetch)
        return fetch

    def _close_fetches(self):
        for fetch in self._fetches:
            fetch.close()

    def on_connection_close(self):
        self._close_fetches()
        super().on_connection_close()

    # --- input ----------------------------------------------------------------------------

    async def prepare(self):
        # Bodies over --max-body-size never get here: dashboard_api/serving/bodylimit.py answers 413
        # as soon as the headers (or too many chunks) are in.
        params.check_query(self.request.query_arguments)
        await self.identify()
        await self._audit_identify()
        route = self.route
        if self.request.method != "POST" or route is None or "post" not in route.methods():
            await self._decode_large_body()
            return  # a 405 spends no CSRF token
        action = route.csrf_action
        if action and self.ctx.csrf is not None:
            if route.needs_token("post"):
                self.token()  # 401 first: an anonymous caller spends no CSRF token
            self.ctx.csrf.validate(self.csrf_action(action),
                                   self.request.headers.get("X-CSRF-TOKEN"))
        await self._decode_large_body()

    _json = None  # (the decoded body,) once decoded

    async def _decode_large_body(self):
        """A large JSON body is decoded (and its depth checked) in the parse pool, after the
        CSRF check; json_body then returns it."""
        body, route = self.request.body, self.route
        served = route is not None and self.request.method.lower() in route.methods()
        if served and len(body) > bounded.OFF_LOOP_BYTES and self._json_type():
            if route.needs_token(self.request.method.lower()):
                self.token()  # 401 first: no parsing for callers without a token
            try:
                self._json = (await bounded.run(bounded.json_loads, body),)
            except bounded.InputError as exc:
                raise bad_request("request body is %s" % exc if str(exc).startswith("not")
                                  else "request body is refused: %s" % exc)

    def _json_type(self):
        ctype = self.request.headers.get("Content-Type", "")
        return "json" in ctype or "yaml" in ctype

    def json_body(self):
        """The request body as JSON; 415 for another content type, 400 when it does not parse
        or nests deeper than bounded.MAX_JSON_DEPTH."""
        if self.request.body and not self._json_type():
            raise ApiError(415, "request body must be application/json", "UnsupportedMediaType")
        if self._json is not None:
            return self._json[0]
        try:
            return bounded.json_loads(self.request.body or b"null")
        except bounded.InputError as exc:
            raise bad_request("request body is %s" % exc if str(exc).startswith("not")
                              else "request body is refused: %s" % exc)

    def int_arg(self, name, default=None, minimum=None):
        return params.integer(name, self.get_query_argument(name, None), default, minimum)

    def bool_arg(self, name, default=False):
        return params.boolean(name, self.get_query_argument(name, None), default)

    # --- output ---------------------------------------------------------------------------

    def write_json(self, obj, status=200):
        self._json_headers(status)
        self.finish(encode_json(obj))

    async def write_list(self, out, status=200):
        """write_json for a list response: one of LARGE_LIST_ITEMS items or more (e.g.
        ``itemsPerPage`` of everything) is encoded in the executor, not on the event loop."""
        items = out.get("items") if isinstance(out, dict) else None
        if len(items or ()) < LARGE_LIST_ITEMS:
            self.write_json(out, status)
            return
        body = await self.cluster.api.executor.run(encode_json, out)
        self._json_headers(status)
        self.finish(body)

    def held_tags(self):
        """The entity tags the request says it holds (If-None-Match), bounded."""
        return conditional.held_tags(self.request.headers.get("If-None-Match"))

    async def write_answer(self, answer):
        """A list's lists.pipeline.Answer. Answered from the watch cache, the browser may keep
        it and must ask again each time (``Cache-Control: private, no-cache``, varying with
        the credentials), with its validator when one was known before the page (else the
        tag of its body, Tornado's); the caller holding it gets a 304 and no body. A list
        from the API server itself stays ``no-store``, as every other answer."""
        if answer.tag is not None or self._from_cache():
            self.set_header("Cache-Control", conditional.REVALIDATE)
            self.set_header("Vary", conditional.VARY)
        if answer.tag is not None:
            self.set_header("Etag", answer.tag)
        if answer.body is None:
            self._json_headers(304)
            self.finish()
            return
        await self.write_list(answer.body)

    def _from_cache(self):
        return any(hasattr(f, "cache_age") for f in self._fetches)

    def _json_headers(self, status):
        self.set_status(status)
        self.set_header("Content-Type", JSON)
        ages = [f.cache_age for f in self._fetches if hasattr(f, "cache_age")]
        if ages:  # answered from the watch cache: how stale its oldest store read was
            # tenths, rounded up: "0.0" only when every store read was current
            self.set_header("X-Dashboard-Cache-Age", "%.1f" % (math.ceil(max(ages) * 10) / 10))

    def write_error(self, status_code, **kwargs):
        error = None
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            error = exc
        elif isinstance(exc, tornado.web.HTTPError):
            error = ApiError(exc.status_code, exc.log_message or REASONS.get(
                exc.status_code, self._reason))
        else:
            error = ApiError(status_code, "Internal error" if status_code >= 500
                             else REASONS.get(status_code, self._reason))
        # What the audit entry says of it, not the exception itself: its traceback holds the
        # frames of the request (its decoded body among them) in a cycle with this handler,
        # freed only by a full collection, which the frozen cache makes rare.
        self.audit_error = (error.reason, error.message)
        if error.code == 401:
            self.set_header("WWW-Authenticate", 'Bearer realm="dashboard"')
        if error.code == 405 and self.route is not None:
            # RFC 9110 (15.5.6): a 405 names the methods the path does serve.
            self.set_header("Allow", ", ".join(m.upper() for m in self.route.methods()))
        for name, value in error.headers.items():
            self.set_header(name, value)
        for warning in getattr(self, "lag_warnings", ()):  # send_error cleared them
            self.add_header("Warning", warning)
        self.set_status(error.code, error.reason if error.code not in REASONS else None)
        if self.ctx.options.web_ui_compat:
            ctype, body = webui.error_reply(error, self.route.component if self.route else "api")
        else:
            ctype, body = JSON, ujson.dumps(error.body(), ensure_ascii=False)
        self.set_header("Content-Type", ctype)
        self.finish(body)

    def send_error(self, status_code=500, **kwargs):
        exc = kwargs.get("exc_info", (None, None, None))[1]
        if isinstance(exc, ApiError):
            status_code = exc.code
        super().send_error(status_code, **kwargs)

    def log_exception(self, typ, value, tb):
        if isinstance(value, (ApiError, tornado.web.HTTPError)):
            return
        log.error("unexpected error in %s %s", self.request.method,
                  self.route.template if self.route else self.request.path,
                  exc_info=(typ, value, tb))

    # --- the audit trail -------------------------------------------------------------------

    audit_person = None    # the verified person of a write in forward mode (_audit_identify)
    audit_error = None     # (reason, message) of the ApiError answered, if any (write_error)
    audit_targets = None   # [audit.entry.Target]: set by handlers that learn their objects

    @property
    def audit_sink(self):
        """Where this request's audit entries go (the trail of --audit-db), or None."""
        trail = getattr(self.ctx, "audit", None)
        return trail.record if trail is not None else None

    def audit_entries(self):
        """The audit entries of this finished write (serving/requestlog.py calls it): one per
        object it names (audit/entry.py)."""
        request, route = self.request, self.route
        error = self.audit_error
        status = self.get_status()
        reason, message = error if error is not None and status >= 400 else ("", "")
        token = bearer_token(request.headers.get("Authorization"))
        user, verified, source, details = audit_entry.who(
            self.person or self.audit_person, subject(token) if token else None,
            (request.headers.get("Impersonate-User") or "").strip() or None, status, message)
        options = self.ctx.options
        targets = self.audit_targets or [audit_targets.from_route(
            route.template, self.path_kwargs or {}, options.namespace,
            options.settings_config_map_name)]
        client = proxies.of(options).client(request.headers, request.remote_ip)
        cluster = getattr(request, "cluster", None)
        now = time.time()
        return [audit_entry.make(now, cluster.name if cluster is not None else "", user,
                                 verified, source, client, route.operation(
                                     request.method.lower()), request.method, target, status,
                                 reason, message, self.request_id, details)
                for target in targets]

    def on_finish(self):
        self._close_fetches()
        # Only matched routes are counted: random paths must not grow the label set.
        telemetry = self.ctx.telemetry
        if telemetry is not None and self.route is not None:
            telemetry.record(self.request.method, self.route.resource,
                             self.request.headers.get("User-Agent", ""),
                             self._headers.get("Content-Type", ""), self.get_status(),
                             time.monotonic() - self._started)


class NotFoundHandler(BaseHandler):
    """Unknown paths get the JSON error body too."""

    def prepare(self):
        raise ApiError(404, "the requested path %s was not found" % self.request.path)


class UnknownClusterHandler(BaseHandler):
    """/clusters/{name}/... of a name no cluster has (app/server.py)."""

    def prepare(self):
        raise ApiError(404, "no cluster named %s is served here"
                       % self.request.cluster_name[:100])


# List responses of this many items or more are encoded in the executor (issue #19).
LARGE_LIST_ITEMS = 500


def encode_json(obj):
    return ujson.dumps(obj, ensure_ascii=False, escape_forward_slashes=False)
