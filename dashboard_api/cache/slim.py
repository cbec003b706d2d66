"""Slim records: what list summaries, sort and filter keys and related joins read, and no more.

Both sources of a list (the watch cache and the pass-through LIST) slim every object the same
way, so the two give the same bytes. Details (one object) are read whole from the API server.

What is kept of a kind is declared in its spec (``Spec.projection``, spec/projection.py): pods
keep of their spec and status only what summaries read, pod templates lose their containers'
``env``, config maps lose their data. Dropped everywhere, here: ``metadata.managedFields`` and the
``kubectl.kubernetes.io/last-applied-configuration`` annotation (a second copy of the object,
often the largest part of it). Secrets are never cached; when listed through the API server they
are slimmed like any other object.
"""

from sys import intern

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _interned(mapping):
    """Label maps repeat across thousands of objects: one copy of each short string."""
    return {intern(k): intern(v) if isinstance(v, str) and len(v) <= 64 else v
            for k, v in mapping.items()}


def metadata(meta):
    if not meta:
        return meta
    out = {intern(k): v for k, v in meta.items() if k != "managedFields"}
    annotations = out.get("annotations")
    if annotations:
        out["annotations"] = _interned({k: v for k, v in annotations.items()
                                        if k != LAST_APPLIED})
    if out.get("labels"):
        out["labels"] = _interned(out["labels"])
    if out.get("namespace"):
        out["namespace"] = intern(out["namespace"])
    return out


def slim(spec, obj):
    """The slim record of one object of the kind ``spec`` (None: a resource without a spec,
    kept whole but for its metadata); a new dict, ``obj`` unchanged."""
    out = spec.slim(obj) if spec is not None else dict(obj)
    if "metadata" in out:
        out["metadata"] = metadata(out["metadata"])
    return out


def slim_all(spec, objects):
    return [slim(spec, obj) for obj in objects]
