"""Schemathesis hooks for tests/hardening/test_fuzz.py (loaded by the schemathesis CLI through
$SCHEMATHESIS_HOOKS; settings come from the environment the test sets).

Reads go out with the admin token; every other method with a token whose rights are confined
to a scratch namespace (admin there, view cluster-wide), and with that scratch namespace as
its {namespace}, so that generated writes land where they can do no harm. Each POST that needs
one gets a fresh one-time CSRF token for its action.

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
# Objects of that name exist in the scratch namespace (test_fuzz.py makes them): half of the
# generated writes are pointed at them, so that they reach past the 404.
TARGET = "fuzz-target"
API_PREFIX = "/api/v1/"


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
    if write and "namespace" in params:
        params["namespace"] = SCRATCH
        if "name" in params and zlib.crc32(str(params["name"]).encode()) % 2:
            params["name"] = TARGET
    security = case.operation.definition.raw.get("security") or []
    if method == "POST" and any("csrf" in requirement for requirement in security):
        action = case.path[len(API_PREFIX):].split("/", 1)[0]
        case.headers["X-CSRF-TOKEN"] = csrf_token(action)
