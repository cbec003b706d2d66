"""Global settings and pinned resources of the web UI: defaults, validation, list edits.

They are stored as upstream stores them: ConfigMap keys ``settings`` (a JSON object) and
``pinnedResources`` (a JSON array). Unlike upstream, a stored zero stays zero (0 seconds of
auto-refresh means "off" to the UI); only missing or ill-typed fields take their defaults.
Pure functions, no I/O.
"""

import copy

import ujson

SETTINGS_KEY = "settings"
PINNED_KEY = "pinnedResources"

DEFAULTS = {
    "clusterName": "",
    "itemsPerPage": 10,
    "labelsLimit": 3,
    "logsAutoRefreshTimeInterval": 5,
    "resourceAutoRefreshTimeInterval": 10,
    "disableAccessDeniedNotifications": False,
    "hideAllNamespaces": False,
    "defaultNamespace": "default",
    "namespaceFallbackList": ["default"],
}

_MINIMUM = {"itemsPerPage": 1, "labelsLimit": 0, "logsAutoRefreshTimeInterval": 0,
            "resourceAutoRefreshTimeInterval": 0}


class SettingsError(ValueError):
    pass


def _valid(name, value):
    default = DEFAULTS[name]
    if isinstance(default, bool):
        return isinstance(value, bool)
    if isinstance(default, int):
        return isinstance(value, int) and not isinstance(value, bool) and value >= _MINIMUM[name]
    if isinstance(default, str):
        return isinstance(value, str)
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def merged(stored):
    """Every field, from ``stored`` where it is present and well typed, else the default."""
    stored = stored if isinstance(stored, dict) else {}
    return {name: copy.deepcopy(stored[name]) if name in stored and _valid(name, stored[name])
            else copy.deepcopy(default) for name, default in DEFAULTS.items()}


def validated(body):
    """The settings to store from a PUT body; SettingsError names the first bad field."""
    if not isinstance(body, dict):
        raise SettingsError("settings must be a JSON object")
    for name, value in body.items():
        if name in DEFAULTS and value is not None and not _valid(name, value):
            raise SettingsError("invalid value for %s: %r" % (name, value))
    return merged(body)


def parse_settings(text):
    try:
        return merged(ujson.loads(text)) if text else merged(None)
    except ValueError:
        return merged(None)


def dump(value):
    return ujson.dumps(value, ensure_ascii=False, escape_forward_slashes=False)


# --- pinned resources ----------------------------------------------------------------------

def parse_pinned(text):
    """The stored list, keeping only well-formed entries."""
    try:
        items = ujson.loads(text) if text else []
    except ValueError:
        return []
    if not isinstance(items, list):
        return []
    out = []
    for item in items:
        try:
            out.append(pinned_resource(item))
        except SettingsError:
            continue
    return out


def pinned_resource(body):
    """A pinned resource {kind, name, displayName, namespaced, namespace?} from a PUT body."""
    if not isinstance(body, dict):
        raise SettingsError("a pinned resource must be a JSON object")
    for name in ("kind", "name"):
        if not isinstance(body.get(name), str) or not body[name]:
            raise SettingsError("%s is required and must be a string" % name)
    namespaced = body.get("namespaced", False)
    if not isinstance(namespaced, bool):
        raise SettingsError("namespaced must be true or false")
    item = {"kind": body["kind"], "name": body["name"],
            "displayName": body.get("displayName") if isinstance(body.get("displayName"), str)
            else body["kind"], "namespaced": namespaced}
    if namespaced:
        if not isinstance(body.get("namespace"), str) or not body["namespace"]:
            raise SettingsError("namespace is required for a namespaced resource")
        item["namespace"] = body["namespace"]
    return item


def _same(a, kind, name, namespace):
    return a["kind"] == kind and a["name"] == name and a.get("namespace") == namespace


def pin(items, item):
    """The list with ``item`` added; unchanged (same object) when it is already pinned."""
    if any(_same(a, item["kind"], item["name"], item.get("namespace")) for a in items):
        return items
    return items + [item]


def unpin(items, kind, name, namespace=None):
    """The list without the entry; LookupError when it was not pinned."""
    kept = [a for a in items if not _same(a, kind, name, namespace)]
    if len(kept) == len(items):
        raise LookupError("pinned resource not found")
    return kept
