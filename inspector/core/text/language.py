"""The document's language, guessed cheaply, and sentence boundaries for languages other than English.

Detection reads the writing system first: letters of a sample of the text are counted by Unicode
script (Han with kana is Japanese, Han alone Chinese, Devanagari Hindi, and so on). Latin text is
told apart by its commonest function words ("der die und" against "the of and"). That is enough
for the two things it is used for: choosing a sentence segmenter, and telling the user that the
bundled English model is a poor fit for the document.

Sentences: our splitter (`structure.sentence_spans`) is English-shaped. It wants whitespace after
a full stop, so Chinese and Japanese, which put none, stay one sentence per paragraph; it knows
neither the Devanagari danda "।" nor the Arabic question mark "؟"; and German ordinals ("am 1.
März") look like sentence ends to it. `sentencex` (rule-based, ~300 languages, no model, works
offline) does better on every language measured (benchmarks/sentence_split.py on the samples in
tests/data/languages: boundary F1 German 0.88 -> 0.93, French 0.89 -> 0.96, Chinese 0.40 -> 1.00,
Japanese 0.40 -> 0.96, Arabic 0.96 -> 1.00, Hindi 0.56 -> 0.96; English 1.00 either way), so it is
used for those languages and ours stays for English and anything not measured.

Spans stay exact: sentencex returns pieces of the text; they are laid back onto it in order with a
moving cursor (each piece must start where the previous ended, whitespace aside), never found again
by searching. A paragraph whose pieces do not line up is split by our splitter instead.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

import regex

from inspector.core.runtime.lru import SizedLRU

#: ISO 639-1 code -> English name, for what detection can answer.
NAMES = {
    "en": "English", "de": "German", "fr": "French", "es": "Spanish", "it": "Italian",
    "pt": "Portuguese", "nl": "Dutch", "zh": "Chinese", "ja": "Japanese", "ko": "Korean",
    "ar": "Arabic", "hi": "Hindi", "ru": "Russian", "el": "Greek", "he": "Hebrew", "th": "Thai",
    "und": "undetermined",
}

#: Languages whose sentences `sentencex` splits better than our splitter, as measured on the
#: samples in tests/data/languages (see the module docstring). Others keep our splitter.
SEGMENTER_LANGUAGES = frozenset({"de", "fr", "zh", "ja", "ar", "hi"})

#: Writing systems and the language each stands for (when it is the text's main one).
_SCRIPTS = (("Han", "zh"), ("Hiragana", "ja"), ("Katakana", "ja"), ("Hangul", "ko"), ("Arabic", "ar"),
            ("Devanagari", "hi"), ("Cyrillic", "ru"), ("Greek", "el"), ("Hebrew", "he"), ("Thai", "th"),
            ("Latin", "en"))
_SCRIPT_RES = {name: regex.compile(rf"\p{{Script={name}}}") for name, _lang in _SCRIPTS}

#: The commonest short function words of the Latin-script languages told apart.
_FUNCTION_WORDS = {
    "en": "the of and to in is that for it with as was on are be this by not you or",
    "de": "der die und das ist nicht den von zu mit sich des auf für im dem ein eine wird",
    "fr": "le la les des est et une un du que pour dans qui pas sur au aux ce sont avec",
    "es": "el la los las del que y en es por con para una un se no al lo como más",
    "it": "il di che la è per un una non sono del della gli le con si da al nel",
    "pt": "o a os as de que e do da em um uma para com não é se por mais dos",
    "nl": "de het een en van is dat op te niet met voor zijn die er aan ook als",
}
_WORD_RE = regex.compile(r"\p{L}+")

#: Words of the lists above that English text is full of too ("a" and "as" are Portuguese function
#: words, "is" and "met" Dutch, "die" German and Dutch, "no" Spanish, "do" and "com" Portuguese,
#: "com" also every web address). They say nothing against English, so they count for English
#: alone: an English note full of "a" and "as" ("a review, a test pass, a release") was announced
#: as Portuguese (issue 26), as were 26 of 3,335 English paragraphs of this repository's Markdown
#: (none after).
_ENGLISH_TOO = frozenset(_FUNCTION_WORDS["en"].split()) | {"a", "die", "do", "no", "per", "con", "com", "met"}
_VOCABULARIES = {lang: frozenset(words.split()) - (_ENGLISH_TOO if lang != "en" else frozenset())
                 for lang, words in _FUNCTION_WORDS.items()}

#: Characters sampled for detection: three windows (start, middle, end) of this many.
SAMPLE = 4000


@dataclass(frozen=True, slots=True)
class Language:
    """A guessed document language."""

    code: str
    """ISO 639-1 code ("en", "de", "zh", ...), "und" when nothing could be told."""
    script: str
    """The main writing system ("Latin", "Han", "Arabic", ...; "" without letters)."""
    share: float
    """Share of the sampled letters written in that script (0..1)."""

    @property
    def name(self) -> str:
        return NAMES.get(self.code, self.code)

    @property
    def english(self) -> bool:
        return self.code == "en"


UNDETERMINED = Language("und", "", 0.0)


def sample_text(text: str) -> str:
    """Up to three windows of `SAMPLE` characters (start, middle, end): what detection reads."""
    n = len(text)
    if n <= 3 * SAMPLE:
        return text
    mid = n // 2
    return text[:SAMPLE] + " " + text[mid - SAMPLE // 2:mid + SAMPLE // 2] + " " + text[-SAMPLE:]


def script_counts(text: str) -> dict[str, int]:
    """Letters of `text` by script (the scripts detection knows; kana counted as Hiragana/Katakana)."""
    return {name: len(rx.findall(text)) for name, rx in _SCRIPT_RES.items()}


def _latin_language(sample: str) -> str:
    words = [w.lower() for w in _WORD_RE.findall(sample)]
    if not words:
        return "und"
    counts = {lang: sum(1 for w in words if w in v) for lang, v in _VOCABULARIES.items()}
    best = max(counts, key=lambda k: (counts[k], k == "en"))
    if counts[best] < 3:
        return "und"
    # English is the default reading: another language must clearly outnumber it.
    if best != "en" and counts[best] < 1.3 * counts["en"]:
        return "en"
    return best


def detect_language(text: str) -> Language:
    """The text's language from a sample of it (three windows of `SAMPLE` characters)."""
    sample = sample_text(text)
    counts = script_counts(sample)
    letters = sum(counts.values())
    if letters == 0:
        return UNDETERMINED
    kana = counts["Hiragana"] + counts["Katakana"]
    han = counts["Han"]
    if han + kana and (han + kana) >= max(counts["Latin"], 1) * 0.5:
        # Japanese writes Han with kana; Chinese has (almost) no kana.
        if kana >= 0.05 * (han + kana):
            return Language("ja", "Han" if han >= kana else "Hiragana", (han + kana) / letters)
        return Language("zh", "Han", han / letters)
    script = max(counts, key=lambda s: counts[s])
    share = counts[script] / letters
    if script == "Latin":
        return Language(_latin_language(sample), "Latin", share)
    code = dict(_SCRIPTS)[script]
    return Language(code, script, share)


#: Languages of whole texts by (length, hash): the text is not kept alive by the memo.
_LANGUAGES: SizedLRU[Language] = SizedLRU(64, 64)


def language_of(text: str) -> Language:
    """`detect_language`, remembered per text (the chunkers ask for every block of a document)."""
    return _LANGUAGES.get_or_make((len(text), hash(text)), lambda: detect_language(text), 1)


# -- sentences ----------------------------------------------------------------------------------------

#: Sentence ends our splitter cannot see: CJK stops (no space after them), the danda, Arabic "؟".
FOREIGN_STOPS_RE = regex.compile(r"[\u3002\uff01\uff1f\uff0e\u0964\u0965\u061f\u06d4]")


@lru_cache(maxsize=1)
def _sentencex() -> Callable[[str, str], list[str]] | None:
    try:
        from sentencex import segment
    except ImportError:  # an install without it keeps our splitter everywhere
        return None
    return segment


def segmenter_for(code: str) -> Callable[[str, str], list[str]] | None:
    """sentencex's `segment(language, text)` when it is installed and measured better for `code`."""
    return _sentencex() if code in SEGMENTER_LANGUAGES else None


def segment_language(text: str, start: int, end: int, document: Language) -> str | None:
    """The language whose segmenter should split text[start:end] ("" / None: our splitter).

    The document's language when it is one sentencex splits better; otherwise a paragraph holding
    stops our splitter cannot see (a Chinese paragraph in an English document) gets its own
    script's language."""
    if document.code in SEGMENTER_LANGUAGES:
        return document.code
    if FOREIGN_STOPS_RE.search(text, start, end) is None:
        return None
    local = detect_language(text[start:end])
    return local.code if local.code in SEGMENTER_LANGUAGES else None


def segment_spans(text: str, start: int, end: int, code: str) -> list[tuple[int, int]] | None:
    """Sentence spans of text[start:end] by sentencex for language `code` (untrimmed); None when
    sentencex is missing, not used for `code`, or its pieces do not line up with the text."""
    segment = segmenter_for(code)
    if segment is None:
        return None
    try:
        parts = segment(code, text[start:end])
    except Exception:  # noqa: BLE001  (a segmenter failure must not break chunking: ours takes over)
        return None
    return align_pieces(text, start, end, parts)


def align_pieces(text: str, start: int, end: int, parts: Iterable[str]) -> list[tuple[int, int]] | None:
    """Spans of `parts`, consecutive pieces of text[start:end], laid onto it in order with a moving
    cursor: each piece must start where the previous one ended (whitespace between them may have
    been left out, and is stepped over). Nothing is searched for; None when a piece does not fit
    there or text is left uncovered."""
    out: list[tuple[int, int]] = []
    pos = start
    for part in parts:
        if not part:
            continue
        if not text.startswith(part, pos, end):
            q = pos
            while q < end and text[q].isspace() and not text.startswith(part, q, end):
                q += 1
            if not text.startswith(part, q, end):
                return None
            pos = q
        out.append((pos, pos + len(part)))
        pos += len(part)
    if text[pos:end].strip():
        return None
    return out


__all__ = ["Language", "NAMES", "SEGMENTER_LANGUAGES", "UNDETERMINED", "detect_language", "language_of",
           "script_counts", "segment_language", "segment_spans", "segmenter_for", "align_pieces"]
