"""Cron jobs (reference §5.2), batch/v1 or batch/v1beta1 as discovery finds them."""

from dashboard_api.query.reads import Need, Sublist, scope_of
from dashboard_api.summaries.common import (object_meta, resource_status, spec_images,
                                            type_meta, uid)


def item(obj, rel):
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    template = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {})
    return {"objectMeta": object_meta(obj), "typeMeta": type_meta("cronjob"),
            "schedule": spec.get("schedule", ""), "suspend": spec.get("suspend"),
            "active": len(status.get("active") or ()),
            "lastSchedule": status.get("lastScheduleTime"),
            "containerImages": [c.get("image", "") for c in
                                (template.get("spec") or {}).get("containers") or ()]}


def list_status(raw, rel):
    """Running unless suspended (upstream also counted an unset ``suspend`` as failed)."""
    out = resource_status()
    for obj in raw:
        out["failed" if (obj.get("spec") or {}).get("suspend") else "running"] += 1
    return out


def status_text(obj):
    """Suspended, or Running (a search's ``status:``; the list status counts it so)."""
    return "Suspended" if (obj.get("spec") or {}).get("suspend") else "Running"


def images(obj):
    """The images of the cron job's pod template (a search's ``image:``)."""
    spec = obj.get("spec") or {}
    template = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {})
    return spec_images(template.get("spec"))


def detail(obj, rel):
    spec = obj.get("spec") or {}
    out = item(obj, rel)
    out.update(concurrencyPolicy=spec.get("concurrencyPolicy", ""),
               startingDeadlineSeconds=spec.get("startingDeadlineSeconds"), errors=[])
    return out


def _owned_jobs(obj, rel, arg):
    """Jobs owned by the cron job; ``?active=false`` gives the finished ones instead."""
    want_active = arg("active") != "false"
    owner = uid(obj)
    return [job for job in rel["jobs"]
            if any(ref.get("uid") == owner for ref in (job.get("metadata") or {}).get(
                "ownerReferences") or ())
            and ((job.get("status") or {}).get("active", 0) > 0) == want_active]


JOBS = Sublist("job", "job", lambda obj: [Need("jobs", namespaces=scope_of(obj), critical=True)],
               pick=_owned_jobs, status=True)
