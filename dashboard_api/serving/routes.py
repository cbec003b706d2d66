"""A route: one path template served by one handler class, and how routes become Tornado's URL
specs. The table of every route is app/routes.py; each handler module exports its ``ROUTES``.
"""

import re

import tornado.web

API_PREFIX = "/api/v1/"
# The body limit of routes that take a few fields (a permission check, a replica count, a name,
# the settings): --max-body-size (4 MiB) is for deploy files and edited objects.
COMMAND_BODY = 64 * 1024
_PARAM = re.compile(r"\{(\w+)\}")


class Route:
    """A path template such as ``/api/v1/pod/{namespace}/{pod}`` served by one handler class.

    Several routes may share a template when they serve different methods (``url_specs``
    merges them; see ``merged``).

    ``csrf`` says whether POSTs to it need a CSRF token; the token's action is the first path
    segment after ``/api/v1/`` (as upstream binds it). ``component`` is the part of the product
    that serves it (api, auth, web), used by the deployment modes. ``audit``: whether its
    POST, PUT, PATCH and DELETE requests get an audit line in the request log (False for
    calls that change nothing, such as validators and permission checks). ``max_body``: a
    body size limit of its own (bytes) where --max-body-size is more than the route needs
    (bodylimit.py applies the smaller). ``feature``: the optional feature the route belongs
    to (``oidc``), served (and described) only where that feature is configured.
    """

    def __init__(self, template, handler, name, csrf=True, component="api", kwargs=None,
                 summary="", auth=True, audit=True, max_body=None, feature=None):
        self.template = template
        self.handler = handler
        self.name = name
        self.csrf = csrf
        self.component = component
        self.kwargs = kwargs or {}
        self.summary = summary
        self.auth = auth
        self.audit = audit
        self.max_body = max_body
        self.feature = feature
        self.params = _PARAM.findall(template)
        self.operations = {}  # method -> name of the route serving it, when merged

    def operation(self, method):
        """The name of the route that serves ``method`` (lower case) on this path."""
        return self.operations.get(method, self.name)

    def needs_token(self, method):
        """Whether ``method`` (lower case) needs the Bearer header; ``auth`` is a bool or the
        tuple of methods that need it."""
        if isinstance(self.auth, bool):
            return self.auth
        return method in self.auth

    @property
    def csrf_action(self):
        if not self.csrf or not self.template.startswith(API_PREFIX):
            return None
        return self.template[len(API_PREFIX):].split("/", 1)[0]

    @property
    def resource(self):
        """The first segment after /api/v1 (the label of the request metrics)."""
        if self.template.startswith(API_PREFIX):
            return self.template[len(API_PREFIX):].split("/", 1)[0]
        return self.template.strip("/").split("/", 1)[0] or "/"

    @property
    def literal_segments(self):
        return sum(1 for s in self.template.split("/") if s and not _PARAM.fullmatch(s))

    def regex(self):
        out = []
        for segment in self.template.strip("/").split("/"):
            m = _PARAM.fullmatch(segment)
            out.append("(?P<%s>[^/]+)" % m.group(1) if m else re.escape(segment))
        # Trailing slashes are ignored, as upstream does (the UI posts to `secret/`).
        return "/" + "/".join(out) + "/?$"

    def methods(self):
        return [m for m in ("get", "post", "put", "patch", "delete")
                if getattr(self.handler, m) is not getattr(_Unimplemented, m)]


class _Unimplemented:
    """Stands for tornado.web.RequestHandler's default method stubs."""


def _load_unimplemented():
    for m in ("get", "post", "put", "patch", "delete"):
        setattr(_Unimplemented, m, getattr(tornado.web.RequestHandler, m))


_load_unimplemented()


def ordered(routes):
    """When two templates match a path, the one with more literal segments wins."""
    return sorted(routes, key=lambda r: -r.literal_segments)


def merged(routes):
    """One Route per template: routes that serve different methods of one path (a list's GET
    and a create's POST) become one whose handler class inherits from each of theirs.

    Tornado matches a path to one handler class, so without this the second route of a path
    would never be reached. Each route keeps its own entry in the table, so the OpenAPI
    document still describes every method with its own name and summary. Two routes serving
    the same method of a path, or disagreeing on a handler argument, are a programming error.
    """
    groups = {}
    for route in routes:
        groups.setdefault(route.template, []).append(route)
    out = []
    for template, group in groups.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        seen, kwargs, auth = {}, {}, []
        for route in group:
            for method in route.methods():
                if method in seen:
                    raise ValueError("%s %s is served by both %s and %s" % (
                        method.upper(), template, seen[method].name, route.name))
                seen[method] = route
                if route.needs_token(method):
                    auth.append(method)
            for key, value in route.kwargs.items():
                if kwargs.setdefault(key, value) != value:
                    raise ValueError("routes of %s disagree on %s" % (template, key))
        handler = type("Merged_" + "_".join(r.handler.__name__ for r in group),
                       tuple(r.handler for r in group), {})
        poster = seen.get("post", group[0])
        route = Route(template, handler, "+".join(r.name for r in group),
                      csrf=poster.csrf, component=group[0].component, kwargs=kwargs,
                      summary="; ".join(r.summary for r in group if r.summary),
                      auth=tuple(auth), audit=any(r.audit for r in group))
        route.operations = {method: r.name for method, r in seen.items()}
        out.append(route)
    return out


def url_specs(routes):
    return [tornado.web.url(r.regex(), r.handler, dict(route=r, **r.kwargs), name=r.name)
            for r in ordered(merged(routes))]
