"""Label selectors: the API server's query syntax, and the subset rule for services."""


def to_query(selector):
    """``app=web,tier in (a,b),!legacy`` from a LabelSelector (matchLabels/matchExpressions)
    or a plain map (ReplicationController, Service). An empty selector gives ""."""
    if not selector:
        return ""
    if "matchLabels" not in selector and "matchExpressions" not in selector:
        return ",".join("%s=%s" % kv for kv in sorted(selector.items()))
    parts = ["%s=%s" % kv for kv in sorted((selector.get("matchLabels") or {}).items())]
    for e in selector.get("matchExpressions") or ():
        op, key, values = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (key, ",".join(values)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (key, ",".join(values)))
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append("!" + key)
    return ",".join(parts)


def is_subset(small, big):
    """A non-empty map ``small`` all of whose pairs are in ``big`` (services of a workload)."""
    return bool(small) and all(big.get(k) == v for k, v in small.items())
