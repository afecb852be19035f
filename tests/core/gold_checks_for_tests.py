"""Checks shared by the gold files whose questions are paraphrases (issue 29): the public set's
`<name>.paraphrase.gold.jsonl` (tests/core/test_public_paraphrase.py) and the held-out set's
`<name>.gold.jsonl` (tests/core/test_heldout_data.py); the folder check is the public set's too.
Model-free: the project's own loader, the structure parser and `benchmarks/overlap.py` (its split
rule and word overlap), nothing else."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from inspector.core.documents.document import Document, load_document
from inspector.core.evaluation.gold import load_gold, normalize, normalized_text
from inspector.core.text.structure import structure_of

ROOT = Path(__file__).resolve().parents[2]

_spec = importlib.util.spec_from_file_location("bench_overlap", ROOT / "benchmarks" / "overlap.py")
assert _spec is not None and _spec.loader is not None
overlap_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(overlap_mod)


def check_folder(folder: Path, name: str, min_kb: float, max_kb: float) -> None:
    """A set's folder holds its document, gold file, LICENSE and PROVENANCE.md, none empty, and the
    document's size is within [min_kb, max_kb]."""
    for file in (f"{name}.md", f"{name}.gold.jsonl", "LICENSE", "PROVENANCE.md"):
        assert (folder / file).is_file(), f"{name}: {file} missing"
        assert (folder / file).stat().st_size > 0, f"{name}: {file} is empty"
    size_kb = (folder / f"{name}.md").stat().st_size / 1024
    assert min_kb <= size_kb <= max_kb, f"{name}.md is {size_kb:.1f} KB"


def records(path: Path) -> list[dict]:
    """A gold file's lines as dicts (every key, `split`, `where` and `overlap` included)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def where_of(doc: Document, answer: str) -> str:
    """The kind of top-level block that holds the answer's first occurrence, as the app's structure
    parser sees it ("prose" for a paragraph)."""
    start = normalized_text(doc).find_all(normalize(answer))[0][0]
    kind = next((b.kind for b in structure_of(doc).blocks if b.start <= start < b.end), "paragraph")
    return {"paragraph": "prose"}.get(kind, kind)


def check_paraphrase_gold(name: str, doc_path: Path, gold_path: Path, min_questions: int = 20) -> list[dict]:
    """Assert the rules of a paraphrased gold file and return its records: it loads with no
    warning; at least `min_questions` distinct questions; each answer 1 to 10 words, found exactly
    once in the document after the loader's normalization and not inside its question; `source`
    is the document's file name; `split` follows the fixed rule (`overlap.split_of`) and the halves
    differ by at most one; `overlap` is what `overlap.overlap` computes, rounded to 3; `where` is
    what the structure parser says."""
    doc = load_document(doc_path)
    gold = load_gold(gold_path, [doc])
    assert gold.warnings == (), [w.one_line() for w in gold.warnings]
    assert len(gold) >= min_questions, f"{gold_path.name}: {len(gold)} questions"
    recs = records(gold_path)
    questions = [r["question"] for r in recs]
    assert len(set(questions)) == len(questions), "duplicate question"
    norm = normalized_text(doc)
    rule = overlap_mod.split_of(name, questions)
    for r in recs:
        answer = normalize(r["answer"])
        assert 1 <= len(answer.split()) <= 10, r["answer"]
        assert len(norm.find_all(answer)) == 1, f"{r['answer']!r} not once in {doc_path.name}"
        assert answer not in normalize(r["question"]), r["question"]
        assert r["source"] == doc_path.name
        assert r["split"] == rule[r["question"]], r["question"]
        assert r["overlap"] == round(overlap_mod.overlap(r["question"], doc.text, r["answer"]), 3), r["question"]
        assert r["where"] == where_of(doc, r["answer"]), r["question"]
    tune = sum(r["split"] == "tune" for r in recs)
    assert abs(2 * tune - len(recs)) <= 1
    return recs
