"""Declared settings survive a real INI store: types come back as declared, junk falls back."""

from __future__ import annotations

from inspector.core.viewmodel import settings_schema as keys
from inspector.core.viewmodel.settings_schema import Setting, add_recent
from inspector.qt.settings import Settings, ini_store


def test_every_declared_setting_round_trips(tmp_path):
    path = str(tmp_path / "s.ini")
    s = Settings(ini_store(path))
    values = {keys.GEOMETRY: b"\x01\x02\xff geometry", keys.WINDOW_STATE: b"\x00state",
              keys.RECENT_FILES: ["/only/one.md"], keys.LAST_DIR: "/tmp", keys.STRATEGY: "sentences",
              keys.PARAMS: {"sentences": {"size": 128, "overlap": 2}}, keys.WITH_PREFIX: {"fixed_chars": True},
              keys.ONLY_FLAGGED: True, keys.MODEL_DEVICE: "cuda:1", keys.THEME: "dark",
              keys.PDF_BACKEND: "plain", keys.EMBED_VIEW: "clean"}
    assert set(values) == set(keys.ALL)
    for setting, value in values.items():
        s.set(setting, value)
    s.sync()
    fresh = Settings(ini_store(path))  # a new reader: values come from the file as strings
    for setting, value in values.items():
        got = fresh.get(setting)
        assert got == value and type(got) is setting.type, setting.key


def test_missing_and_corrupt_values_give_defaults(tmp_path):
    path = tmp_path / "s.ini"
    path.write_text("[chunking]\nparams={broken\nwith_prefix=perhaps\n[table]\nonly_flagged=1\n")
    s = Settings(ini_store(str(path)))
    assert s.get(keys.PARAMS) == {} and s.get(keys.WITH_PREFIX) == {}
    assert s.get(keys.ONLY_FLAGGED) is True
    assert s.get(keys.RECENT_FILES) == [] and s.get(keys.GEOMETRY) == b""
    # Defaults are copies: changing one never changes the declaration.
    s.get(keys.RECENT_FILES).append("x")
    assert keys.RECENT_FILES.default == []


def test_add_recent_moves_to_front_and_limits():
    recent = [f"/f{i}" for i in range(10)]
    assert add_recent(recent, "/f5")[:2] == ["/f5", "/f0"] and len(add_recent(recent, "/f5")) == 10
    assert add_recent(recent, "/new")[0] == "/new" and "/f9" not in add_recent(recent, "/new")


def test_int_setting():
    s = Setting("x/n", int, 3, "a number")
    assert s.coerce("12") == 12 and s.coerce("twelve") == 3 and s.coerce(None) == 3
