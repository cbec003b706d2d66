"""The gateway's own home page at / when no --web-root is given (dashboard_api/web/home).

A person who opens the URL ``bin/dashboard`` prints finds what runs, a sign-in field and a first
look through the API, instead of a JSON 404. Plain HTML, CSS and JavaScript shipped in the
package: no build step, nothing loaded from elsewhere. Only the page's own files are served;
any other path stays the JSON 404.

The page's Content-Security-Policy allows scripts, styles and requests of this origin only
(no inline script, no other site), no plugins, no framing and no form posting elsewhere; the
page sends no cookies (the gateway takes credentials only from the Authorization header) and
reads one only to take the ID token an OpenID Connect sign-in left for it.

Under a cluster's path (``/clusters/{name}/``) the page gets that path as its <base> (its calls
are relative), so there its base-uri is 'self' rather than 'none'; with several clusters the root
serves the cluster picker instead (web/picker.py).
"""

import os

import tornado.web

from dashboard_api.handlers import picker
from dashboard_api.handlers.static import UiFileHandler
from dashboard_api.serving.paths import base_path
from dashboard_api.web.pages import (FRAME_HEADERS, HOME_ROOT, INDEX, NO_CACHE, wants_picker,
                                     with_base)

FILES = (INDEX, "home.css", "home.js", "favicon.svg")
PATTERN = r"/(|%s)$" % "|".join(name.replace(".", r"\.") for name in FILES)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

# Under a cluster's path: the page's own <base> (its path) is allowed, no other.
CLUSTER_CSP = CSP.replace("base-uri 'none'", "base-uri 'self'")


class HomeHandler(UiFileHandler):
    HEADERS = dict(FRAME_HEADERS, **{"Content-Security-Policy": CSP,
                                     "Referrer-Policy": "no-referrer"})

    async def get(self, path, include_body=True):
        if not path or path == INDEX:
            if wants_picker(self):
                return picker.serve(self, include_body)
            path = INDEX
            self.set_header("Cache-Control", NO_CACHE)
            name = getattr(self.request, "cluster_name", None)
            if name is not None:
                self.absolute_path = os.path.join(HOME_ROOT, INDEX)  # its ETag: the file's
                with open(self.absolute_path, "rb") as f:
                    page = with_base(f.read(), base_path(name))
                self.set_header("Content-Type", "text/html; charset=UTF-8")
                self.set_header("Content-Security-Policy", CLUSTER_CSP)
                return self.finish(page if include_body else b"")
        await super().get(path, include_body)


def url_spec():
    return tornado.web.url(PATTERN, HomeHandler, {"path": HOME_ROOT})
