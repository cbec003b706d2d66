"""The upstream Dashboard web UI's shapes, where they differ from the specification.

The specification's shapes are the default. ``--web-ui-compat`` switches to what the upstream
web UI reads, so that a production build of it served with ``--web-root`` works end to end:

* log lines (GET /api/v1/log/...) are upstream's LogLine objects ``{"timestamp", "content"}``
  instead of strings; the UI formats the timestamp itself (logs/details.py renders them);
* when the log cannot be opened (a container not started yet, no right to ``pods/log``, no
  previous instance) the reason is the log's one line with a 200, as upstream answers
  (handlers/logs.py); the UI shows its error page on an error status there;
* a 401 of an API route is the plain text ``MSG_LOGIN_UNAUTHORIZED_ERROR``, the one body on which
  the UI drops its token and returns to its login page (with our JSON it shows its error page);
  the sign-in routes (component ``auth``) answer it as the message of a JSON error, as upstream's
  auth module does, so the login page shows it;
* every JSON error also carries ``ErrStatus`` (the Kubernetes StatusError the UI reads its
  message from); the specification's fields stay as they are.

* lists of pods, workloads and nodes asked for without ``metricNames`` (as the UI asks) carry
  upstream's standard metrics in upstream's shapes: PodMetrics on each pod and
  ``cumulativeMetrics`` (dashboard_api/metrics/webui.py).

Everything else the UI calls already has upstream's shape with the switch off.
"""

import ujson

from dashboard_api.serving.errors import ApiError

UNAUTHORIZED = "MSG_LOGIN_UNAUTHORIZED_ERROR"
JSON = "application/json; charset=UTF-8"
TEXT = "text/plain; charset=utf-8"


def error_reply(error, component):
    """(Content-Type, body) of ``error`` (an ApiError) for the upstream UI; ``component`` is
    the route's (``api``, ``auth`` or ``web``)."""
    if error.code == 401:
        if component == "api":
            return TEXT, UNAUTHORIZED
        error = ApiError(401, UNAUTHORIZED, error.reason, error.details)
    body = error.body()
    body.update(error.as_status_error())
    return JSON, ujson.dumps(body, ensure_ascii=False)
