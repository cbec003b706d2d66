"""Node drain, pure: the options of the request and which pods are evicted, skipped or refused.

The rules are kubectl drain's (reference §8.9): mirror (static) pods are skipped, as the
kubelet would recreate them; daemon-set pods are skipped when ignoring daemon sets (their
controller would put them back), else they stop the drain; pods with emptyDir data and pods
no controller would recreate stop the drain unless deleteEmptyDirData / force allow them.
Finished pods are always removed.
"""

from dashboard_api.serving.errors import bad_request

MIRROR = "kubernetes.io/config.mirror"
NANOS = 1_000_000_000
DEFAULTS = {"force": True, "timeout": 120 * NANOS, "gracePeriodSeconds": -1,
            "ignoreAllDaemonSets": True, "deleteEmptyDirData": True}
MAX_TIMEOUT = 3600 * NANOS


def options(body):
    """The drain options of the request body (a JSON object, as upstream requires), with the
    reference's defaults; 400 for a wrong type or value."""
    if not isinstance(body, dict):
        raise bad_request("the body must be a JSON object ({} for the defaults)")
    out = dict(DEFAULTS)
    for key, default in DEFAULTS.items():
        if key not in body or body[key] is None:
            continue
        value = body[key]
        if isinstance(default, bool):
            if not isinstance(value, bool):
                raise bad_request("%s must be true or false" % key)
        elif not isinstance(value, int) or isinstance(value, bool):
            raise bad_request("%s must be an integer" % key)
        out[key] = value
    if not 0 < out["timeout"] <= MAX_TIMEOUT:
        raise bad_request("timeout must be positive nanoseconds, at most one hour")
    if out["gracePeriodSeconds"] < -1:
        raise bad_request("gracePeriodSeconds must be -1 (each pod's own) or more")
    return out


def _controller(pod):
    for ref in pod["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def plan(pods, opts):
    """(evict, skipped, refused): pods to evict, and [(pod, reason)] for the others."""
    evict, skipped, refused = [], [], []
    for pod in pods:
        meta = pod["metadata"]
        if MIRROR in (meta.get("annotations") or {}):
            skipped.append((pod, "mirror pod"))
            continue
        if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
            evict.append(pod)
            continue
        controller = _controller(pod)
        if controller is not None and controller.get("kind") == "DaemonSet":
            if opts["ignoreAllDaemonSets"]:
                skipped.append((pod, "managed by DaemonSet %s" % controller.get("name")))
            else:
                refused.append((pod, "managed by DaemonSet %s (ignoreAllDaemonSets is false)"
                                % controller.get("name")))
            continue
        if not opts["deleteEmptyDirData"] and any(
                "emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or []):
            refused.append((pod, "has emptyDir data (deleteEmptyDirData is false)"))
            continue
        if controller is None and not opts["force"]:
            refused.append((pod, "not managed by a controller (force is false)"))
            continue
        evict.append(pod)
    return evict, skipped, refused


def key(pod):
    return "%s/%s" % (pod["metadata"]["namespace"], pod["metadata"]["name"])


def report(entries):
    """[(pod, reason)] as the response's list of {namespace, name, reason}."""
    return [{"namespace": p["metadata"]["namespace"], "name": p["metadata"]["name"],
             "reason": reason} for p, reason in entries]
