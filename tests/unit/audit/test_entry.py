"""Audit entries (audit/entry.py) and their objects (audit/targets.py): who is named and how
sure the gateway is of it, exact RFC 3339 times, and the object each write route names."""

import pytest

from dashboard_api.audit import entry, targets
from dashboard_api.auth.persons import Person


def test_who_made_a_change_and_how_sure_the_gateway_is():
    person = Person("alice@example.com", ("team",), "alice", 0)
    assert entry.who(person, "whatever", None, 500) == ("alice@example.com", True, "oidc", {})
    refusal = ('deployments.apps "web" is forbidden: User "system:serviceaccount:x:y" cannot '
               'patch resource "deployments" in API group "apps"')
    assert entry.who(None, "forged-name", None, 403, refusal) == (
        "system:serviceaccount:x:y", True, "apiserver", {})
    # The claim of a token the API server accepted for this write; else marked unverified.
    sa = "system:serviceaccount:x:y"
    assert entry.who(None, sa, None, 201) == (sa, True, "token", {})
    for status in (400, 401, 404, 500):
        assert entry.who(None, sa, None, status) == (sa, False, "claim", {})
    assert entry.who(None, None, None, 204) == ("unknown", False, "unknown", {})
    # A client's own impersonation (forward mode): the name the API server acted as.
    assert entry.who(None, sa, "jane", 200) == ("jane", True, "token",
                                                {"impersonatedBy": sa})


def test_times_are_exact_to_the_millisecond():
    assert entry.rfc3339_ms(1795852862345) == "2026-11-28T08:01:02.345Z"
    assert entry.millis_of("2026-11-28T08:01:02.345Z") == 1795852862345
    assert entry.millis_of("2026-11-28T09:01:02.3456789+01:00") == 1795852862345
    assert entry.millis_of("2026-11-28T08:01:02Z") == 1795852862000
    for bad in ("yesterday", "2026-11-28", "2026-11-28T06:01:02", "2026-13-28T06:01:02Z",
                "x" * 100, None):
        with pytest.raises(ValueError):
            entry.millis_of(bad)


def test_an_entry_holds_names_bounded_and_nothing_else():
    made = entry.make(1795852862.345, "prod", "u" * 5000, True, "oidc", "10.0.0.1",
                      "scale-namespaced", "PUT", entry.Target("deployment", "apps",
                                                              "deployments", "ns", "web"),
                      403, "Forbidden", "m" * 5000, "rid", {"replicas": 3})
    assert set(made) == set(entry.FIELDS)
    assert made["time"] == "2026-11-28T08:01:02.345Z" and len(made["id"]) == 24
    assert len(made["user"]) == entry.MAX_FIELD and len(made["message"]) == entry.MAX_MESSAGE
    assert '"kind":"deployment"' in entry.json_line(made)


@pytest.mark.parametrize("template, params, expected", [
    ("/api/v1/deployment/{namespace}/{name}/restart", {"namespace": "a", "name": "web"},
     ("deployment", "apps", "deployments", "a", "web")),
    ("/api/v1/node/{name}/drain", {"name": "n1"}, ("node", "", "nodes", "", "n1")),
    ("/api/v1/_raw/{kind}/namespace/{namespace}/name/{name}",
     {"kind": "crontabs.stable.example.com", "namespace": "a", "name": "c"},
     ("crontabs.stable.example.com", "stable.example.com", "crontabs", "a", "c")),
    ("/api/v1/_raw/{kind}/name/{name}", {"kind": "nosuchkind", "name": "x"},
     ("nosuchkind", "", "", "", "x")),
    ("/api/v1/settings/global", {}, ("configmap", "", "configmaps", "kd", "settings")),
    ("/settings/pinnedresources/{kind}/{name}", {"kind": "pod", "name": "p"},
     ("configmap", "", "configmaps", "kd", "settings")),
    ("/api/v1/appdeployment", {}, ("", "", "", "", "")),
])
def test_the_object_a_write_route_names(template, params, expected):
    got = targets.from_route(template, params, "kd", "settings")
    assert (got.kind, got.group, got.resource, got.namespace, got.name) == expected


def test_the_default_database_follows_systemd_then_xdg(monkeypatch):
    import os

    from dashboard_api import audit
    monkeypatch.setenv("STATE_DIRECTORY", "/var/lib/dashboard-api:/other")
    assert audit.default_path() == "/var/lib/dashboard-api/audit.db"
    monkeypatch.delenv("STATE_DIRECTORY")
    monkeypatch.setenv("XDG_STATE_HOME", "/state")
    assert audit.default_path() == "/state/dashboard-api/audit.db"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", "/home/u")
    assert audit.default_path() == os.path.join("/home/u", ".local", "state", "dashboard-api",
                                                "audit.db")
