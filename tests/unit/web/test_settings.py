"""Settings defaults, validation and pinned-resource edits."""

import pytest
import ujson

from dashboard_api.web import settings as ws


def test_defaults_fill_missing_and_bad_fields_but_keep_zeros():
    got = ws.merged({"itemsPerPage": 25, "resourceAutoRefreshTimeInterval": 0,
                     "labelsLimit": "3", "clusterName": None, "extra": 1})
    assert got["itemsPerPage"] == 25 and got["resourceAutoRefreshTimeInterval"] == 0
    assert got["labelsLimit"] == 3 and got["clusterName"] == "" and "extra" not in got
    assert set(got) == set(ws.DEFAULTS)
    assert ws.merged(None) == ws.DEFAULTS and ws.merged(None) is not ws.DEFAULTS


@pytest.mark.parametrize("body", [
    {"itemsPerPage": 0}, {"itemsPerPage": "10"}, {"disableAccessDeniedNotifications": 1},
    {"namespaceFallbackList": ["a", 2]}, {"labelsLimit": True}, [],
])
def test_validation_refuses_bad_values(body):
    with pytest.raises(ws.SettingsError):
        ws.validated(body)


def test_parse_tolerates_garbage():
    assert ws.parse_settings("{not json") == ws.DEFAULTS
    assert ws.parse_settings(None) == ws.DEFAULTS
    assert ws.parse_pinned("[1, {\"kind\": \"pod\"}]") == []
    assert ws.parse_pinned("{}") == []


def test_pin_and_unpin():
    pod = ws.pinned_resource({"kind": "pod", "name": "p", "namespaced": True, "namespace": "n",
                              "displayName": "Pod"})
    node = ws.pinned_resource({"kind": "node", "name": "n1"})
    assert node == {"kind": "node", "name": "n1", "displayName": "node", "namespaced": False}
    items = ws.pin(ws.pin([], pod), node)
    assert ws.pin(items, dict(pod)) is items
    assert ws.unpin(items, "pod", "p", "n") == [node]
    with pytest.raises(LookupError):
        ws.unpin(items, "pod", "p")
    assert ws.parse_pinned(ws.dump(items)) == items
    assert ujson.loads(ws.dump(items))[0]["namespace"] == "n"


@pytest.mark.parametrize("body", [
    {"kind": "pod"}, {"kind": "", "name": "x"}, {"kind": "pod", "name": "x", "namespaced": True},
    {"kind": "pod", "name": "x", "namespaced": "yes"}, "pod",
])
def test_bad_pinned_resources(body):
    with pytest.raises(ws.SettingsError):
        ws.pinned_resource(body)
