"""The web pages' paths, cookies and headers, in one place: where a cluster's web UI lives, the
cookies its sign-in sets there, the headers every page answer carries, and the scripts and tags
the gateway adds to a page.

With several clusters, each cluster's web UI (the upstream UI under --web-root, else the home
page) is served under its own path, ``/clusters/{name}/``, and never at the root: the UI keeps
its token in a ``token`` cookie set without a Path, so a cookie set by a page at the root would
have Path=/ and reach every cluster's page. The root then serves the cluster picker instead
(web/picker.py). With one cluster the root serves its UI as always.
"""

from __future__ import annotations

import html
import os
import re
import string

import tornado.web

from dashboard_api.serving.paths import base_path

TOKEN_COOKIE = "token"                       # the upstream web UI's
FLOW_COOKIE = "dashboard_oidc_flow"          # a sign-in under way (auth/oidc/flow.py)
REFRESH_COOKIE = "dashboard_oidc_refresh"    # the sealed refresh token
SESSION_COOKIE = "dashboard_oidc_session"    # the sealed current ID token (one sign-in)
# The sign-in's own cookies (refresh token, session) are the whole gateway's: a person signed
# in with the provider is signed in on every cluster (issue #39). The ``token`` cookies stay
# each UI's own.
SHARED_PATH = "/"
OIDC_PREFIX = "/oidc/"

INDEX = "index.html"
NO_CACHE = "no-cache, no-store, must-revalidate"
# The UI may not be framed by another site (clickjacking): both the old header and CSP's.
FRAME_HEADERS = {"X-Frame-Options": "DENY",
                 "Content-Security-Policy": "frame-ancestors 'none'",
                 "X-Content-Type-Options": "nosniff"}

HERE = os.path.dirname(os.path.abspath(__file__))
HOME_ROOT = os.path.join(HERE, "home")       # the home page's files
with open(os.path.join(HERE, "session.js"), encoding="utf-8") as _script:
    # $issuer, $base and $period: JSON values, filled in per page (``session_script``)
    SESSION_SCRIPT = string.Template(_script.read())
SCRIPT_TAG = '<script src="%soidc/session.js"></script>'


def several(ctx: object) -> bool:
    """Whether several clusters are served (the root then serves the picker)."""
    clusters = getattr(ctx, "clusters", None)
    return clusters is not None and len(clusters) > 1


def ui_base(handler: tornado.web.RequestHandler) -> str:
    """The path of the web UI a request belongs to, where its sign-in cookies go: its
    cluster's ``/clusters/{name}/``; at the root ``/`` with one cluster, and the default
    cluster's path with several (the root then serves no UI)."""
    name = getattr(handler.request, "cluster_name", None)
    ctx = handler.application.ctx
    if name is None and several(ctx):
        name = ctx.clusters.default_name
    return base_path(name)


def cookie_path(base: str) -> str:
    """The Path of a cookie for the UI at ``base``: what the UI's own cookies get there (the
    page's directory, without its last slash), so that the UI drops the same cookie."""
    return base.rstrip("/") or "/"


def refresh_path(base: str) -> str:
    """Where the refresh cookie of the web UI at ``base`` was kept before one sign-in served
    every cluster (its /oidc/ routes): cleared there at sign-out."""
    return base + OIDC_PREFIX[1:]


def ui_bases(ctx: object) -> list:
    """The path of every web UI the gateway serves: ``/`` and each cluster's."""
    clusters = getattr(ctx, "clusters", None)
    return ["/"] + [base_path(c.name) for c in (clusters or ())]


def wants_picker(handler: tornado.web.RequestHandler) -> bool:
    """Whether a page of the web UI asked for at the root gets the picker instead."""
    return getattr(handler.request, "cluster_name", None) is None and \
        several(handler.application.ctx)


_HEAD = re.compile(rb"<head(?:\s[^>]*)?>", re.IGNORECASE)
_DOCTYPE = re.compile(rb"^\s*<!doctype[^>]*>", re.IGNORECASE)


def with_base(page: bytes, base: str) -> bytes:
    """``page`` (an HTML document's bytes) with ``<base href="{base}">`` as the first element
    of its head (after the doctype when it has no <head> tag: the parser then opens the head
    for it)."""
    tag = b'<base href="%s">' % html.escape(base, quote=True).encode("utf-8")
    found = _HEAD.search(page) or _DOCTYPE.search(page)
    at = found.end() if found else 0
    return page[:at] + tag + page[at:]


def with_session_script(page: bytes, base: str) -> bytes:
    """``page`` with the sign-in's session script (/oidc/session.js of the UI at ``base``)
    last in its head."""
    at = page.lower().find(b"</head>")
    at = at if at >= 0 else len(page)
    return page[:at] + (SCRIPT_TAG % html.escape(base)).encode("utf-8") + page[at:]
