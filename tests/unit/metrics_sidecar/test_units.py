"""The sidecar's quantity conversions: cpu to nanocores, memory to bytes, every suffix."""

import decimal

import pytest

from metrics_sidecar import units


@pytest.mark.parametrize("text, nanocores", [
    ("12345n", 12_345),
    ("1.5n", 2),                       # fractions round up: a small usage is never zero
    ("3u", 3_000),
    ("250m", 250_000_000),
    ("0.5", 500_000_000),
    ("1", 1_000_000_000),
    ("2", 2_000_000_000),
    ("1k", 1_000_000_000_000),
    ("1e-3", 1_000_000),
    ("0", 0),
    ("100000u", 100_000_000),
])
def test_cpu_to_nanocores(text, nanocores):
    assert units.nanocores(text) == nanocores


@pytest.mark.parametrize("text, value", [
    ("1", 1),
    ("123", 123),
    ("1k", 1000),
    ("1M", 1_000_000),
    ("1G", 1_000_000_000),
    ("1T", 10 ** 12),
    ("1Ki", 1024),
    ("1Mi", 1024 ** 2),
    ("1Gi", 1024 ** 3),
    ("1Ti", 1024 ** 4),
    ("1.5Gi", 1_610_612_736),
    ("1e3", 1000),
    ("1E3", 1000),
    ("1E", 10 ** 18),
    ("1500m", 2),                      # 1.5 bytes round up
    ("130560Ki", 133_693_440),
])
def test_memory_to_bytes(text, value):
    assert units.bytes_(text) == value


@pytest.mark.parametrize("bad", ["", "abc", "1X", "1 Mi", "Mi", "1.2.3", "--1", None, [1]])
def test_malformed_quantities_are_refused(bad):
    with pytest.raises(ValueError):
        units.parse(bad)


def test_parse_is_exact():
    assert units.parse("0.1") * 3 == decimal.Decimal("0.3")
    assert units.parse(7) == 7


@pytest.mark.parametrize("convert, bad", [(units.nanocores, "n"), (units.nanocores, "1n2"),
                                          (units.bytes_, "Ki"), (units.bytes_, "+Ki"),
                                          (units.bytes_, "1.Ki5")])
def test_the_fast_forms_refuse_what_parse_refuses(convert, bad):
    """``<digits>n`` and ``<digits>Ki`` (what metrics-server sends) skip Decimal; anything
    else goes through parse."""
    with pytest.raises(ValueError):
        convert(bad)
    assert convert("-5n" if convert is units.nanocores else "-5Ki") == (
        -5 if convert is units.nanocores else -5120)
