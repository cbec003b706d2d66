"""Locale list and locale choice for the UI files."""

import json

import pytest

from dashboard_api.web import locales


def test_default_list_has_names():
    got = dict(locales.load())
    assert list(got) == list(locales.DEFAULT_IDS) and got["fr"] == "Français"


def test_file_list(tmp_path):
    path = tmp_path / "locale_conf.json"
    path.write_text(json.dumps({"translations": ["en", "xx"]}))
    assert locales.load(str(path)) == [("en", "English"), ("xx", "xx")]


@pytest.mark.parametrize("content", ["{", "[]", '{"translations": "en"}', '{"translations": [1]}'])
def test_bad_files(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(locales.LocaleConfigError):
        locales.load(str(path))


def test_choice():
    available = ["de", "en", "zh-Hans", "zh-Hant-HK"]
    assert locales.choose(["zh-CN"], available) == "zh-Hans"
    assert locales.choose(["zh-hk"], available) == "zh-Hant-HK"
    assert locales.choose(["de-AT", "en"], available) == "de"
    assert locales.choose(["pl"], available) == "en"
    assert locales.accept_language("fr;q=0.2, de-DE, en;q=0.9, *") == ["de-DE", "en", "fr"]
