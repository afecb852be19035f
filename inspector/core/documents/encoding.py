"""Bytes to text: binary detection, BOMs, BOM-less UTF-16, UTF-8 and legacy encodings."""

from __future__ import annotations

import codecs
import re

from inspector.core.errors import InputError

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
    multi = _UTF8_MULTIBYTE.findall(data)
    if not multi:
        return False
    high = len(data.translate(None, _ASCII))
    stray = high - sum(len(m) for m in multi)
    return len(multi) >= stray


def decode_bytes(data: bytes, path: str = "<bytes>") -> tuple[str, str]:
    """Decode file bytes: UTF-8 (with or without BOM), UTF-16/32 with BOM, else charset-normalizer."""
    reason = _looks_binary(data)
    if reason:
        raise InputError(reason, path=path)
    for bom, enc in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                     (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                     (codecs.BOM_UTF16_BE, "utf-16")):
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
        return data.decode("utf-8"), "utf-8"
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
