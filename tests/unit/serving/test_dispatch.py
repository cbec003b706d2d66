"""serving/dispatch.py: the routes tried for a path are the few that could match it, and the
first of them that matches is the one Tornado's own scan of every route finds."""

import re
from types import SimpleNamespace

import tornado.web

from dashboard_api.app import routes as table
from dashboard_api.serving import dispatch, routes


def first(rules, path):
    for rule in rules:
        if rule.matcher.match(SimpleNamespace(path=path)) is not None:
            return rule
    return None


def test_literal_prefixes_stop_where_the_pattern_stops_being_literal():
    assert dispatch.literal_prefix(r"/api/v1/pod/(?P<namespace>[^/]+)/?$") == "/api/v1/pod/"
    assert dispatch.literal_prefix(r"/api/v1/pod/?$") == "/api/v1/pod"
    assert dispatch.literal_prefix(r"/api/v1/secret\-x/?$") == "/api/v1/secret-x"
    assert dispatch.literal_prefix(r"/api/v1/ab*c") == "/api/v1/a"
    assert dispatch.literal_prefix(r"/api/v1/ab{0,2}") == "/api/v1/a"
    assert dispatch.literal_prefix(r"/api/v1/ab+") == "/api/v1/ab"
    assert dispatch.literal_prefix(r"/files/\d+") == "/files/"
    assert dispatch.literal_prefix(r"(?i)/x") == ""
    assert dispatch.literal_prefix(r"/api/v1/a|/healthz") == ""   # either: no common text
    assert dispatch.literal_prefix(r"/(|index\.html|home\.js)$") == "/"
    assert dispatch.literal_prefix(r"/x/[|]y") == "/x/"
    assert dispatch.literal_prefix(r"/x/\|y") == "/x/|y"
    assert dispatch.head("/api/v1/pod/ns/name") == "/api/v1/pod"
    assert dispatch.head("/api/v1/pod/") == "/api/v1/pod"
    assert dispatch.head("/healthz") == "/healthz"


def test_every_path_of_the_table_finds_the_route_tornado_finds():
    app = tornado.web.Application(routes.url_specs(table.all_routes()) + [
        tornado.web.url(r"/clusters/?$", tornado.web.RequestHandler),
        tornado.web.url(r"/(.*)", tornado.web.RequestHandler)])
    rules = app.wildcard_router.rules
    found = dispatch.Dispatch(rules)
    paths = ["/", "/api/v1", "/api/v1/", "/api/v1/pod", "/api/v1/podx/a", "/api/v1//x",
             "/api/v1/deployment/ns/x/horizontalpodautoscaler", "/healthz", "/clusters/"]
    for route in table.all_routes():
        for value in ("x", "ns-1", "a,b", "%20"):
            path = re.sub(r"\{\w+\}", value, route.template)
            paths += [path, path + "/", path + "/more", path + "x"]
    dispatched = 0
    for path in paths:
        candidates = found.candidates(path)
        if candidates is None:   # left to Tornado's own scan
            continue
        dispatched += 1
        assert len(candidates) < len(rules) / 5, path
        whole = first(rules, path)
        mine = first(candidates, path)
        # no candidate matching sends the request to Tornado's scan: only a different route,
        # or a route missed among the candidates, would be wrong
        assert mine is whole or (mine is None and whole not in candidates), path
    assert dispatched > len(paths) * 0.7
