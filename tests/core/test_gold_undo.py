"""Undoing a question added to a gold file: its line removed, or the line it updated put back, in one
atomic write that keeps every other line byte for byte."""

from __future__ import annotations

import json

from inspector.core.evaluation.gold import GoldQuestion, add_questions, question_line, remove_question

OLD = ('{"question": "Q1?", "answer": "a1"}\n'
       'not json, kept as it is\n'
       '{"question": "Q2?", "answer": "a2", "source": "d.md", "note": "mine"}\n')


def test_undo_an_append(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(OLD, encoding="utf-8")
    q = GoldQuestion("Q3?", answers=("a3",), source="d.md", references=((4, 6),))
    assert question_line(p, q) is None
    assert add_questions(p, [q]) == ("added",)
    assert json.loads(p.read_text(encoding="utf-8").splitlines()[-1])["references"] == [{"start": 4, "end": 6}]
    assert remove_question(p, q)
    assert p.read_text(encoding="utf-8") == OLD
    assert not remove_question(p, q)  # nothing holds it any more


def test_undo_an_update_restores_the_line(tmp_path):
    p = tmp_path / "g.jsonl"
    p.write_text(OLD, encoding="utf-8")
    q = GoldQuestion("q2?", answers=("another",), source="d.md", references=((1, 2),))
    before = question_line(p, q)
    assert before == OLD.splitlines()[2]
    assert add_questions(p, [q]) == ("updated",)
    assert json.loads(p.read_text(encoding="utf-8").splitlines()[2])["answer"] == ["a2", "another"]
    assert remove_question(p, q, restore=before)
    assert p.read_text(encoding="utf-8") == OLD


def test_missing_file(tmp_path):
    q = GoldQuestion("Q?", answers=("a",))
    assert question_line(tmp_path / "none.jsonl", q) is None
    assert not remove_question(tmp_path / "none.jsonl", q)
    assert not (tmp_path / "none.jsonl").exists()
