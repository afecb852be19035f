"""Other languages: detection, sentence boundaries by sentencex (spans exact), word pieces and
cl100k tokens counted right for non-Latin scripts."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from inspector.core.documents.document import from_text
from inspector.core.text import language as lang_mod
from inspector.core.text.language import align_pieces, detect_language, language_of
from inspector.core.text.structure import sentence_spans

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "languages"
LANGS = ("en", "de", "fr", "zh", "ja", "ar", "hi")


def sample(lang: str) -> tuple[str, list[tuple[int, int]]]:
    """A sample document (sentences joined as the language writes them) and its sentence spans."""
    paras = [p.split("\n") for p in (SAMPLES / f"{lang}.txt").read_text(encoding="utf-8").strip().split("\n\n")]
    joiner = "" if lang in ("zh", "ja") else " "
    text, spans = "", []
    for i, para in enumerate(paras):
        if i:
            text += "\n\n"
        for j, s in enumerate(para):
            if j:
                text += joiner
            spans.append((len(text), len(text) + len(s)))
            text += s
    return text, spans


# -- detection -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_each_sample_is_detected(lang):
    text, _ = sample(lang)
    found = detect_language(text)
    assert found.code == lang
    assert found.share > 0.5
    assert found.name and found.name != "undetermined"


def test_detection_of_the_handbook_and_of_text_without_letters():
    handbook = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    assert detect_language(handbook).english
    assert detect_language("").code == "und"
    assert detect_language("1234 5678 -- 42").code == "und"
    assert detect_language("第一文です。第二文です。").code == "ja"
    assert detect_language("这是第一句。这是第二句。").code == "zh"


#: An English note with classic-Mac line ends (a lone CR each), heavy in "a" and "as" (issue 26:
#: announced as "Portuguese text").
CR_NOTE = ("Meeting notes\r\rA quick summary of what we agreed on Monday.\r"
           "We ship the app as soon as possible, as a beta.\r"
           "Next steps: a review, a test pass, a release.\r")

#: Short paragraphs of the Latin-script languages told apart by function words.
LATIN = {
    "pt": "O contrato define que os funcionários têm direito a vinte e dois dias de férias por ano. A empresa "
          "paga o subsídio em junho, e os dias que não forem usados passam para o ano seguinte.",
    "es": "El permiso de maternidad dura dieciséis semanas y la empresa paga el salario completo durante ese "
          "tiempo. Los empleados que trabajan a tiempo parcial reciben la parte proporcional.",
    "it": "Il congedo parentale è di dieci mesi e la domanda si presenta all'ufficio del personale. I dipendenti "
          "che lavorano a tempo parziale hanno diritto a una parte del congedo.",
    "nl": "Het ouderschapsverlof duurt negen weken en de werkgever betaalt een deel van het salaris. "
          "Medewerkers die parttime werken hebben ook recht op verlof, en de aanvraag gaat via het portaal.",
}


def test_an_english_file_with_cr_line_ends_is_english(tmp_path):
    """The CRs are not what misled (every load turns them into newlines, and detection splits
    words on letters): the English "a" and "as" counted for Portuguese. They count for English
    alone now; the other languages are still told apart."""
    from inspector.core.documents.document import load_document
    from inspector.core.text.model_fit import model_fit

    path = tmp_path / "notes.txt"
    path.write_bytes(CR_NOTE.encode("utf-8"))
    doc = load_document(path)
    assert "\r" not in doc.text and doc.text.count("\n") == CR_NOTE.count("\r")
    assert detect_language(doc.text).code == "en"
    assert detect_language(CR_NOTE).code == "en"  # the raw text too
    assert model_fit(doc.text).note() == ""  # no "Portuguese text" in the status bar
    for code, text in LATIN.items():
        assert detect_language(text).code == code, code


def test_detection_samples_long_texts_and_is_remembered():
    text, _ = sample("de")
    long = "\n\n".join([text] * 200)
    assert detect_language(long).code == "de"
    assert language_of(long) is language_of(long)


# -- sentences -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGS)
def test_every_sentence_end_is_found_and_spans_are_exact(lang):
    text, gold = sample(lang)
    spans = sentence_spans(text)
    ends = {b for _a, b in spans}
    assert {b for _a, b in gold} <= ends, "a known sentence end was missed"
    exact = len(set(spans) & set(gold)) / len(gold)
    assert exact >= 0.85
    prev = 0
    for a, b in spans:
        assert prev <= a < b <= len(text)
        assert text[a:b] == text[a:b].strip()
        prev = b


@pytest.mark.parametrize("lang", ["zh", "ar", "en"])
def test_languages_split_perfectly_on_their_samples(lang):
    text, gold = sample(lang)
    assert sentence_spans(text) == gold


def test_cjk_without_spaces_is_split():
    text = "第一文です。第二文です。"
    assert [text[a:b] for a, b in sentence_spans(text)] == ["第一文です。", "第二文です。"]
    zh = "这是第一句。这是第二句！第三句？"
    assert [zh[a:b] for a, b in sentence_spans(zh)] == ["这是第一句。", "这是第二句！", "第三句？"]


def test_danda_and_arabic_question_mark_end_sentences():
    hi = "यह पहला वाक्य है। यह दूसरा है।"
    assert [hi[a:b] for a, b in sentence_spans(hi)] == ["यह पहला वाक्य है।", "यह दूसरा है।"]
    ar = "كم مدة الإجازة؟ ستة عشر أسبوعا."
    assert [ar[a:b] for a, b in sentence_spans(ar)] == ["كم مدة الإجازة؟", "ستة عشر أسبوعا."]


def test_german_ordinals_and_abbreviations_are_not_sentence_ends():
    text = "Dr. Müller kam am 1. März. Sie prüft z. B. Anträge."
    # Too few words to tell German by its function words: the language is given.
    assert [text[a:b] for a, b in sentence_spans(text, language="de")] == [
        "Dr. Müller kam am 1. März.", "Sie prüft z. B. Anträge."]


def test_a_chinese_paragraph_in_an_english_document_is_split():
    text = "An English paragraph. It has two sentences.\n\n这是第一句。这是第二句。"
    parts = [text[a:b] for a, b in sentence_spans(text)]
    assert parts == ["An English paragraph.", "It has two sentences.", "这是第一句。", "这是第二句。"]


def test_english_keeps_its_own_rule():
    text = "Dr. Smith arrived. He said e.g. hello! Was it 3.5 km? Yes.\n\nNew para."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Dr. Smith arrived.", "He said e.g. hello!", "Was it 3.5 km?", "Yes.", "New para."]


def test_without_sentencex_our_rule_answers(monkeypatch):
    monkeypatch.setattr(lang_mod, "_sentencex", lambda: None)
    text = "第一文です。第二文です。\n\nDas ist gut. Ja."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["第一文です。第二文です。", "Das ist gut.", "Ja."]


def test_pieces_that_do_not_line_up_fall_back_to_our_rule(monkeypatch):
    # A segmenter that rewrites its input (here: full-width stops made ASCII) cannot be laid onto
    # the text; the paragraph is split by our rule instead, and spans stay in the text.
    monkeypatch.setattr(lang_mod, "_sentencex", lambda: lambda code, t: [p.replace("。", ".") for p in t.split("。")])
    text = "第一文です。第二文です。"
    assert sentence_spans(text) == [(0, len(text))]


def test_align_pieces_walks_forward_and_never_searches():
    text = "A. A. A."
    assert align_pieces(text, 0, len(text), ["A. ", "A. ", "A."]) == [(0, 3), (3, 6), (6, 8)]
    # Whitespace left out between pieces is stepped over.
    assert align_pieces(text, 0, len(text), ["A.", "A.", "A."]) == [(0, 2), (3, 5), (6, 8)]
    # A piece that is not where the cursor is is not looked for further on.
    assert align_pieces("x. A. B.", 0, 8, ["A.", "B."]) is None
    # Text left uncovered: None.
    assert align_pieces(text, 0, len(text), ["A. ", "A."]) is None
    # Offsets are relative to the whole text.
    assert align_pieces("zz" + text, 2, 10, ["A. ", "A. ", "A."]) == [(2, 5), (5, 8), (8, 10)]


scripts = st.sampled_from(["第一文です。", "这是一句。", "यह वाक्य है। ", "هل هذا؟ ", "Satz. ", "z. B. ", "\n\n",
                           "\n", " ", "。", "!", "“", "”"])


@given(st.lists(scripts, max_size=30))
def test_spans_stay_in_order_and_inside_the_text_on_mixed_scripts(parts):
    text = "".join(parts)
    prev = 0
    for a, b in sentence_spans(text, markdown=True):
        assert prev <= a < b <= len(text)
        assert not text[a:b].isspace()
        prev = b


# -- word pieces and tokens for non-Latin scripts --------------------------------------------------------

def _doc(lang: str, copies: int = 8):
    text, _ = sample(lang)
    return from_text("\n\n".join([text] * copies), f"{lang}.txt")


@pytest.mark.parametrize("lang", ["zh", "ja", "ar", "hi"])
@given(data=st.data())
def test_word_pieces_of_any_span_equal_the_tokenizer_on_it(lang, data):
    from inspector.core.text.wordpieces import count_text, wordpiece_index

    doc = _doc(lang)
    idx = wordpiece_index(doc)
    n = len(doc.text)
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a, min(n, a + 600)))
    assert idx.count(a, b) == count_text(doc.text[a:b])


@pytest.mark.parametrize("lang", ["zh", "ja", "ar", "hi"])
def test_the_embedders_limit_falls_where_the_tokenizer_stops(lang):
    from inspector.core.chunking.annotate import annotate
    from inspector.core.chunking.registry import get_strategy
    from inspector.core.text.wordpieces import tokenizer

    doc = _doc(lang)
    chunks = get_strategy("fixed_chars")(doc, {"size": 600, "overlap": 40})
    limit = 64
    truncated = 0
    for c in annotate(doc, chunks, with_prefix=False, limit=limit):
        enc = tokenizer().encode(doc.text[c.start:c.end], add_special_tokens=True)
        assert c.embed_tokens == len(enc.ids)
        assert c.embed_dropped == max(0, len(enc.ids) - limit)
        if c.embed_dropped:
            truncated += 1
            # offsets[limit - 2] is the last piece read ([CLS] sits at 0, [SEP] takes the last place).
            assert c.truncated_at == c.start + enc.offsets[limit - 2][1]
    assert truncated > 0


@pytest.mark.parametrize("lang", ["zh", "ja", "ar", "hi"])
@given(data=st.data())
def test_cl100k_counts_of_any_span_are_exact(lang, data):
    from inspector.core.text.tokens import count_text, token_index

    doc = _doc(lang, copies=4)
    idx = token_index(doc)
    n = len(doc.text)
    a = data.draw(st.integers(0, n - 1))
    b = data.draw(st.integers(a, min(n, a + 500)))
    assert idx.count(a, b) == count_text(doc.text[a:b])


def test_sentences_strategy_cuts_japanese_at_full_stops():
    from inspector.core.chunking.registry import get_strategy

    text, gold = sample("ja")
    doc = from_text(text, "ja.txt")
    chunks = get_strategy("sentences")(doc, {"size": 40, "overlap": 0})
    ends = {b for _a, b in gold}
    assert len(chunks) > 3
    assert all(c.end in ends for c in chunks), "every chunk ends at a sentence end"


# -- the bundled model's fit ---------------------------------------------------------------------------

def test_model_fit_names_the_language_and_the_unknown_pieces():
    from inspector.core.text.model_fit import MULTILINGUAL_MODEL, model_fit, unknown_share

    handbook = (Path(__file__).resolve().parents[2] / "sample_docs" / "handbook.md").read_text(encoding="utf-8")
    fit = model_fit(handbook)
    assert not fit.poor and fit.note() == "" and fit.unknown_share == 0.0
    zh = model_fit(sample("zh")[0])
    assert zh.poor and zh.unknown_share > 0.3  # most Chinese characters have no piece of their own
    note = zh.note()
    assert "Chinese" in note and MULTILINGUAL_MODEL in note and "unknown" in note
    de = model_fit(sample("de")[0])
    assert de.poor and "German" in de.note() and "unknown" not in de.note()
    assert unknown_share("第") == (1.0, 1)  # a character the vocabulary lacks
    assert unknown_share("文") == (0.0, 1)
    assert unknown_share("") == (0.0, 0)
