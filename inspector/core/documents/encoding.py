"""Bytes to text: binary detection, BOMs, BOM-less UTF-16, UTF-8 and legacy encodings.

A file that is not valid UTF-8 is read in a legacy encoding only after a guess, and a guess can be
wrong (cp1250 turns "è" into "č"). So the guess is never silent: `decode` returns, beside the text,
the encoding used and where the first byte that is not UTF-8 lies (line and column of the decoded
text), and the loader puts a note in the document's meta that the window's status bar and the
CLI's stderr show ("Read as cp1252: not valid UTF-8 at line 3, column 7"). `encoding=` forces one
codec instead (the CLI's `--encoding`).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from inspector.core.errors import InputError
from inspector.core.runtime.slices import decode_utf8, line_windows

# A well-formed multi-byte UTF-8 character (legacy 8-bit text almost never holds one).
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


_ASCII = bytes(range(0x80))


#: ’ “ ” ‚ „ – — … € ™ ‹ › « » © ® ° and no-break space: the same characters in cp1250-cp1252.
_WINDOWS_PUNCTUATION = frozenset(b"\x80\x82\x84\x85\x8b\x91\x92\x93\x94\x95\x96\x97\x99\x9b"
                                 b"\xa0\xa9\xab\xae\xb0\xbb")



def _looks_binary(data: bytes) -> str | None:
    """A reason the bytes are not text, or None."""
    head = data[:8192]
    signatures = {
        b"%PDF": "PDF bytes", b"\x89PNG": "a PNG image", b"\xff\xd8\xff": "a JPEG image",
        b"GIF8": "a GIF image", b"PK\x03\x04": "a ZIP archive (DOCX/XLSX?)", b"\x7fELF": "an executable",
    }
    for sig, what in signatures.items():
        if head.startswith(sig):
            return f"binary file ({what}), not text"
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE, codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)):
        return None
    if b"\x00" in head:
        if _utf16_without_bom(head):
            return None
        return "binary file (contains NUL bytes), not text"
    return None


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le"/"utf-16-be" when NUL fills every other byte (UTF-16 without a BOM; real
    binaries have NULs scattered), else None."""
    if b"\x00" not in head:
        return None
    even = head[0::2].count(0)
    odd = head[1::2].count(0)
    half = max(1, len(head) // 2)
    if odd / half > 0.3 and even / half < 0.05:
        return "utf-16-le"
    if even / half > 0.3 and odd / half < 0.05:
        return "utf-16-be"
    return None


def _damaged_utf8(data: bytes) -> bool:
    """True when most non-ASCII bytes form valid UTF-8 characters: a UTF-8 file with a few bad
    bytes, not text in a legacy encoding (which a guesser would turn into mojibake)."""
    count = size = 0
    for window in line_windows(data):  # one regex call over 2.8 MB held the GIL for 130 ms
        multi = _UTF8_MULTIBYTE.findall(window)
        count += len(multi)
        size += sum(map(len, multi))
    if not count:
        return False
    stray = len(data.translate(None, _ASCII)) - size
    return count >= stray


@dataclass(frozen=True, slots=True)
class InvalidByte:
    """The first byte of a file that is not UTF-8, placed in the text as it was decoded."""

    offset: int
    """Byte offset in the file."""
    value: int
    """The byte."""
    line: int
    """1-based line of the decoded text (CR, CRLF and LF each end a line, as the loader normalizes)."""
    column: int
    """1-based column: code points of the decoded line before it, plus one."""
    char_offset: int
    """Code-point offset of the same place in the loaded document's text (newlines normalized)."""


@dataclass(frozen=True, slots=True)
class Decoded:
    """What `decode` made of a file's bytes."""

    text: str
    encoding: str
    """Python's codec name of the encoding used."""
    invalid: InvalidByte | None = None
    """Where the bytes stop being UTF-8, when a legacy encoding was guessed (None: the bytes were
    UTF-8, UTF-16/32, or the encoding was forced)."""
    forced: bool = False
    """The caller named the encoding (`decode(..., encoding=...)`)."""

    @property
    def guessed(self) -> bool:
        return self.invalid is not None and not self.forced

    def note(self) -> str:
        """The sentence the user reads about a guess ('' when nothing was guessed)."""
        if self.invalid is None or self.forced:
            return ""
        return (f"Read as {self.encoding}: not valid UTF-8 at line {self.invalid.line}, "
                f"column {self.invalid.column}")

    def meta(self) -> dict:
        """The document meta entries that record the guess (empty when nothing was guessed)."""
        if not self.guessed or self.invalid is None:
            return {}
        inv = self.invalid
        return {"decoded_as": {"encoding": self.encoding, "offset": inv.offset, "byte": inv.value,
                               "line": inv.line, "column": inv.column, "char_offset": inv.char_offset},
                "warnings": (self.note(),)}


def canonical_codec(name: str) -> str:
    """Python's name for a codec the user typed ("latin-1" -> "iso8859-1"); ValueError naming it
    when there is no such text codec."""
    try:
        info = codecs.lookup(name)
    except (LookupError, TypeError):
        raise ValueError(f"unknown encoding {name!r}") from None
    if not getattr(info, "_is_text_encoding", True):
        raise ValueError(f"{name!r} is not a text encoding")
    return info.name


def place_byte(data: bytes, offset: int, encoding: str) -> InvalidByte:
    """Where byte `offset` falls in the text `data` decodes to with `encoding` (line, column)."""
    prefix = data[:offset].decode(encoding, errors="replace")
    if "\r" in prefix:
        prefix = prefix.replace("\r\n", "\n").replace("\r", "\n")
    line = prefix.count("\n") + 1
    column = len(prefix) - (prefix.rfind("\n") + 1) + 1
    return InvalidByte(offset, data[offset] if offset < len(data) else -1, line, column, len(prefix))


def _first_invalid_utf8(data: bytes) -> int | None:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start
    return None


def decode(data: bytes, path: str = "<bytes>", *, encoding: str | None = None) -> Decoded:
    """Decode file bytes (see `decode_bytes`), saying which encoding was used and, when it was
    guessed, where the first byte that is not UTF-8 lies. `encoding` forces a codec: bytes it
    cannot decode are an InputError naming the line and column."""
    if encoding:
        return _decode_forced(data, path, encoding)
    text, used = decode_bytes(data, path)
    if used in ("utf-8", "utf-8-sig") or used.startswith(("utf-16", "utf-32")):
        return Decoded(text, used)
    off = _first_invalid_utf8(data)
    return Decoded(text, used, place_byte(data, off, used) if off is not None else None)


def _decode_forced(data: bytes, path: str, encoding: str) -> Decoded:
    try:
        name = canonical_codec(encoding)
    except ValueError as exc:
        raise InputError(str(exc), path=path) from None
    reason = _looks_binary(data)
    if reason and not name.startswith(("utf-16", "utf-32")):
        raise InputError(reason, path=path)
    codec = name
    if name == "utf-8" and data.startswith(codecs.BOM_UTF8):
        codec = "utf-8-sig"  # the BOM is the encoding's mark, not text
    try:
        return Decoded(data.decode(codec), name, forced=True)
    except UnicodeDecodeError as exc:
        inv = place_byte(data, exc.start, codec)
        raise InputError(f"not valid {name} (byte 0x{data[exc.start]:02x}) at column {inv.column}",
                         path=path, line=inv.line) from None


#: Byte order marks, in the order `decode_bytes` tries them (UTF-32's first: it begins with UTF-16's).
_BOM_CODECS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
               (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def may_need_guessing(data: bytes) -> bool:
    """Whether `decode_bytes` may have to guess these bytes' encoding with charset-normalizer: not
    binary (refused at once), no BOM, not BOM-less UTF-16, not UTF-8. Cheap: one UTF-8 check in
    C, 2-3 ms a megabyte. Guessing is not: 220 ms for a 2.7 MB Latin-1 file on the 2-core machine,
    and 60 ms for a first file of 69 bytes (the import and its tables), so the window opens such
    files off its GUI thread."""
    if _looks_binary(data) or data.startswith(tuple(bom for bom, _enc in _BOM_CODECS)):
        return False
    if _utf16_without_bom(data[:8192]):
        return False
    return _first_invalid_utf8(data) is not None


def decode_bytes(data: bytes, path: str = "<bytes>") -> tuple[str, str]:
    """Decode file bytes: UTF-8 (with or without BOM), UTF-16/32 with BOM, else charset-normalizer.
    Returns (text, encoding); `decode` also says where a guessed file stops being UTF-8."""
    reason = _looks_binary(data)
    if reason:
        raise InputError(reason, path=path)
    for bom, enc in _BOM_CODECS:
        if data.startswith(bom):
            try:
                return data.decode(enc), enc
            except UnicodeDecodeError as exc:
                raise InputError(f"invalid {enc} text at byte {exc.start}", path=path) from None
    # BOM-less UTF-16 before UTF-8: ASCII text in UTF-16 is also valid UTF-8, full of NULs.
    enc16 = _utf16_without_bom(data[:8192])
    if enc16:
        try:
            return data.decode(enc16), enc16
        except UnicodeDecodeError as exc:
            raise InputError(f"invalid {enc16.upper()} text (no BOM) at byte {exc.start}",
                             path=path) from None
    try:
        return decode_utf8(data), "utf-8"  # a slice at a time: 20 MB in one call holds the GIL ~100 ms
    except UnicodeDecodeError as exc:
        if _damaged_utf8(data):
            line = data.count(b"\n", 0, exc.start) + 1
            raise InputError(f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}) in "
                             "a file that is otherwise UTF-8; fix the byte or re-save as UTF-8",
                             path=path, line=line) from None
    if set(data.translate(None, _ASCII)) <= _WINDOWS_PUNCTUATION:
        # ASCII plus typographic punctuation that every Windows code page reads alike (a Word
        # export's quotes and dashes): the guesser below calls these DOS code pages.
        return data.decode("cp1252"), "cp1252"
    from charset_normalizer import from_bytes

    matches = from_bytes(data[: 2 * 1024 * 1024])
    best = matches.best()
    if best is None or best.encoding is None:
        raise InputError("not valid UTF-8 and no other text encoding fits; is it a binary file?", path=path)
    # Short Western texts fit several code pages equally well (cp1250 turns "è" into "č"):
    # on a tie prefer cp1252, the superset of Latin-1 that such files are nearly always in.
    for m in matches:
        if m.encoding == "cp1252" and m.chaos <= best.chaos and m.coherence >= best.coherence:
            best = m
            break
    try:
        text = data.decode(best.encoding)
    except (UnicodeDecodeError, LookupError):
        raise InputError(f"could not decode as {best.encoding}", path=path) from None
    return text, best.encoding
