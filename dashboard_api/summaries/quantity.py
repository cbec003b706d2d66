"""Kubernetes resource quantities ("250m", "128Mi", "1.5", "2e3") and a pod's effective
requests and limits (reference §5.1 allocatedResources)."""

import functools
import math
import re
from fractions import Fraction

_SUFFIX = {
    "": 1, "n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6), "m": Fraction(1, 1000),
    "k": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18,
    "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60,
}
_QUANTITY = re.compile(
    r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")


def parse(text):
    """The exact value of a quantity as a Fraction; 0 for an empty or malformed one."""
    if isinstance(text, (int, float, Fraction)):
        return Fraction(text)
    return _parse_text(text or "")


@functools.lru_cache(maxsize=4096)  # a big list repeats the same few quantities
def _parse_text(text):
    m = _QUANTITY.match(text.strip())
    if not m:
        return Fraction(0)
    value = Fraction(m.group(1))
    if m.group(2):
        return value * Fraction(10) ** int(m.group(2)[1:])
    return value * _SUFFIX[m.group(3) or ""]


def milli(text):
    """The value in thousandths, rounded up (Kubernetes' MilliValue): CPU in millicores."""
    return math.ceil(parse(text) * 1000)


def whole(text):
    """The value rounded up to an integer (Kubernetes' Value): memory in bytes."""
    return math.ceil(parse(text))


def _add(total, resources):
    for name, q in (resources or {}).items():
        total[name] = total.get(name, 0) + parse(q)


# Answers about the parts of pod specs that resources come from, by their identity: the cache's
# pods of one template share one list of containers (cache/slim.py ``pooled``), so a node's
# allocation (its pods' summed, per pod event in the cache) parses each template's quantities
# once, not each pod's, and a page of pods sums them once a template. The parts are held with
# their answer, so their ids stay theirs; cached records are never changed.
EFFECTIVE_KEPT = 4096


def by_parts(memo, pod_spec, compute):
    """``compute(pod_spec)``, kept in ``memo`` (a dict of at most EFFECTIVE_KEPT answers)
    while the spec's containers, init containers and overhead are the objects it was made
    of. The answer is shared: callers copy what they hand out."""
    parts = (pod_spec.get("containers"), pod_spec.get("initContainers"),
             pod_spec.get("overhead"))
    key = (id(parts[0]), id(parts[1]), id(parts[2]))
    found = memo.get(key)
    if found is None or any(a is not b for a, b in zip(found[0], parts)):
        if len(memo) >= EFFECTIVE_KEPT:
            memo.clear()
        found = memo[key] = (parts, compute(pod_spec))
    return found[1]


_EFFECTIVE = {}


def effective(pod_spec):
    """(requests, limits): {resource: Fraction} as the scheduler sees them.

    The regular containers are summed, each init container raises a resource to its own value
    when larger, and the pod overhead is added to requests and to limits that are set.
    """
    requests, limits = by_parts(_EFFECTIVE, pod_spec, _effective)
    return dict(requests), dict(limits)


def _effective(pod_spec):
    requests, limits = {}, {}
    for c in pod_spec.get("containers") or ():
        res = c.get("resources") or {}
        _add(requests, res.get("requests"))
        _add(limits, res.get("limits"))
    for c in pod_spec.get("initContainers") or ():
        res = c.get("resources") or {}
        for total, part in ((requests, res.get("requests")), (limits, res.get("limits"))):
            for name, q in (part or {}).items():
                total[name] = max(total.get(name, 0), parse(q))
    for name, q in (pod_spec.get("overhead") or {}).items():
        requests[name] = requests.get(name, 0) + parse(q)
        if limits.get(name):
            limits[name] += parse(q)
    return requests, limits


def gpu_type(resource):
    if resource == "nvidia.com/gpu":
        return "nvidia"
    if resource == "amd.com/gpu":
        return "amd"
    if resource.startswith("gpu.intel.com"):
        return "intel"
    if "gpu" in resource:
        return "unknown"
    return None


def gpus(resources):
    """[{type, quantity}] of the GPU resources in ``resources``, summed per type."""
    totals = {}
    for name, value in resources.items():
        kind = gpu_type(name)
        if kind:
            totals[kind] = totals.get(kind, 0) + value
    return [{"type": kind, "quantity": _text(value)} for kind, value in totals.items()]


def _text(value):
    return str(value.numerator) if value.denominator == 1 else str(float(value))

