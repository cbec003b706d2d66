"""Pure helpers of the writes: the patch that turns a live object into an edited one.

A raw PUT carries the whole object as the user edited it. Sending it as an update would make
the user's stale copy win over fields others changed meanwhile; upstream instead diffs the
live object against the submitted one and patches the difference. Upstream uses a
strategic-merge patch for built-in kinds; that needs each field's merge keys (Go struct tags),
which no Python library carries, so we send a JSON merge patch (RFC 7386) of the two full
objects. For a full object both give the same result: every list the user edited is replaced
by the edited list, every field the user removed is removed.
"""

# Metadata the server maintains: an edited copy that lacks them must not remove them.
SERVER_OWNED = ("resourceVersion", "uid", "creationTimestamp", "generation", "managedFields",
                "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds")


def diff(live, submitted):
    """The RFC 7386 merge patch that turns ``live`` into ``submitted`` ({} when equal)."""
    out = {}
    for key, value in submitted.items():
        if key not in live:
            out[key] = value
        elif isinstance(live[key], dict) and isinstance(value, dict):
            inner = diff(live[key], value)
            if inner:
                out[key] = inner
        elif live[key] != value:
            out[key] = value
    for key in live:
        if key not in submitted:
            out[key] = None
    return out


def edit_patch(live, submitted):
    """The patch of an edited full object against the live one, or {} if nothing changed.

    The user's resourceVersion is replaced by the live one (as upstream copies it); the patch
    carries the live resourceVersion, so a change made between our read and our patch is a
    409 conflict (and the caller reads again) rather than a silent overwrite. Omitting
    ``status`` or server-owned metadata does not remove them.
    """
    meta = dict(submitted.get("metadata") or {})
    live_meta = live.get("metadata") or {}
    meta.pop("resourceVersion", None)
    for key in SERVER_OWNED:
        if key not in meta and key in live_meta:
            meta[key] = live_meta[key]
    edited = dict(submitted, metadata=meta)
    if "status" not in edited and "status" in live:
        edited["status"] = live["status"]
    patch = diff(live, edited)
    if patch:
        patch.setdefault("metadata", {})["resourceVersion"] = live_meta.get("resourceVersion")
    return patch
