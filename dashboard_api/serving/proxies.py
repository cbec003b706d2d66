"""Which client a request comes from, for decisions (budgets, limits): --trusted-proxies.

The request log shows the address a request claims (X-Original-Forwarded-For, then
X-Forwarded-For, then X-Real-Ip, then the peer: requestlog.client_address), as the
specification says. Anyone can send those headers, so no decision trusts them unless the peer
(the TCP connection's other end) is one of the trusted proxies: then the client is the last
address in the forwarded chain that is not itself a trusted proxy (each proxy appends the
address it saw, so the entries on the right were written by the trusted proxies themselves;
the ones on the left may be the client's own inventions). Without --trusted-proxies (the
default) the client is always the peer.
"""

import ipaddress

FORWARDED_HEADERS = ("X-Original-Forwarded-For", "X-Forwarded-For")


def parse(text):
    """The networks of a --trusted-proxies value: addresses or CIDRs, comma-separated;
    raises ValueError on a malformed entry."""
    networks = []
    for item in (text or "").replace(" ", ",").split(","):
        item = item.strip()
        if item:
            networks.append(ipaddress.ip_network(item, strict=False))
    return tuple(networks)


def _address(text):
    text = (text or "").strip()
    if text.startswith("[") and "]" in text:  # [v6]:port
        text = text[1:text.index("]")]
    elif text.count(":") == 1:  # v4:port
        text = text.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    # An IPv4 client seen on a dual-stack socket is the same client.
    return getattr(address, "ipv4_mapped", None) or address


class TrustedProxies:
    def __init__(self, networks=()):
        self.networks = tuple(networks)

    def trusted(self, address):
        parsed = _address(address)
        return parsed is not None and any(parsed.version == n.version and parsed in n
                                          for n in self.networks)

    def client(self, headers, peer):
        """The client address a decision may rely on (a string)."""
        if not self.networks or not self.trusted(peer):
            return peer or "unknown"
        for name in FORWARDED_HEADERS:
            values = headers.get_list(name) if hasattr(headers, "get_list") else \
                [headers.get(name) or ""]
            chain = [entry.strip() for value in values for entry in value.split(",")
                     if entry.strip()][:64]
            if not chain:
                continue
            for entry in reversed(chain):
                if not self.trusted(entry):
                    parsed = _address(entry)
                    return str(parsed) if parsed is not None else peer
            return str(_address(chain[0]))  # every hop a trusted proxy: the first one
        real = _address(headers.get("X-Real-Ip"))
        return str(real) if real is not None else peer


NONE = TrustedProxies()


def of(options):
    """The TrustedProxies of the options (none when the flag is absent)."""
    networks = getattr(options, "trusted_proxies", None)
    return TrustedProxies(networks) if networks else NONE
