"""Read-change-write of one object with the caller's handle, retried on conflicts.

A 409 from the update means someone changed the object between our read and our write: read
it again and re-apply the change, a few times (as client-go's RetryOnConflict does).
"""

import asyncio

from dashboard_api.serving.errors import ApiError, from_apiserver

ATTEMPTS = 5


async def update(handle, resource, namespace, name, change):
    """GETs the object, calls ``change(obj)`` (which edits it in place and may raise ApiError
    to refuse), PUTs it back; returns the API server's reply."""
    path = resource.path(namespace, name)
    for attempt in range(ATTEMPTS):
        obj = await handle.get(path)
        change(obj)
        try:
            return await handle.request("PUT", path, body=obj)
        except ApiError as exc:
            if exc.code != 409 or attempt == ATTEMPTS - 1:
                raise
        await asyncio.sleep(0.05 * (attempt + 1))


async def patch_retrying(handle, path, make_patch):
    """GETs the object at ``path``, PATCHes ``make_patch(live)`` (a merge patch carrying the
    live resourceVersion; nothing is sent when it is empty), again on 409. Returns the patch
    sent ({} for none), or None when the object does not exist (404 on the read)."""
    for attempt in range(ATTEMPTS):
        response = await handle.call("GET", path, decode=True)
        if response.status == 404:
            return None
        if response.status >= 400:
            raise from_apiserver(response.status, response.data)
        patch = make_patch(response.json())
        if not patch:
            return {}
        try:
            await handle.request("PATCH", path, body=patch,
                                 content_type="application/merge-patch+json")
            return patch
        except ApiError as exc:
            if exc.code != 409 or attempt == ATTEMPTS - 1:
                raise
        await asyncio.sleep(0.05 * (attempt + 1))
