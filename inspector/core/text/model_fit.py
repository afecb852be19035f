"""Is the bundled embedding model a fit for this document's language?

all-MiniLM-L6-v2 was trained on English sentence pairs. On other languages its vectors carry far
less meaning, and for some scripts its WordPiece vocabulary has no pieces at all: most Hindi words
and many Chinese characters become `[UNK]`, so the model literally reads nothing there. The window
says so (naming the detected language and a multilingual model to try) instead of letting the
user tune chunk sizes against a model that cannot read the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.runtime.lru import SizedLRU
from inspector.core.text.language import Language, detect_language, sample_text

BUNDLED_MODEL = "all-MiniLM-L6-v2"
#: A multilingual sentence-transformers model of the same family (384 dimensions, 50+ languages).
MULTILINGUAL_MODEL = "paraphrase-multilingual-MiniLM-L12-v2"
#: Above this share of unknown word pieces the model is a poor fit whatever the language.
UNKNOWN_LIMIT = 0.02


@dataclass(frozen=True, slots=True)
class ModelFit:
    """How well the bundled English model suits a text."""

    language: Language
    unknown_share: float
    """Share of the sample's word pieces the bundled tokenizer maps to [UNK] (0..1)."""
    pieces: int
    """Word pieces in the sample."""

    @property
    def poor(self) -> bool:
        return (self.language.code not in ("en", "und")) or self.unknown_share > UNKNOWN_LIMIT

    def note(self) -> str:
        """One sentence for the status bar ("" when the model fits)."""
        if not self.poor:
            return ""
        lang = self.language.name if self.language.code != "und" else "This text"
        unk = (f"; {self.unknown_share:.0%} of its word pieces are unknown to the model"
               if self.unknown_share >= 0.005 else "")
        subject = f"{lang} text" if self.language.code != "und" else lang
        return (f"{subject}: the bundled {BUNDLED_MODEL} was trained on English{unk}. "
                f"A multilingual model (e.g. {MULTILINGUAL_MODEL}) would fit better.")


def unknown_share(text: str) -> tuple[float, int]:
    """(share of [UNK] word pieces, word pieces) of `text` under the bundled tokenizer."""
    from inspector.core.text.wordpieces import tokenizer

    tk = tokenizer()
    ids = tk.encode(text, add_special_tokens=False).ids if text.strip() else []
    if not ids:
        return 0.0, 0
    unk = tk.token_to_id("[UNK]")
    return sum(1 for i in ids if i == unk) / len(ids), len(ids)


#: Fits of whole texts by (length, hash): the window asks on every open (the background loader
#: asks first, so a big document's fit is ready before the GUI thread wants it).
_FITS: SizedLRU[ModelFit] = SizedLRU(64, 64)


def model_fit(text: str) -> ModelFit:
    """The detected language and the unknown-piece share, from a sample of the text (remembered
    per text)."""
    return _FITS.get_or_make((len(text), hash(text)), lambda: _model_fit(text), 1)


def _model_fit(text: str) -> ModelFit:
    share, pieces = unknown_share(sample_text(text))
    return ModelFit(detect_language(text), share, pieces)


__all__ = ["ModelFit", "model_fit", "unknown_share", "BUNDLED_MODEL", "MULTILINGUAL_MODEL", "UNKNOWN_LIMIT"]
