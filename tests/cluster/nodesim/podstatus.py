"""SimPod -> the pod status a kubelet would report (pure, but for remembering condition
times)."""

import time

from . import images

HOST_IP = "127.0.0.1"


def meta_time(ns):
    """metav1.Time: RFC 3339 with second precision, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ns // 1_000_000_000))


def _terminated(sim, c, instance, exit_code, reason, started_at, finished_at):
    return {"exitCode": exit_code, "reason": reason, "startedAt": meta_time(started_at),
            "finishedAt": meta_time(finished_at), "containerID": c.container_id(sim.uid, instance)}


def container_status(sim, c):
    status = {"name": c.name, "state": {}, "lastState": {}, "ready": False,
              "restartCount": c.instance, "image": images.full_reference(c.image), "imageID": ""}
    if c.state == "waiting":
        waiting = {"reason": c.reason}
        if c.message:
            waiting["message"] = c.message
        status["state"]["waiting"] = waiting
    else:
        status["imageID"] = images.image_id(c.image)
        status["containerID"] = c.container_id(sim.uid)
        if c.state == "running":
            status["state"]["running"] = {"startedAt": meta_time(c.started_at)}
            status["ready"] = True
        else:
            status["state"]["terminated"] = _terminated(
                sim, c, c.instance, c.exit_code, c.reason, c.started_at, c.finished_at)
            status["ready"] = c.init and c.exit_code == 0
    if c.last is not None:
        status["lastState"]["terminated"] = dict(c.last[1])
        status.setdefault("containerID", c.container_id(sim.uid))
        status["imageID"] = images.image_id(c.image)
    if not c.init:
        status["started"] = c.state == "running"
    return status


def last_terminated(sim, c):
    """The lastState.terminated record for the instance that just ended."""
    record = _terminated(sim, c, c.instance, c.exit_code, c.reason, c.started_at, c.finished_at)
    return c.instance, record


def phase(sim):
    if any(not (c.state == "terminated" and c.exit_code == 0) for c in sim.init_containers):
        return "Pending"
    if any(c.state == "waiting" and c.last is None for c in sim.containers):
        return "Pending"
    if all(c.state == "terminated" for c in sim.containers):
        return "Succeeded" if all(c.exit_code == 0 for c in sim.containers) else "Failed"
    return "Running"


def _condition(sim, kind, ok, now, reason=None, message=None):
    status = "True" if ok else "False"
    previous = sim.conditions.get(kind)
    since = previous[1] if previous and previous[0] == status else now
    sim.conditions[kind] = (status, since)
    cond = {"type": kind, "status": status, "lastProbeTime": None,
            "lastTransitionTime": meta_time(since)}
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def conditions(sim, pod_phase, now):
    pending_init = [c.name for c in sim.init_containers
                    if not (c.state == "terminated" and c.exit_code == 0)]
    unready = [c.name for c in sim.containers if not c.running]
    init_why = ready_why = (None, None)
    if pending_init:
        init_why = ("ContainersNotInitialized",
                    "containers with incomplete status: [%s]" % " ".join(pending_init))
    if pod_phase == "Succeeded":
        init_why = ready_why = ("PodCompleted", None)
    elif unready:
        ready_why = ("ContainersNotReady",
                     "containers with unready status: [%s]" % " ".join(unready))
    scheduled = [c for c in (sim.obj.get("status") or {}).get("conditions") or []
                 if c.get("type") == "PodScheduled"]
    return [
        _condition(sim, "Initialized", not pending_init, now, *init_why),
        _condition(sim, "Ready", not unready, now, *ready_why),
        _condition(sim, "ContainersReady", not unready, now, *ready_why),
    ] + scheduled


def build(sim, now):
    pod_phase = phase(sim)
    status = {"phase": pod_phase, "conditions": conditions(sim, pod_phase, now),
              "hostIP": HOST_IP, "startTime": meta_time(sim.start_ns)}
    if sim.ip:
        status["podIP"] = sim.ip
        status["podIPs"] = [{"ip": sim.ip}]
    if sim.init_containers:
        status["initContainerStatuses"] = [container_status(sim, c) for c in sim.init_containers]
    status["containerStatuses"] = [container_status(sim, c) for c in sim.containers]
    return status
