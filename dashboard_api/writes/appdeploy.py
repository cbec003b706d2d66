"""Application deployment, pure: the objects of the deploy form, the documents of a deploy
file, and the validators' rules. No I/O; handlers/appdeployment.py sends what this builds.

The form (reference §8.1) becomes a Deployment and, when it maps ports, a Service, with the
same name, labels and description. Every field is checked first: a wrong type is a 400 naming
the field, and nothing is created.
"""

import re
import secrets

from dashboard_api.serving import bounded
from dashboard_api.serving.errors import bad_request
from dashboard_api.writes import names

PROTOCOLS = ("TCP", "UDP")
PORT_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
NAMESPACE_ALL = "_all"  # the UI's "all namespaces": each document keeps its own namespace


# --- the form -----------------------------------------------------------------------------

def _field(spec, key, types, required=False, default=None, what=None):
    value = spec.get(key, default)
    if value is None:
        if required:
            raise bad_request("%s is required" % key)
        return default
    is_bool = isinstance(value, bool)  # a bool is an int to isinstance: not a count
    if (is_bool and bool not in types) or not isinstance(value, types):
        raise bad_request("%s must be %s" % (key, what or " or ".join(t.__name__ for t in types)))
    return value


def _pairs(spec, key, first, second):
    items = _field(spec, key, (list,), default=[])
    out = []
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get(first), str) or \
                not isinstance(item.get(second, ""), str):
            raise bad_request("each of %s must be {%s, %s} strings" % (key, first, second))
        out.append((item[first], item.get(second, "")))
    return out


def _quantity(spec, key):
    value = _field(spec, key, (str, int, float), what="a quantity such as \"128Mi\" or 0.5")
    return None if value in (None, "") else str(value)


def _port(value, key):
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise bad_request("%s must be an integer from 1 to 65535" % key)
    return value


def port_name(protocol, port, target):
    prefix = ("%s-%d-%d-" % (protocol.lower(), port, target))[:58]
    return prefix + "".join(secrets.choice(PORT_NAME_ALPHABET) for _ in range(5))


def app_objects(spec):
    """(namespace, deployment, service or None) of the deploy form ``spec``; 400 if bad."""
    if not isinstance(spec, dict):
        raise bad_request("the body must be a JSON object (the deploy form)")
    name = names.dns_label("name", spec.get("name"))
    namespace = names.dns_label("namespace", spec.get("namespace"))
    image = _field(spec, "containerImage", (str,), required=True)
    if not image.strip():
        raise bad_request("containerImage is required")
    replicas = _field(spec, "replicas", (int,), default=1, what="a non-negative integer")
    if replicas < 0:
        raise bad_request("replicas must be a non-negative integer")
    labels = dict(_pairs(spec, "labels", "key", "value"))
    variables = _pairs(spec, "variables", "name", "value")
    description = _field(spec, "description", (str,))
    pull_secret = _field(spec, "imagePullSecret", (str,))
    command = _field(spec, "containerCommand", (str,))
    args = _field(spec, "containerCommandArgs", (str,))
    privileged = _field(spec, "runAsPrivileged", (bool,), default=False)
    external = _field(spec, "isExternal", (bool,), default=False)
    requests = {}
    for key, resource in (("cpuRequirement", "cpu"), ("memoryRequirement", "memory")):
        quantity = _quantity(spec, key)
        if quantity:
            requests[resource] = quantity
    ports = []
    for mapping in _field(spec, "portMappings", (list,), default=[]):
        if not isinstance(mapping, dict):
            raise bad_request("each of portMappings must be {port, targetPort, protocol}")
        protocol = mapping.get("protocol", "TCP")
        if protocol not in PROTOCOLS:
            raise bad_request("protocol must be one of %s" % ", ".join(PROTOCOLS))
        port = _port(mapping.get("port"), "port")
        target = _port(mapping.get("targetPort"), "targetPort")
        ports.append({"protocol": protocol, "port": port, "targetPort": target,
                      "name": port_name(protocol, port, target)})

    meta = {"name": name, "labels": labels,
            "annotations": {"description": description} if description is not None else {}}
    container = {"name": name, "image": image,
                 "securityContext": {"privileged": privileged},
                 "resources": {"requests": requests} if requests else {},
                 "env": [{"name": n, "value": v} for n, v in variables]}
    if command:
        container["command"] = [command]
    if args:
        container["args"] = args.split()
    pod_spec = {"containers": [container]}
    if pull_secret:
        pod_spec["imagePullSecrets"] = [{"name": pull_secret}]
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": dict(meta),
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": dict(meta), "spec": pod_spec}}}
    service = None
    if ports:
        service = {"apiVersion": "v1", "kind": "Service", "metadata": dict(meta),
                   "spec": {"selector": labels, "ports": ports,
                            "type": "LoadBalancer" if external else "ClusterIP"}}
    return namespace, deployment, service


# --- the deploy file ----------------------------------------------------------------------

def documents(content):
    """The objects of a YAML or JSON stream, in order (empty documents dropped); 400 naming
    the document when one does not parse or is not an object with apiVersion, kind and name,
    and when the stream is over the limits of bounded.DEPLOY_FILE (documents, nodes with
    aliases expanded, depth). CPU-bound on large input: handlers run it in bounded.run."""
    if not isinstance(content, str) or not content.strip():
        raise bad_request("content (YAML or JSON documents) is required")
    out = []
    try:
        loaded = bounded.yaml_documents(content, bounded.DEPLOY_FILE)
    except bounded.InputError as exc:
        raise bad_request("content is %s" % exc if str(exc).startswith("not valid")
                          else "content is refused: %s" % exc)
    for index, doc in enumerate(loaded, 1):
        if doc is None:
            continue
        where = "document %d" % index
        if not isinstance(doc, dict):
            raise bad_request("%s is not an object" % where)
        if not isinstance(doc.get("apiVersion"), str) or not isinstance(doc.get("kind"), str):
            raise bad_request("%s needs apiVersion and kind strings" % where)
        meta = doc.get("metadata")
        if not isinstance(meta, dict) or not (isinstance(meta.get("name"), str) or
                                              isinstance(meta.get("generateName"), str)):
            raise bad_request("%s (%s) needs metadata.name" % (where, doc["kind"]))
        out.append((index, doc))
    if not out:
        raise bad_request("content holds no documents")
    return out


def describe(doc, namespace=None):
    """``Kind namespace/name`` of a document, for messages."""
    meta = doc.get("metadata") or {}
    name = meta.get("name") or meta.get("generateName", "") + "*"
    ns = namespace or meta.get("namespace")
    return "%s %s" % (doc["kind"], ns + "/" + name if ns else name)


# --- the validators -----------------------------------------------------------------------

# Docker's reference grammar (distribution/reference), written so that every character has one
# way to match: the separator needs at least one character (the grammar's `[-]*` let an empty
# separator split a run of letters in 2^n ways: 27 characters held the event loop 18 s), a domain
# label is letters and digits joined by runs of dashes, and no repetition nests an overlapping
# one. The input is bounded before it is matched. tests/hostile/test_patterns.py checks every
# pattern of the project for catastrophic backtracking.
_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|-+)"
_COMPONENT = _ALNUM + r"(?:" + _SEPARATOR + _ALNUM + r")*"
_DOMAIN_PART = r"[a-zA-Z0-9]+(?:-+[a-zA-Z0-9]+)*"
_DOMAIN = _DOMAIN_PART + r"(?:\." + _DOMAIN_PART + r")*(?::[0-9]+)?"
_NAME = r"(?:" + _DOMAIN + r"/)?" + _COMPONENT + r"(?:/" + _COMPONENT + r")*"
_TAG = r"\w[\w.-]{0,127}"
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,1024}"
REFERENCE = re.compile(r"^(" + _NAME + r")(?::" + _TAG + r")?(?:@" + _DIGEST + r")?$")
NAME_MAX = 255
# Longest reference looked at: a name (255), a tag (128), a digest (a long algorithm and hash).
REFERENCE_MAX = 2048


def image_reference_problem(reference):
    """'' when ``reference`` is a valid image reference, else the Docker parser's message."""
    if not reference:
        return "repository name must have at least one component"
    if len(reference) > REFERENCE_MAX:
        return "invalid reference format: longer than %d characters" % REFERENCE_MAX
    match = REFERENCE.match(reference)
    if match is None:
        if REFERENCE.match(reference.lower()):
            return "repository name must be lowercase"
        return "invalid reference format"
    if len(match.group(1)) > NAME_MAX:
        return "repository name must not be more than %d characters" % NAME_MAX
    return ""


def protocol_valid(protocol, external):
    """A load balancer cannot carry UDP (as upstream's rule)."""
    return not (protocol == "UDP" and bool(external))
