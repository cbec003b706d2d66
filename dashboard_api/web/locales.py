"""The web UI's locales: ids from --locale-config (upstream's file format), with display names."""

import json

DEFAULT_IDS = ("de", "en", "es", "fr", "ja", "ko", "zh-Hans", "zh-Hant", "zh-Hant-HK")
NAMES = {
    "de": "Deutsch",
    "en": "English",
    "es": "Español",
    "fr": "Français",
    "ja": "日本語",
    "ko": "한국어",
    "zh-Hans": "中文 (简体)",
    "zh-Hant": "中文 (繁體)",
    "zh-Hant-HK": "中文 (香港)",
}
# Language tags the browser sends that name one of our locale directories.
ALIASES = {"zh-cn": "zh-Hans", "zh-tw": "zh-Hant", "zh-hk": "zh-Hant-HK"}


class LocaleConfigError(Exception):
    pass


def load(path=None):
    """[(id, name)] from the file ``{"translations": [...]}``, or the default list."""
    if not path:
        ids = DEFAULT_IDS
    else:
        try:
            with open(path, encoding="utf-8") as f:
                ids = json.load(f).get("translations")
        except (OSError, ValueError, AttributeError) as exc:
            raise LocaleConfigError("cannot read --locale-config %s: %s" % (path, exc))
        if not isinstance(ids, list) or not all(isinstance(i, str) and i for i in ids):
            raise LocaleConfigError('--locale-config must hold {"translations": ["en", ...]}')
    return [(i, NAMES.get(i, i)) for i in ids]


def choose(candidates, available, default="en"):
    """The first of ``candidates`` (language tags, best first) that is ``available``."""
    by_lower = {a.lower(): a for a in available}
    for tag in candidates:
        tag = tag.strip()
        found = by_lower.get(ALIASES.get(tag.lower(), tag).lower())
        if found:
            return found
        base = by_lower.get(tag.split("-")[0].lower())
        if base:
            return base
    return default


def accept_language(header):
    """Tags of an Accept-Language header, best first."""
    weighted = []
    for position, part in enumerate((header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        if not tag or tag == "*":
            continue
        q = 1.0
        if params.strip().startswith("q="):
            try:
                q = float(params.strip()[2:])
            except ValueError:
                q = 0.0
        weighted.append((-q, position, tag))
    return [tag for _, _, tag in sorted(weighted)]
