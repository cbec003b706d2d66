"""What the ``{kind}`` segment of the raw and scale routes names, resolved through discovery.

The UI sends the lower-case ``typeMeta.kind`` of our lists (``deployment``,
``clusterrolebinding``) or, for custom objects, ``<plural>.<group>``. A row of the kinds table
is resolved with the row's own group, plural and versions; ``<plural>.<group>`` directly; any
other lower-case kind by a search of every group's preferred version. Versions always come
from discovery. An unknown kind is bad input (400), not a missing object.
"""

import re

from dashboard_api.kinds import table as kinds
from dashboard_api.serving.errors import ApiError, bad_request

_KIND = re.compile(r"^[a-z0-9]([-a-z0-9.]{0,252})$")


async def resolve(cluster, handle, name):
    """The discovery Resource that ``name`` stands for."""
    lowered = (name or "").lower()
    if not _KIND.match(lowered):
        raise bad_request("invalid kind %r" % name)
    row = kinds.KINDS.get(lowered)
    try:
        if row is not None:
            return await cluster.discovery.resolve(handle, row.group, row.plural, row.versions)
        if "." in lowered:
            plural, group = lowered.split(".", 1)
            return await cluster.discovery.resolve(handle, group, plural)
        return await cluster.discovery.find_kind(handle, lowered)
    except ApiError as exc:
        if exc.code != 404:
            raise
        raise bad_request("unknown kind %r: the server serves no such resource" % name)


def check_scope(resource, namespace, name_of_kind):
    """400 when the path's scope (with or without a namespace) does not fit the resource."""
    if resource.namespaced and namespace is None:
        raise bad_request("%s is namespaced: the path needs a namespace" % name_of_kind)
    if not resource.namespaced and namespace is not None:
        raise bad_request("%s is not namespaced: the path must not name a namespace"
                          % name_of_kind)
