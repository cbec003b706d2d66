"""Where each cluster's web UI lives, and the page to pick one (issue #28; web/picker.py).

The root (``/``) and ``/clusters/`` serve the picker when several clusters are served; it drops
a ``token`` cookie left at the root (web/pages.py says why no UI lives there then).
"""

import hashlib

import tornado.web

from dashboard_api.web import picker
from dashboard_api.web.pages import FRAME_HEADERS, NO_CACHE, TOKEN_COOKIE


def serve(handler, include_body=True):
    """Answers ``handler``'s request with the picker, dropping a root ``token`` cookie."""
    for name, value in FRAME_HEADERS.items():
        handler.set_header(name, value)
    handler.set_header("Content-Security-Policy", picker.CSP)
    handler.set_header("Referrer-Policy", "no-referrer")
    handler.set_header("Cache-Control", NO_CACHE)
    handler.set_header("Content-Type", "text/html; charset=UTF-8")
    handler.clear_cookie(TOKEN_COOKIE, path="/")
    body = picker.page(handler.application.ctx)
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
