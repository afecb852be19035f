"""Every persisted setting, declared once with its type, default and meaning.

The Qt layer stores these in `QSettings` (tests hand it a temporary INI file); this module only
knows how to turn what a store returns back into the declared type. INI files give strings back
("true", "12", a single-element list as a plain string), so reading is forgiving and never raises:
a corrupt value falls back to the default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAX_RECENT = 10


@dataclass(frozen=True, slots=True, eq=False)
class Setting:
    """One persisted key (compared and hashed by identity: each declaration is one key)."""

    key: str
    """Key in the store ("group/name")."""
    type: type
    """bytes, str, bool, int, list (of str) or dict (stored as JSON text)."""
    default: Any
    doc: str
    """What the setting remembers, for people reading the INI file or this module."""

    def coerce(self, raw: Any) -> Any:
        """The stored value as `type`, or the default when missing or unreadable."""
        if raw is None:
            return _copy(self.default)
        try:
            if self.type is bool:
                if isinstance(raw, str):
                    low = raw.strip().lower()
                    if low in ("true", "1", "yes", "on"):
                        return True
                    if low in ("false", "0", "no", "off", ""):
                        return False
                    return _copy(self.default)
                return bool(raw)
            if self.type is int:
                return int(raw)
            if self.type is str:
                return raw if isinstance(raw, str) else str(raw)
            if self.type is bytes:
                if isinstance(raw, (bytes, bytearray, memoryview)):
                    return bytes(raw)
                data = getattr(raw, "data", None)  # QByteArray without importing Qt
                return bytes(data()) if callable(data) else _copy(self.default)
            if self.type is list:
                if isinstance(raw, str):
                    return [raw] if raw else []
                return [str(x) for x in raw]
            if self.type is dict:
                value = json.loads(raw) if isinstance(raw, str) else raw
                return dict(value) if isinstance(value, dict) else _copy(self.default)
        except (TypeError, ValueError):
            return _copy(self.default)
        raise TypeError(f"unsupported setting type {self.type!r}")  # pragma: no cover

    def encode(self, value: Any) -> Any:
        """What to hand the store for `value`."""
        if self.type is dict:
            return json.dumps(value, sort_keys=True)
        if self.type is list:
            return list(value)
        return value


def _copy(value: Any) -> Any:
    return list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value


GEOMETRY = Setting("window/geometry", bytes, b"", "Main window position and size (QMainWindow.saveGeometry).")
WINDOW_STATE = Setting("window/state", bytes, b"", "Dock and toolbar layout (QMainWindow.saveState).")
RECENT_FILES = Setting("files/recent", list, [],
                       f"Recently opened files and folders, newest first, at most {MAX_RECENT}.")
LAST_DIR = Setting("files/last_dir", str, "", "Folder the Open dialog starts in.")
STRATEGY = Setting("chunking/strategy", str, "markdown", "Strategy chosen last.")
PARAMS = Setting("chunking/params", dict, {}, "Last parameters per strategy: {strategy: {param: value}}.")
WITH_PREFIX = Setting("chunking/with_prefix", dict, {},
                      "Embed chunks with their context prefix, per strategy where the user chose "
                      "({strategy: bool}); other strategies use their own default.")
ONLY_FLAGGED = Setting("table/only_flagged", bool, False, "Chunk table shows flagged chunks only.")
MODEL_DEVICE = Setting("model/device", str, "auto",
                       "Where the embedding model runs: auto (CUDA, then Apple MPS, then the CPU), "
                       "cpu, cuda, cuda:N or mps.")
THEMES = ("system", "light", "dark")
THEME = Setting("view/theme", str, "system",
                "Colours: system (follow the desktop's light or dark setting), light or dark (View ▸ Theme).")

PDF_BACKEND = Setting("documents/pdf_backend", str, "builtin",
                      "How PDFs become text (Settings ▸ PDF Backend): builtin (Markdown with headings, lists "
                      "and tables from the page layout, offline), plain (page text only) or docling (the "
                      "optional docling package).")

EMBED_VIEW = Setting("chunking/embed_view", str, "raw",
                     "What the embedder and BM25 read of each chunk (Settings ▸ Embedding View, issue 29): raw "
                     "(the span as written) or clean (Markdown link targets, reference definitions and table "
                     "padding dropped, a split table's header row repeated).")

ALL: tuple[Setting, ...] = (GEOMETRY, WINDOW_STATE, RECENT_FILES, LAST_DIR, STRATEGY, PARAMS, WITH_PREFIX,
                            ONLY_FLAGGED, MODEL_DEVICE, THEME, PDF_BACKEND, EMBED_VIEW)


def add_recent(recent: list[str], path: str, limit: int = MAX_RECENT) -> list[str]:
    """`path` moved to the front of the recent list, duplicates removed, at most `limit` kept."""
    return [path, *[p for p in recent if p != path]][:limit]
