"""The JSON error body of every handler and the mapping from API-server statuses.

Every failure leaves the gateway as ``{status: "Failure", message, reason, code}`` with the
HTTP status in ``code``. Errors that come from the API server keep its status and message
(a 403 names the user, verb, resource and namespace); nothing internal leaks.
"""

import ujson

REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "AlreadyExists",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    502: "BadGateway",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class ApiError(Exception):
    """An error with the status, reason and message the client should see."""

    def __init__(self, code, message, reason=None, details=None):
        super().__init__(message)
        self.code = int(code)
        self.message = message
        self.reason = reason or REASONS.get(self.code, "InternalError")
        self.details = details
        self.headers = {}   # e.g. Retry-After on a 503

    def body(self):
        body = {"status": "Failure", "message": self.message, "reason": self.reason,
                "code": self.code}
        if self.details:
            body["details"] = self.details
        return body

    def as_status_error(self):
        """The Kubernetes StatusError shape used for entries of a response's ``errors``."""
        status = {"metadata": {}, "status": "Failure", "message": self.message,
                  "reason": self.reason, "code": self.code}
        if self.details:
            status["details"] = self.details
        return {"ErrStatus": status}


def bad_request(message):
    return ApiError(400, message, "BadRequest")


def not_found(message):
    return ApiError(404, message, "NotFound")


def unauthorized(message="Unauthorized"):
    return ApiError(401, message, "Unauthorized")


def from_apiserver(status, payload):
    """Maps an API server reply (status code, raw body bytes or decoded dict) to an ApiError."""
    body = payload
    if isinstance(payload, (bytes, bytearray)):
        try:
            body = ujson.loads(payload)
        except ValueError:
            body = {"message": payload.decode("utf-8", "replace").strip()}
    if not isinstance(body, dict):
        body = {}
    message = body.get("message") or REASONS.get(status, "error from the API server")
    reason = body.get("reason") or REASONS.get(status)
    details = body.get("details") if isinstance(body.get("details"), dict) else None
    if status == 401:
        return ApiError(401, "Unauthorized", "Unauthorized")
    if status < 400 or status > 599:
        status = 502
    return ApiError(status, message, reason, details)


def is_forbidden(error):
    return isinstance(error, ApiError) and error.code == 403
