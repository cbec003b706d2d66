"""Kubernetes object name rules (pure): checked before a create so that a bad name is a clear
400 and nothing is sent."""

import re

from dashboard_api.serving.errors import bad_request

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def dns_label(field, value):
    """``value`` if it is a DNS-1123 label (namespaces, services), else a 400."""
    if not isinstance(value, str) or not value:
        raise bad_request("%s is required (a string)" % field)
    if len(value) > 63 or not _LABEL.match(value):
        raise bad_request("%s %r is invalid: lower-case letters, digits and '-', starting and "
                          "ending with a letter or digit, at most 63 characters" % (field, value))
    return value


def dns_subdomain(field, value):
    """``value`` if it is a DNS-1123 subdomain (most object names), else a 400."""
    if not isinstance(value, str) or not value:
        raise bad_request("%s is required (a string)" % field)
    if len(value) > 253 or not _SUBDOMAIN.match(value):
        raise bad_request("%s %r is invalid: lower-case letters, digits, '-' and '.', starting "
                          "and ending with a letter or digit, at most 253 characters"
                          % (field, value))
    return value
