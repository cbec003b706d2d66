"""Kubernetes quantities as the metrics API sends them, in the sidecar's units.

cpu is stored in nanocores and memory in bytes (the specification's units). A quantity is a
decimal number (an exponent such as ``1e3`` is allowed) followed by an optional suffix: the
decimal SI suffixes ``n u m k M G T P E``, the binary ones ``Ki Mi Gi Ti Pi Ei``, or none.
Fractions round up, as Kubernetes' own ``Quantity.Value()`` does, so a small non-zero usage is
never stored as zero. The sidecar owns this module so that it needs nothing of the gateway.
"""

import decimal
import re

_SUFFIX = {
    "n": decimal.Decimal("1e-9"), "u": decimal.Decimal("1e-6"), "m": decimal.Decimal("1e-3"),
    "": decimal.Decimal(1), "k": decimal.Decimal("1e3"), "M": decimal.Decimal("1e6"),
    "G": decimal.Decimal("1e9"), "T": decimal.Decimal("1e12"), "P": decimal.Decimal("1e15"),
    "E": decimal.Decimal("1e18"),
    "Ki": decimal.Decimal(2 ** 10), "Mi": decimal.Decimal(2 ** 20), "Gi": decimal.Decimal(2 ** 30),
    "Ti": decimal.Decimal(2 ** 40), "Pi": decimal.Decimal(2 ** 50), "Ei": decimal.Decimal(2 ** 60),
}
_QUANTITY = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))"
                       r"(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$")
_NANO = decimal.Decimal(10 ** 9)


def parse(text):
    """The exact value of a quantity string as a Decimal; ValueError when malformed."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return decimal.Decimal(str(text))
    if not isinstance(text, str):
        raise ValueError("a quantity must be a string, got %r" % (text,))
    match = _QUANTITY.match(text.strip())
    if not match:
        raise ValueError("malformed quantity %r" % text)
    number, exponent, suffix = match.groups()
    value = decimal.Decimal(number)
    if exponent:
        return value.scaleb(int(exponent[1:]))
    return value * _SUFFIX[suffix or ""]


def _ceil(value):
    return int(value.to_integral_value(rounding=decimal.ROUND_CEILING))


def _digits(text):
    return text.isascii() and text.isdigit()


def nanocores(text):
    """cpu quantity -> integer nanocores (``250m`` -> 250000000, ``1`` -> 1000000000)."""
    if isinstance(text, str) and text[-1:] == "n" and _digits(text[:-1]):
        return int(text[:-1])   # what metrics-server sends: exact, without Decimal
    return _ceil(parse(text) * _NANO)


def bytes_(text):
    """memory quantity -> integer bytes (``1Ki`` -> 1024, ``1k`` -> 1000)."""
    if isinstance(text, str) and text[-2:] == "Ki" and _digits(text[:-2]):
        return int(text[:-2]) << 10   # what metrics-server sends: exact, without Decimal
    return _ceil(parse(text))
