"""Word overlap of a question with its answer's surroundings (issue 29).

How much of a question could a word-matching retriever (BM25) find near the answer? For each gold
question: the share of the question's content words (lower-cased runs of letters and digits, minus
a fixed list of English function words, a final "s" dropped so "days" meets "day") that occur
within `WINDOW` characters either side of the answer's first occurrence in the document (matched
the way the gold loader matches: case and whitespace normalized). 1.0: every content word of the
question sits next to the answer (the question quotes the text); 0.0: none does (a paraphrase).

    .venv/bin/python benchmarks/overlap.py                 # mean overlap per gold file of the public set
    .venv/bin/python benchmarks/overlap.py --write FILE.jsonl DOC.md   # fill split/where/overlap

Only the public set's `<name>.paraphrase.gold.jsonl` files carry the value (`overlap`); for the
other sets it is computed when a benchmark reports it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from pathlib import Path

WINDOW = 300

#: Function words that carry no topic: a question's wording ("how", "many", "do", "I") is not
#: evidence of overlap. Fixed list, written before any overlap was measured.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further get gets got
had has have having he her here hers him his how i if in into is it its itself just me more most my
no nor not of off on once only or other our ours out over own same she should so some such than that
the their theirs them then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself ever also may
much many must need needs one ones per s t am anything something someone anyone us let lets what's
""".split())

_WORD = re.compile(r"[a-z0-9]+")


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def content_words(text: str) -> list[str]:
    """The content words of `text`, in order, stemmed (see the module's docstring)."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in STOPWORDS]


def _normalize(text: str) -> str:
    return " ".join(text.lower().split())


def answer_window(doc_text: str, answer: str, window: int = WINDOW) -> str | None:
    """The text within `window` characters either side of the answer's first occurrence (case and
    whitespace normalized), or None when the answer is not in the document."""
    norm = _normalize(doc_text)
    at = norm.find(_normalize(answer))
    if at < 0:
        return None
    return norm[max(0, at - window): at + len(_normalize(answer)) + window]


def overlap(question: str, doc_text: str, answer: str, window: int = WINDOW) -> float | None:
    """Share of the question's content words found within `window` characters of the answer.
    None when the answer is not in the document or the question has no content word."""
    near = answer_window(doc_text, answer, window)
    words = content_words(question)
    if near is None or not words:
        return None
    there = set(content_words(near))
    return sum(w in there for w in words) / len(words)


def overlap_span(question: str, doc_text: str, start: int, end: int, window: int = WINDOW) -> float | None:
    """`overlap` for a question whose answer is a reference span (Chroma's questions): the share of
    its content words within `window` characters of doc_text[start:end] (the passage's own words
    included, as an answer's are)."""
    words = content_words(question)
    if not words:
        return None
    there = set(content_words(doc_text[max(0, start - window): end + window]))
    return sum(w in there for w in words) / len(words)


def split_of(name: str, questions: list[str]) -> dict[str, str]:
    """The public set's split rule (its README): rank by sha256("<name>:<question>"), the first
    floor(n/2) are "test", the rest "tune"."""
    order = sorted(questions, key=lambda q: hashlib.sha256(f"{name}:{q}".encode()).hexdigest())
    test = set(order[: len(order) // 2])
    return {q: "test" if q in test else "tune" for q in questions}


def _where(doc_path: Path, answer: str) -> str:
    from inspector.core.documents.document import load_document
    from inspector.core.evaluation.gold import normalize, normalized_text
    from inspector.core.text.structure import structure_of

    doc = load_document(doc_path)
    start = normalized_text(doc).find_all(normalize(answer))[0][0]
    kind = next((b.kind for b in structure_of(doc).blocks if b.start <= start < b.end), "paragraph")
    return {"paragraph": "prose"}.get(kind, kind)


def write(gold: Path, doc_path: Path) -> None:
    """Fill `split`, `where` and `overlap` of a gold file's lines from its question and answer."""
    recs = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines() if line.strip()]
    name = doc_path.stem
    text = doc_path.read_text(encoding="utf-8")
    splits = split_of(name, [r["question"] for r in recs])
    out = []
    for r in recs:
        value = overlap(r["question"], text, r["answer"])
        if value is None:
            raise SystemExit(f"{gold}: answer {r['answer']!r} not in {doc_path.name}")
        out.append({"question": r["question"], "answer": r["answer"], "source": doc_path.name,
                    "split": splits[r["question"]], "where": _where(doc_path, r["answer"]),
                    "overlap": round(value, 3)})
    from inspector.core.runtime.atomic import atomic_write_text

    atomic_write_text(gold, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--write", nargs=2, metavar=("GOLD", "DOC"))
    args = p.parse_args(argv)
    if args.write:
        write(Path(args.write[0]), Path(args.write[1]))
        return 0
    from _common import ROOT

    public = ROOT / "benchmarks" / "data" / "public"
    print("| document | gold file | questions | mean overlap | share < 0.5 |")
    print("|---|---|---|---|---|")
    for folder in sorted(p for p in public.iterdir() if p.is_dir()):
        text = (folder / f"{folder.name}.md").read_text(encoding="utf-8")
        for gold in sorted(folder.glob("*.gold.jsonl")):
            recs = [json.loads(x) for x in gold.read_text(encoding="utf-8").splitlines() if x.strip()]
            vals = [v for r in recs if (v := overlap(r["question"], text, r["answer"])) is not None]
            if vals:
                mean = sum(vals) / len(vals)
                low = sum(v < 0.5 for v in vals) / len(vals)
                print(f"| `{folder.name}` | {gold.name} | {len(vals)} | {mean:.2f} | {low:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
