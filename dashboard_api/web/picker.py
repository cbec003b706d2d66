"""The page to pick a cluster (issue #28), served at the root and at ``/clusters/`` when several
clusters are served (web/pages.py says why no UI lives at the root then): the clusters' names
and links, nothing else (nothing is shown before sign-in, and the page takes no token).

The page is plain HTML with one inline stylesheet allowed by its hash: no script, nothing from
elsewhere, no framing, no form posting (the same rules as the home page's).
"""

import base64
import hashlib
import html
import urllib.parse

from dashboard_api.serving.paths import base_path

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


def page(ctx):
    items = []
    for cluster in ctx.clusters:
        items.append(ITEM % {
            # a name's characters are path-safe (sources.path_name): ':' and '@' stay as they are
            "href": html.escape(urllib.parse.quote(base_path(cluster.name), safe="/:@~")),
            "name": html.escape(cluster.name),
            "default": " (default)" if cluster.default else ""})
    return (PAGE % {"style": STYLE, "items": "\n".join(items)}).encode("utf-8")
