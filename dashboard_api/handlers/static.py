"""The web UI's files from --web-root at /, with the single-page-app fallback to index.html.

When the root holds one directory per locale (upstream's layout: en/, de/, ...), each request
gets the directory of its locale: the ``lang`` cookie, else the Accept-Language header, else
``en``. Unknown files fall back to index.html so the UI's own routes load; the index is never
cached; any other path ending in ``/`` is a 404 (no directory listings). Every answer says the
UI may not be framed (X-Frame-Options: DENY, CSP frame-ancestors 'none') nor sniffed.

Under a cluster's path (``/clusters/{name}/``, issue #28) the index gets ``<base
href="/clusters/{name}/">`` as the first element of its head: the UI's calls are relative, and
the upstream index decides its base at run time by probing for its config file from the root
down, which would find the root's copy first and send every call to the default cluster; the
first <base> of a page wins over one written later. With several clusters the root serves the
cluster picker instead of the UI (web/picker.py).
"""

import os

import tornado.web
import ujson

from dashboard_api.handlers import oidc, picker
from dashboard_api.serving.errors import ApiError
from dashboard_api.serving.paths import base_path
from dashboard_api.web import locales
from dashboard_api.web.pages import FRAME_HEADERS, INDEX, NO_CACHE, wants_picker, with_base

# Paths under /api never reach the UI: they are API paths, answered with a JSON 404.
PATTERN = r"/(?!api(?:/|$))(.*)"


def locale_dirs(root):
    """Locale ids that have a directory with an index.html under ``root``."""
    try:
        names = os.listdir(root)
    except OSError:
        return []
    return sorted(n for n in names if os.path.isfile(os.path.join(root, n, INDEX)))


class UiFileHandler(tornado.web.StaticFileHandler):
    """Files of a web page: ``HEADERS`` on every answer, errors as the gateway's JSON."""

    HEADERS = FRAME_HEADERS

    def set_default_headers(self):
        for name, value in self.HEADERS.items():
            self.set_header(name, value)

    def write_error(self, status_code, **kwargs):
        error = ApiError(status_code, "page not found" if status_code == 404 else
                         self._reason)
        self.set_header("Content-Type", "application/json; charset=UTF-8")
        self.finish(ujson.dumps(error.body()))


class StaticHandler(UiFileHandler):
    def initialize(self, path, localized):
        super().initialize(path)
        self.base = path
        self.localized = localized

    def _site(self):
        if not self.localized:
            return self.base
        wanted = [self.get_cookie("lang") or ""]
        wanted += locales.accept_language(self.request.headers.get("Accept-Language"))
        chosen = locales.choose([w for w in wanted if w], self.localized,
                                default="en" if "en" in self.localized else self.localized[0])
        return os.path.join(self.base, chosen)

    async def get(self, path, include_body=True):
        self.root = self._site()
        root = os.path.abspath(self.root)
        candidate = os.path.abspath(os.path.join(root, path))
        inside = candidate == root or candidate.startswith(root + os.sep)
        if path.endswith("/") or not inside:
            raise tornado.web.HTTPError(404)
        if not path or path == INDEX or not os.path.isfile(candidate):
            if wants_picker(self):
                return picker.serve(self, include_body)
            path = INDEX
            self.set_header("Cache-Control", NO_CACHE)
            if await self._index(root, include_body):
                return
        await super().get(path, include_body)

    async def _index(self, root, include_body):
        """Whether the index was answered here rather than as the file: by the OpenID Connect
        sign-in (handlers/oidc.py: a redirect to sign in, or the page with the session
        script), or with the <base> of the request's cluster."""
        self.absolute_path = os.path.join(root, INDEX)  # its ETag: the file's, as unchanged
        page = oidc.ui_index(self, self.absolute_path)
        if self._finished:
            return True
        name = getattr(self.request, "cluster_name", None)
        if page is None and name is None:
            return False
        if page is None:
            with open(self.absolute_path, "rb") as f:
                page = f.read()
        if name is not None:
            page = with_base(page, base_path(name))
        self.set_header("Content-Type", "text/html; charset=UTF-8")
        self.finish(page if include_body else b"")
        return True


def url_spec(web_root):
    root = os.path.abspath(web_root)
    return tornado.web.url(PATTERN, StaticHandler, {"path": root, "localized": locale_dirs(root)})
