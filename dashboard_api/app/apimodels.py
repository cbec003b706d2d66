"""The wire shapes of the gateway, as OpenAPI 3.0 schemas, for the OpenAPI document.

openapi.py walks the route table; this module says what each route answers and takes:

* list, detail and sublist routes of the kinds table get their envelope from the kind's spec
  (``list_key``, ``list_status``, ``metrics``), their items from its ``item_fields`` and their
  detail object from its ``detail_fields`` (dashboard_api/kinds);
* every other route is described by its name in ``OPERATIONS``.

Item and detail objects are open (other fields may appear): they name the top-level fields the
summaries build, each of which may be null when the object lacks it. A route missing here fails
tests/hardening/test_openapi.py, so no route can go undescribed.
"""

from dashboard_api.query.metricnames import AGGREGATIONS


def ref(name):
    return {"$ref": "#/components/schemas/" + name}


def obj(properties, required=(), description=None):
    out = {"type": "object", "properties": properties}
    if required:
        out["required"] = list(required)
    if description:
        out["description"] = description
    return out


def array(items):
    return {"type": "array", "items": items}


def nullable(schema):
    if "$ref" in schema:   # OpenAPI 3.0 ignores the siblings of a $ref
        return {"allOf": [schema], "nullable": True}
    return dict(schema, nullable=True)


STRING = {"type": "string"}
INTEGER = {"type": "integer"}
BOOLEAN = {"type": "boolean"}
STRINGS = array(STRING)
STRING_MAP = {"type": "object", "additionalProperties": STRING}
TIME = nullable({"type": "string", "format": "date-time"})

COMMON = {
    "Error": obj({
        "status": {"type": "string", "enum": ["Failure"]},
        "message": STRING,
        "reason": {"type": "string", "description": "e.g. NotFound, Unauthorized, Forbidden"},
        "code": {"type": "integer", "description": "the HTTP status"},
        "details": {"type": "object", "description": "what failed, where the route says more"},
    }, required=("status", "message", "code")),
    "ObjectMeta": obj({
        "name": STRING, "namespace": STRING, "labels": STRING_MAP, "annotations": STRING_MAP,
        "creationTimestamp": TIME, "uid": STRING,
        "ownerReferences": array(obj({"kind": STRING, "name": STRING})),
    }),
    "TypeMeta": obj({"kind": STRING, "scalable": BOOLEAN, "restartable": BOOLEAN},
                    required=("kind",)),
    "ListMeta": obj({"totalItems": {"type": "integer", "minimum": 0}},
                    required=("totalItems",)),
    "ResourceStatus": obj({k: INTEGER for k in (
        "running", "pending", "failed", "succeeded", "terminating")},
        description="counts of the listed objects by state"),
    "StatusError": obj({"ErrStatus": obj({"status": STRING, "message": STRING,
                                          "reason": STRING, "code": INTEGER})},
                       description="a non-critical error met while answering"),
    "Metric": obj({
        "metricName": STRING,
        "dataPoints": array(obj({"x": INTEGER, "y": {"type": "number"}})),
        "metricPoints": array(obj({"timestamp": STRING, "value": INTEGER})),
        "label": {"type": "object", "additionalProperties": STRINGS},
        "aggregation": {"type": "string", "enum": list(AGGREGATIONS)},
    }, description="a metric series, for charting"),
}

def _field(type_):
    return nullable({"type": type_}) if type_ else {"description": "any JSON value or null"}


def item_schema(kind):
    """A list item of the kind's spec: the fields its ``item_fields`` name (checked against what
    its builders return by tests/unit/kinds/test_table.py)."""
    props = {"objectMeta": ref("ObjectMeta"), "typeMeta": ref("TypeMeta")}
    props.update((f, _field(t)) for f, t in kind.item_fields.items())
    return obj(props, required=("objectMeta", "typeMeta"))


def detail_schema(kind):
    props = {"objectMeta": ref("ObjectMeta"), "typeMeta": ref("TypeMeta"),
             "errors": array(ref("StatusError"))}
    props.update((f, _field(t)) for f, t in kind.detail_fields.items())
    return obj(props, required=("objectMeta", "typeMeta"))


def list_schema(kind):
    """The list envelope of a kinds-table row: the page under ``items`` and, for the web UI,
    under the kind's own key too."""
    items = array(ref("Item." + kind.name))
    props = {"listMeta": ref("ListMeta"), "items": items, "errors": array(ref("StatusError"))}
    props[kind.list_key] = items
    if kind.list_status is not None:
        props["status"] = ref("ResourceStatus")
    if kind.metrics:
        props["cumulativeMetrics"] = array(ref("Metric"))
        props["warning"] = {"type": "string", "description": "why the items carry no metrics"}
    return obj(props, required=("listMeta", "items"))


# --- records of the specification and the write bodies ---------------------------------------

SETTINGS = obj({
    "clusterName": STRING, "itemsPerPage": {"type": "integer", "minimum": 1},
    "labelsLimit": {"type": "integer", "minimum": 0},
    "logsAutoRefreshTimeInterval": {"type": "integer", "minimum": 0},
    "resourceAutoRefreshTimeInterval": {"type": "integer", "minimum": 0},
    "disableAccessDeniedNotifications": BOOLEAN, "hideAllNamespaces": BOOLEAN,
    "defaultNamespace": STRING, "namespaceFallbackList": STRINGS,
})
NAME = {"type": "string", "minLength": 1}
PINNED = obj({"kind": NAME, "name": NAME,
              "displayName": STRING, "namespaced": BOOLEAN, "namespace": STRING},
             required=("kind", "name"))

RECORDS = {
    "SearchResult": obj({
        "listMeta": ref("ListMeta"),
        "items": array(obj({"kind": STRING, "objectMeta": ref("ObjectMeta"),
                            "status": {"type": "string", "description": "what the kind's list "
                                       "shows as its status; empty when it shows none"}},
                           required=("kind", "objectMeta", "status"))),
        "kinds": array(obj({"kind": STRING, "totalItems": INTEGER},
                           required=("kind", "totalItems"))),
        "skipped": array(obj({"kind": STRING, "reason": STRING}, required=("kind", "reason"))),
        "errors": array(ref("StatusError")),
    }, required=("listMeta", "items", "kinds", "skipped")),
    "Config": obj({"serverTime": {"type": "integer", "description": "milliseconds"},
                   "version": STRING, "authenticationMode": STRING,
                   "authenticationModes": {"type": "array", "items": {
                       "type": "string", "enum": ["token", "kubeconfig", "oidc"]}}},
                  required=("serverTime", "version", "authenticationMode")),
    "GlobalSettings": SETTINGS,
    "PinnedResource": PINNED,
    "SystemBanner": obj({"message": STRING, "severity": {
        "type": "string", "enum": ["INFO", "WARNING", "ERROR"]}},
        required=("message", "severity")),
    "Locales": obj({"locales": array(obj({"id": STRING, "name": STRING},
                                         required=("id", "name")))},
                   required=("locales",)),
    "CanIRequest": obj({"verb": {"type": "string", "minLength": 1},
                        "resource": {"type": "string", "minLength": 1},
                        "namespace": nullable(STRING), "group": nullable(STRING),
                        "subresource": nullable(STRING), "name": nullable(STRING)},
                       required=("verb", "resource")),
    "CanIResponse": obj({"allowed": BOOLEAN}, required=("allowed",)),
    "CsrfToken": obj({"token": STRING}, required=("token",)),
    "LoginRequest": obj({"token": STRING, "kubeConfig": STRING}),
    "LoginResponse": obj({"token": STRING}, required=("token",)),
    "Me": obj({"name": STRING, "authenticated": BOOLEAN}, required=("authenticated",)),
    "Cluster": obj({"apiServer": STRING, "kubernetesVersion": STRING, "platform": STRING},
                   required=("apiServer", "kubernetesVersion", "platform")),
    "Clusters": obj({"clusters": array(obj({
        "name": STRING, "server": STRING,
        "version": nullable(STRING), "reachable": nullable(BOOLEAN),
        "cache": {"type": "string", "enum": ["off", "stopped", "syncing", "synced"]},
        "default": BOOLEAN,
        "path": {"type": "string", "description": "/clusters/{name}/: the cluster's UI and API"},
        "authMode": {"type": "string", "enum": ["forward", "impersonate"]},
        "usable": nullable(BOOLEAN)},
        required=("name", "server", "version", "reachable", "cache", "default", "path",
                  "authMode", "usable")))},
        required=("clusters",)),
    "AuditEntries": obj({
        "listMeta": obj({"totalItems": INTEGER}, required=("totalItems",)),
        "entries": array(obj({
            "id": STRING, "time": {"type": "string", "format": "date-time"}, "cluster": STRING,
            "user": STRING, "userVerified": BOOLEAN,
            "userSource": {"type": "string",
                           "enum": ["oidc", "apiserver", "token", "claim", "unknown"]},
            "client": STRING, "route": STRING, "method": STRING, "kind": STRING,
            "group": STRING, "resource": STRING, "namespace": STRING, "name": STRING,
            "status": INTEGER, "reason": STRING, "message": STRING, "requestId": STRING,
            "details": {"type": "object"}},
            required=("id", "time", "cluster", "user", "userVerified", "userSource", "route",
                      "method", "kind", "namespace", "name", "status"))),
        "errors": {"type": "array", "items": {"type": "object"}}},
        required=("listMeta", "entries", "errors")),
    "LogResult": obj({
        "info": obj({"podName": STRING, "containerName": STRING, "initContainerName": STRING,
                     "fromDate": nullable(STRING), "toDate": nullable(STRING),
                     "truncated": BOOLEAN}),
        "selection": obj({"referencePoint": obj({"timestamp": STRING, "lineNum": INTEGER}),
                          "offsetFrom": INTEGER, "offsetTo": INTEGER,
                          "logFilePosition": STRING}),
        "logs": STRINGS,
    }, required=("info", "logs")),
    "LogSources": obj({"logSources": array(obj({"podName": STRING, "containerNames": STRINGS,
                                                "initContainerNames": STRINGS})),
                       "podNames": STRINGS, "containerNames": STRINGS,
                       "initContainerNames": STRINGS}, required=("logSources",)),
    "ShellSession": obj({"id": STRING}, required=("id",)),
    "IntegrationHealth": obj({"healthy": BOOLEAN, "message": STRING}, required=("healthy",)),
    "IntegrationState": obj({"connected": BOOLEAN, "lastChecked": TIME,
                             "error": nullable(STRING)}, required=("connected",)),
    "Containers": obj({"containers": array({"type": "string"})}, required=("containers",)),
    "RawObject": obj({"apiVersion": STRING, "kind": STRING, "metadata": {"type": "object"}},
                     description="the object as the API server has it"),
    "ReplicaCounts": obj({"desiredReplicas": INTEGER, "actualReplicas": INTEGER},
                         required=("desiredReplicas", "actualReplicas")),
    "Revision": obj({"revision": STRING}, required=("revision",)),
    "RollbackRequest": obj({"revision": {"description": "a revision number, as a string "
                                                        "or an integer"}},
                           required=("revision",)),
    "ReplicasRequest": obj({"replicas": {"type": "integer", "minimum": 0}},
                           required=("replicas",)),
    "DrainRequest": obj({"force": BOOLEAN, "deleteEmptyDirData": BOOLEAN,
                         "ignoreAllDaemonSets": BOOLEAN, "gracePeriodSeconds": {
                             "type": "integer", "minimum": -1},
                         "timeout": {"type": "integer", "minimum": 1,
                                     "description": "nanoseconds, at most one hour"}}),
    "DrainResult": obj({"evicted": STRINGS, "skipped": array({"type": "object"})},
                       required=("evicted", "skipped")),
    "NamespaceRequest": obj({"name": STRING}, required=("name",)),
    "NamespaceCreated": obj({"name": STRING}, required=("name",)),
    "SecretRequest": obj({"name": STRING, "namespace": STRING,
                          "data": {"type": "string", "description": "base64 of a .dockercfg"}},
                         required=("name", "namespace", "data")),
    "SecretCreated": obj({"objectMeta": ref("ObjectMeta"), "typeMeta": ref("TypeMeta"),
                          "type": STRING}, required=("objectMeta", "typeMeta")),
    "AppDeploymentSpec": obj({
        "name": STRING, "namespace": STRING, "containerImage": STRING,
        "replicas": {"type": "integer", "minimum": 0}, "description": nullable(STRING),
        "portMappings": array({"type": "object"}), "labels": array({"type": "object"}),
        "isExternal": BOOLEAN, "imagePullSecret": nullable(STRING),
        "containerCommand": nullable(STRING), "containerCommandArgs": nullable(STRING),
        "cpuRequirement": {"description": "cores"}, "memoryRequirement": {"description": "MiB"},
        "runAsPrivileged": BOOLEAN, "variables": array({"type": "object"}),
    }, required=("name", "namespace", "containerImage")),
    "AppDeploymentFromFile": obj({"name": STRING, "namespace": STRING, "content": STRING,
                                  "validate": BOOLEAN}, required=("content",)),
    "AppDeploymentFromFileResult": obj({"name": STRING, "content": STRING, "error": STRING},
                                       required=("name", "content", "error")),
    "NameValidation": obj({"name": STRING, "namespace": STRING},
                          required=("name", "namespace")),
    "ImageValidation": obj({"reference": STRING}),
    "ProtocolValidation": obj({"protocol": STRING, "isExternal": BOOLEAN},
                              required=("protocol",)),
    "Validity": obj({"valid": BOOLEAN, "reason": STRING}, required=("valid",)),
    "Protocols": obj({"protocols": STRINGS}, required=("protocols",)),
    "CustomResourceDefinition": obj({"objectMeta": ref("ObjectMeta"),
                                     "typeMeta": ref("TypeMeta")},
                                    required=("objectMeta", "typeMeta")),
    "CustomObject": obj({"objectMeta": ref("ObjectMeta"), "typeMeta": ref("TypeMeta")},
                        required=("objectMeta", "typeMeta")),
    "CustomObjectList": obj({"listMeta": ref("ListMeta"), "items": array(ref("CustomObject")),
                             "errors": array(ref("StatusError"))},
                            required=("listMeta", "items")),
}


# --- query parameters ------------------------------------------------------------------------

def query(name, schema, description=None, required=False):
    # An empty value (`page=`) counts as absent, as every parameter parser here reads it.
    out = {"name": name, "in": "query", "required": required, "schema": schema,
           "allowEmptyValue": True}
    if description:
        out["description"] = description
    return out


DATASELECT = [
    query("filterBy", STRING, "property,value pairs, comma-separated"),
    query("sortBy", STRING, "order,property pairs, comma-separated; order is a or d"),
    query("itemsPerPage", {"type": "integer", "minimum": 0}, "page size (10; 0: every item)"),
    query("page", {"type": "integer", "minimum": 0}, "1-based page number (0: every item)"),
    query("metricNames", STRING, "comma-separated metric names, e.g. cpu/usage,memory/usage"),
    query("aggregations", STRING, "comma-separated: sum, avg, min, max (sum)"),
]
SEARCH = [
    query("q", STRING, "the query: words (in the name, ignoring case), label:KEY=VALUE, "
          "label:KEY!=VALUE, label:KEY=V1|V2, label:KEY, label:!KEY, ns:NAME, status:TEXT, "
          "node:NAME, image:TEXT, kind:KIND[|KIND], name:TEXT; all must hold"),
    query("itemsPerPage", {"type": "integer", "minimum": 0, "maximum": 500}, "page size (10)"),
    query("page", {"type": "integer", "minimum": 1}, "1-based page number; page x "
          "itemsPerPage at most 1000"),
]
LOG_FLAGS = [query("previous", BOOLEAN, "the previous instance of the container"),
             query("timestamps", BOOLEAN, "prefix each line with its timestamp")]
LOG_PAGE = LOG_FLAGS + [
    query("tailLines", {"type": "integer", "minimum": 0}, "lines from the end"),
    query("sinceTime", {"type": "string", "format": "date-time"}, "RFC 3339"),
    query("logFilePosition", {"type": "string", "enum": ["beginning", "end"]}),
    query("offsetFrom", INTEGER), query("offsetTo", INTEGER),
    query("referenceTimestamp", STRING), query("referenceLineNum", INTEGER),
]
SHELL = [query("shell", STRING, "bash, sh, powershell or cmd; others: tried in that order")]
DELETE = [query("propagation", {"type": "string", "enum": ["Foreground", "Background",
                                                           "Orphan"]}, "(Foreground)"),
          query("deleteNow", BOOLEAN, "delete at once (grace period 0)")]
SCALE = [query("scaleBy", {"type": "integer", "minimum": 0}, "the desired replica count",
               required=True)]


class Op:
    """What one method of one route answers (``status``, ``schema`` or None for no body,
    ``produces``: its media type) and takes (``body``, ``params``)."""

    def __init__(self, status=200, schema=None, body=None, params=(), produces=None):
        self.status = status
        self.schema = schema
        self.body = body
        self.params = list(params)
        self.produces = produces or "application/json"


RETURN_PATH = query("return", STRING, "where to land afterwards: a path of this origin "
                    "(anything else lands on /)")
TEXT = "text/plain"   # the success answer's media type; errors still come as JSON

OPERATIONS = {
    "can-i": {"post": Op(schema=ref("CanIResponse"), body=ref("CanIRequest"))},
    "csrftoken": {"get": Op(schema=ref("CsrfToken"))},
    "login": {"post": Op(schema=ref("LoginResponse"), body=ref("LoginRequest"))},
    "me": {"get": Op(schema=ref("Me"))},
    "cluster": {"get": Op(schema=ref("Cluster"))},
    "clusters": {"get": Op(schema=ref("Clusters"))},
    "audit": {"get": Op(schema=ref("AuditEntries"), params=[
        query("user", STRING, "only changes by this user (as the entries name them)"),
        query("namespace", STRING, "only changes in this namespace"),
        query("kind", STRING, "only changes of this kind (deployment, or <plural>.<group>)"),
        query("since", {"type": "string", "format": "date-time"}, "RFC 3339; included"),
        query("until", {"type": "string", "format": "date-time"}, "RFC 3339; not included"),
        query("itemsPerPage", {"type": "integer", "minimum": 1, "maximum": 500},
              "entries per page (10)"),
        query("page", {"type": "integer", "minimum": 1}, "the page, from 1")])},
    "settings-global": {"get": Op(schema=ref("GlobalSettings")),
                        "put": Op(204, body=ref("GlobalSettings"))},
    "settings": {"get": Op(schema=ref("GlobalSettings")),
                 "put": Op(204, body=ref("GlobalSettings"))},
    "settings-pinned": {"get": Op(schema=array(ref("PinnedResource"))),
                        "put": Op(204, body=ref("PinnedResource"))},
    "settings-unpin": {"delete": Op(204)},
    "settings-unpin-namespaced": {"delete": Op(204)},
    "settings-cani": {"get": Op(schema=ref("CanIResponse"))},
    "settings-pinned-cani": {"get": Op(schema=ref("CanIResponse"))},
    "config": {"get": Op(schema=ref("Config"))},
    "systembanner": {"get": Op(schema=ref("SystemBanner"))},
    # The notices' WebSocket (handlers/live.py): a GET that upgrades (101); without the
    # upgrade, the JSON 400.
    "live": {"get": Op(101)},
    "api-systembanner": {"get": Op(schema=ref("SystemBanner"))},
    "locale": {"get": Op(schema=ref("Locales"))},
    "metrics": {"get": Op(schema={"type": "string", "description": "Prometheus text "
                                  "exposition, version 0.0.4"}, produces=TEXT)},
    "apidocs": {"get": Op(schema={"type": "object", "description": "this document"})},
    # OpenID Connect sign-in (handlers/oidc.py): browser navigations answered by redirects;
    # a refused callback is an HTML page (400).
    "oidc-login": {"get": Op(303, params=[RETURN_PATH])},
    "oidc-callback": {"get": Op(303, params=[
        query("code", STRING, "the provider's authorization code"),
        query("state", STRING, "the state this browser's sign-in sent"),
        query("error", STRING, "the provider's refusal, instead of a code")])},
    "oidc-refresh": {"get": Op(303, params=[RETURN_PATH]),
                     "post": Op(schema=obj({"expires": {"type": "integer",
                                                        "description": "milliseconds"}},
                                           required=("expires",)))},
    "oidc-logout": {"get": Op(303)},
    "oidc-session-script": {"get": Op(schema={"type": "string"}, produces="text/javascript")},
    "healthz": {"get": Op(schema={"type": "string", "description": "ok"}, produces=TEXT)},
    "readyz": {"get": Op(schema={"type": "string", "description": "ok, or why not ready (503, "
                                 "text/plain)"}, produces=TEXT)},
    "integration-health": {"get": Op(schema=ref("IntegrationHealth"))},
    "integration-state": {"get": Op(schema=ref("IntegrationState"))},
    "search": {"get": Op(schema=ref("SearchResult"), params=SEARCH)},
    "autoscalers-of-resource": {"get": Op(schema=ref("List.horizontalpodautoscaler"),
                                          params=DATASELECT)},
    "crd-detail": {"get": Op(schema=ref("CustomResourceDefinition"), params=DATASELECT)},
    "crd-object-list": {"get": Op(schema=ref("CustomObjectList"), params=DATASELECT)},
    "crd-object-detail": {"get": Op(schema=ref("CustomObject"), params=DATASELECT)},
    "crd-object-event": {"get": Op(schema=ref("List.event"), params=DATASELECT)},
    "log": {"get": Op(schema=ref("LogResult"), params=LOG_PAGE)},
    "log-container": {"get": Op(schema=ref("LogResult"), params=LOG_PAGE)},
    "log-file": {"get": Op(schema={"type": "string", "description": "the log as text"},
                           params=LOG_FLAGS, produces=TEXT)},
    "log-source": {"get": Op(schema=ref("LogSources"))},
    "pod-shell": {"get": Op(schema=ref("ShellSession"), params=SHELL)},
    "exec": {"get": Op(schema=ref("ShellSession"), params=SHELL)},
    "raw-namespaced": {"get": Op(schema=ref("RawObject")), "put": Op(204, body=ref("RawObject")),
                       "delete": Op(204, params=DELETE)},
    "raw-cluster": {"get": Op(schema=ref("RawObject")), "put": Op(204, body=ref("RawObject")),
                    "delete": Op(204, params=DELETE)},
    "scale-namespaced": {"get": Op(schema=ref("ReplicaCounts")),
                         "put": Op(schema=ref("ReplicaCounts"), params=SCALE)},
    "scale-cluster": {"get": Op(schema=ref("ReplicaCounts")),
                      "put": Op(schema=ref("ReplicaCounts"), params=SCALE)},
    "deployment-pause": {"put": Op(schema=ref("RawObject"))},
    "deployment-resume": {"put": Op(schema=ref("RawObject"))},
    "deployment-restart": {"put": Op(schema=ref("Revision"))},
    "deployment-rollback": {"put": Op(schema=ref("Revision"), body=ref("RollbackRequest"))},
    "statefulset-restart": {"put": Op(schema=ref("RawObject"))},
    "daemonset-restart": {"put": Op(schema=ref("RawObject"))},
    "cronjob-trigger": {"put": Op(200)},
    "replicationcontroller-replicas": {"post": Op(202, body=ref("ReplicasRequest"))},
    "node-drain": {"put": Op(202, ref("DrainResult"), body=ref("DrainRequest"))},
    "namespace-create": {"post": Op(201, ref("NamespaceCreated"),
                                    body=ref("NamespaceRequest"))},
    "secret-create": {"post": Op(201, ref("SecretCreated"), body=ref("SecretRequest"))},
    "appdeployment": {"post": Op(201, ref("AppDeploymentSpec"),
                                 body=ref("AppDeploymentSpec"))},
    "appdeploymentfromfile": {"post": Op(201, ref("AppDeploymentFromFileResult"),
                                         body=ref("AppDeploymentFromFile"))},
    "validate-name": {"post": Op(schema=ref("Validity"), body=ref("NameValidation"))},
    "validate-image": {"post": Op(schema=ref("Validity"), body=ref("ImageValidation"))},
    "validate-protocol": {"post": Op(schema=ref("Validity"), body=ref("ProtocolValidation"))},
    "appdeployment-protocols": {"get": Op(schema=ref("Protocols"))},
}
