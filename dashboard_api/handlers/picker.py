"""Where each cluster's web UI lives, and the page to pick one (issue #28).

With several clusters, each cluster's web UI (the upstream UI under --web-root, else the home
page) is served under its own path, ``/clusters/{name}/``, and never at the root: the UI keeps
its token in a ``token`` cookie set without a Path, so a cookie set by a page at the root would
have Path=/ and reach every cluster's page. The root (``/``) and ``/clusters/`` then serve this
page instead: the clusters' names and links, nothing else (nothing is shown before sign-in, and
the page takes no token), and it drops a ``token`` cookie left at the root. With one cluster
the root serves its UI as always.

The page is plain HTML with one inline stylesheet allowed by its hash: no script, nothing from
elsewhere, no framing, no form posting (the same rules as the home page's).
"""

import base64
import hashlib
import html
import urllib.parse

import tornado.web

from dashboard_api.clusters import base_path
from dashboard_api.handlers.static import FRAME_HEADERS, NO_CACHE

TOKEN_COOKIE = "token"   # the upstream web UI's
STYLE = ("body{margin:0;font:15px/1.45 system-ui,sans-serif;color:#1f2933;background:#f4f6f9}"
         "header{padding:.8rem 1.5rem;background:#326ce5;color:#fff}"
         "h1{margin:0;font-size:1.3rem}"
         "main{max-width:40em;margin:1.5rem auto;padding:1rem 1.5rem;background:#fff;"
         "border:1px solid #d9e0e8;border-radius:6px}"
         "li{margin:.4rem 0}a{color:#326ce5;font-weight:600}.note{color:#5f6b7a}")
CSP = ("default-src 'none'; style-src 'sha256-%s'; base-uri 'none'; form-action 'none'; "
       "frame-ancestors 'none'" % base64.b64encode(hashlib.sha256(STYLE.encode()).digest())
       .decode())
PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>dashboard-api: clusters</title><style>%(style)s</style></head>
<body><header><h1>dashboard-api</h1></header>
<main><h2>Clusters</h2>
<p class="note">Each cluster has its own web UI and its own sign-in: a token given to one is
never sent to another.</p>
<ul id="clusters">
%(items)s
</ul></main></body></html>
"""
ITEM = '<li><a href="%(href)s">%(name)s</a>%(default)s</li>'


def several(ctx):
    """Whether several clusters are served (the root then serves the picker)."""
    clusters = getattr(ctx, "clusters", None)
    return clusters is not None and len(clusters) > 1


def ui_base(handler):
    """The path of the web UI a request belongs to, where its sign-in cookies go: its
    cluster's ``/clusters/{name}/``; at the root ``/`` with one cluster, and the default
    cluster's path with several (the root then serves no UI)."""
    name = getattr(handler.request, "cluster_name", None)
    ctx = handler.application.ctx
    if name is None and several(ctx):
        name = ctx.clusters.default_name
    return base_path(name)


def cookie_path(base):
    """The Path of a cookie for the UI at ``base``: what the UI's own cookies get there (the
    page's directory, without its last slash), so that the UI drops the same cookie."""
    return base.rstrip("/") or "/"


def wanted(handler):
    """Whether a page of the web UI asked for at the root gets the picker instead."""
    return getattr(handler.request, "cluster_name", None) is None and \
        several(handler.application.ctx)


def page(ctx):
    items = []
    for cluster in ctx.clusters:
        items.append(ITEM % {
            # a name's characters are path-safe (sources.path_name): ':' and '@' stay as they are
            "href": html.escape(urllib.parse.quote(base_path(cluster.name), safe="/:@~")),
            "name": html.escape(cluster.name),
            "default": " (default)" if cluster.default else ""})
    return (PAGE % {"style": STYLE, "items": "\n".join(items)}).encode("utf-8")


def serve(handler, include_body=True):
    """Answers ``handler``'s request with the picker, dropping a root ``token`` cookie."""
    for name, value in FRAME_HEADERS.items():
        handler.set_header(name, value)
    handler.set_header("Content-Security-Policy", CSP)
    handler.set_header("Referrer-Policy", "no-referrer")
    handler.set_header("Cache-Control", NO_CACHE)
    handler.set_header("Content-Type", "text/html; charset=UTF-8")
    handler.clear_cookie(TOKEN_COOKIE, path="/")
    body = page(handler.application.ctx)
    # Its own ETag: a file handler's would be the file's, and there is no file.
    handler.set_header("Etag", '"%s"' % hashlib.sha256(body).hexdigest()[:32])
    handler.finish(body if include_body else b"")


class PickerHandler(tornado.web.RequestHandler):
    """/clusters/ (and /clusters): the picker, with one cluster or several."""

    def get(self):
        serve(self)

    def head(self):
        serve(self, include_body=False)


def url_spec():
    return tornado.web.url(r"/clusters/?$", PickerHandler)
