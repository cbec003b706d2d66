"""The pod's display status string, restart count and list phase (reference §6), kubectl-like."""


def _condition(status, ctype, value="True"):
    return any(c.get("type") == ctype and c.get("status") == value
               for c in status.get("conditions") or ())


def _init_value(i, cs, spec_init):
    """The status while init container ``i`` runs, or None when that container is done."""
    state = cs.get("state") or {}
    term, wait = state.get("terminated"), state.get("waiting")
    if term and term.get("exitCode", 0) == 0:
        return None
    spec = spec_init[i] if i < len(spec_init) else {}
    if spec.get("restartPolicy") == "Always" and cs.get("started"):
        return None  # a sidecar that has started
    if term:
        if term.get("reason"):
            return "Init:" + term["reason"]
        if term.get("signal"):
            return "Init: Signal %d" % term["signal"]
        return "Init: ExitCode %d" % term.get("exitCode", 0)
    if wait and wait.get("reason") and wait["reason"] != "PodInitializing":
        return "Init: " + wait["reason"]
    return "Init: %d/%d" % (i, len(spec_init))


def pod_status(pod):
    """The display status: Running, Pending, CrashLoopBackOff, Init: 0/1, Terminating, ..."""
    status = pod.get("status") or {}
    spec = pod.get("spec") or {}
    value = status.get("reason") or status.get("phase") or ""
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "SchedulingGated"
           for c in status.get("conditions") or ()):
        value = "SchedulingGated"

    initializing = False
    spec_init = spec.get("initContainers") or []
    for i, cs in enumerate(status.get("initContainerStatuses") or ()):
        init_value = _init_value(i, cs, spec_init)
        if init_value is not None:
            value, initializing = init_value, True
            break

    if not initializing or _condition(status, "Initialized"):
        has_running = False
        for cs in reversed(status.get("containerStatuses") or ()):
            state = cs.get("state") or {}
            wait, term = state.get("waiting"), state.get("terminated")
            if wait and wait.get("reason"):
                value = wait["reason"]
            elif term and term.get("reason"):
                value = term["reason"]
            elif term:
                value = ("Signal: %d" % term["signal"] if term.get("signal")
                         else "ExitCode: %d" % term.get("exitCode", 0))
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
        if value == "Completed" and has_running:
            value = "Running" if _condition(status, "Ready") else "NotReady"

    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        if status.get("reason") == "NodeLost":
            value = "Unknown"
        elif status.get("phase") not in ("Succeeded", "Failed"):
            value = "Terminating"
    return value


def restart_count(pod):
    return sum(cs.get("restartCount", 0)
               for cs in (pod.get("status") or {}).get("containerStatuses") or ())


def list_phase(pod, has_warnings):
    """The bucket of the pod list's ResourceStatus, or None when the pod is not counted."""
    status = pod.get("status") or {}
    phase = status.get("phase")
    if phase in ("Failed", "Succeeded"):
        return phase.lower()
    if phase == "Running" and _condition(status, "Initialized") and _condition(status, "Ready"):
        return "running"
    if has_warnings:
        return "failed"
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return "terminating"
    if phase == "Pending":
        return "pending"  # upstream never counted pending pods (§17); they are counted here
    return None
