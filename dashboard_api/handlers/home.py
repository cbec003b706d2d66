"""The gateway's own home page at / when no --web-root is given (dashboard_api/home).

A person who opens the URL ``bin/dashboard`` prints finds what runs, a sign-in field and a first
look through the API, instead of a JSON 404. Plain HTML, CSS and JavaScript shipped in the
package: no build step, nothing loaded from elsewhere. Only the page's own files are served;
any other path stays the JSON 404.

The page's Content-Security-Policy allows scripts, styles and requests of this origin only
(no inline script, no other site), no plugins, no framing and no form posting elsewhere; the
page sends no cookies (the gateway takes credentials only from the Authorization header) and
reads one only to take the ID token an OpenID Connect sign-in left for it.
"""

import os

import tornado.web

from dashboard_api.handlers.static import FRAME_HEADERS, INDEX, NO_CACHE, UiFileHandler

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "home")
FILES = (INDEX, "home.css", "home.js", "favicon.svg")
PATTERN = r"/(|%s)$" % "|".join(name.replace(".", r"\.") for name in FILES)
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
       "img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")


class HomeHandler(UiFileHandler):
    HEADERS = dict(FRAME_HEADERS, **{"Content-Security-Policy": CSP,
                                     "Referrer-Policy": "no-referrer"})

    async def get(self, path, include_body=True):
        if not path or path == INDEX:
            path = INDEX
            self.set_header("Cache-Control", NO_CACHE)
        await super().get(path, include_body)


def url_spec():
    return tornado.web.url(PATTERN, HomeHandler, {"path": ROOT})
