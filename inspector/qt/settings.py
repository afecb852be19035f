"""Typed access to the persisted settings declared in `inspector.core.viewmodel.settings_schema`.

The window never touches `QSettings` keys directly: it reads and writes `Setting` declarations
through `Settings`, which coerces whatever the store returns (INI files give strings back). Tests
pass a store on a temporary INI file; only `default_store()` points at the user's configuration.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QByteArray, QSettings

from inspector.core.viewmodel.settings_schema import Setting

ORGANIZATION = "ChunkInspector"
APPLICATION = "chunk-inspector"


def default_store() -> QSettings:
    """The user's settings (INI format everywhere, so they are readable and portable)."""
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def ini_store(path: str) -> QSettings:
    """A store on an explicit INI file (tests, portable installs)."""
    return QSettings(path, QSettings.Format.IniFormat)


class Settings:
    """Reads and writes declared settings."""

    def __init__(self, store: QSettings) -> None:
        self.store = store

    def get(self, setting: Setting) -> Any:
        raw = self.store.value(setting.key)
        if isinstance(raw, QByteArray):
            raw = bytes(raw.data())
        return setting.coerce(raw)

    def set(self, setting: Setting, value: Any) -> None:
        encoded = setting.encode(value)
        if isinstance(encoded, (bytes, bytearray)):
            encoded = QByteArray(bytes(encoded))
        self.store.setValue(setting.key, encoded)

    def sync(self) -> None:
        self.store.sync()

    @property
    def path(self) -> str:
        return self.store.fileName()
