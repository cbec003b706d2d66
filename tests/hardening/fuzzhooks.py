"""Schemathesis hooks for tests/hardening/test_fuzz.py (loaded by the schemathesis CLI through
$SCHEMATHESIS_HOOKS; settings come from the environment the test sets).

Reads go out with the admin token; every other method with a token whose rights are confined
to a scratch namespace (admin there, view cluster-wide), and with that scratch namespace as
its {namespace}, so that generated writes land where they can do no harm. Each POST that needs
one gets a fresh one-time CSRF token for its action.

Reads reach past the 404s: for half of the generated reads (chosen by a hash of the generated
values, so a seed replays) every path parameter is replaced by the name of an object that
exists ($FUZZ_REAL_NAMES, JSON: route resource -> {parameter: value}, made by fuzzrun.py from
the seeded cluster). Some writes carry a body nested deeper than the gateway's limit or larger
than the largest body it takes (tests/hardening/test_fuzz_bodies.py sends both to every
operation that takes a body). Every answer's status is appended to $FUZZ_STATUS_FILE, from
which the test counts the operations that only ever saw a 404.

Writes to the scratch namespace are deterministic for a seed (the name choice hashes the
generated name), so a CI failure replays.
"""

import json
import os
import urllib.request
import zlib

import schemathesis

GATEWAY = os.environ.get("FUZZ_GATEWAY", "")
READ_TOKEN = os.environ.get("FUZZ_READ_TOKEN", "")
WRITE_TOKEN = os.environ.get("FUZZ_WRITE_TOKEN", "")
SCRATCH = os.environ.get("FUZZ_SCRATCH", "")
# Objects of that name exist in the scratch namespace (fuzzrun.py makes them): half of the
# generated writes are pointed at them, so that they reach past the 404.
TARGET = "fuzz-target"
API_PREFIX = "/api/v1/"
REAL_NAMES = json.loads(os.environ.get("FUZZ_REAL_NAMES") or "{}")
STATUS_FILE = os.environ.get("FUZZ_STATUS_FILE", "")
DEEP_BODY = 1   # of every 16 writes with a JSON body: nested 500 deep


def csrf_token(action):
    with urllib.request.urlopen("%s/api/v1/csrftoken/%s" % (GATEWAY, action),
                                timeout=10) as reply:
        return json.loads(reply.read())["token"]


@schemathesis.hook
def before_call(context, case, kwargs):
    method = case.method.upper()
    write = method not in ("GET", "HEAD", "OPTIONS")
    if case.headers is None:
        case.headers = {}
    if case.operation.schema.is_security_param_negated(case):
        return  # a case about a missing or bad credential goes out as generated
    case.headers["Authorization"] = "Bearer " + (WRITE_TOKEN if write else READ_TOKEN)
    params = case.path_parameters or {}
    choice = zlib.crc32(json.dumps(params, sort_keys=True, default=str).encode())
    if not write and params and choice % 2:
        real = REAL_NAMES.get(resource(case.path))
        for name in params:
            if real and name in real:
                params[name] = real[name]
    if write and isinstance(case.body, (dict, list)) and zlib.crc32(
            json.dumps(case.body, sort_keys=True, default=str).encode()) % 16 < DEEP_BODY:
        case.body = deep(500)
    if write and "namespace" in params:
        params["namespace"] = SCRATCH
        if "name" in params and zlib.crc32(str(params["name"]).encode()) % 2:
            params["name"] = TARGET
    security = case.operation.definition.raw.get("security") or []
    if method == "POST" and any("csrf" in requirement for requirement in security):
        action = case.path[len(API_PREFIX):].split("/", 1)[0]
        case.headers["X-CSRF-TOKEN"] = csrf_token(action)


def resource(template):
    """The first path segment after /api/v1/ (or of the path), as routes.Route.resource."""
    if template.startswith(API_PREFIX):
        return template[len(API_PREFIX):].split("/", 1)[0]
    return template.strip("/").split("/", 1)[0]


def deep(depth):
    body = {}
    for _ in range(depth - 1):
        body = {"a": body}
    return body


@schemathesis.hook
def after_call(context, case, response):
    if STATUS_FILE:
        with open(STATUS_FILE, "a") as f:
            f.write("%s %s %d\n" % (case.method.upper(), case.operation.path,
                                      response.status_code))
