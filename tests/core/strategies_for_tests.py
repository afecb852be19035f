"""Hypothesis generators of Markdown-like and plain text for chunker property tests."""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ["leave", "Germany", "France", "months", "weeks", "the", "a", "policy", "14", "refund",
         "tier", "café", "naïve", "🚀", "中文", "e\u0301", "Elterngeld", "x", "ok", "—", "don't"]

word = st.sampled_from(WORDS) | st.text(alphabet=st.characters(codec="utf-8",
                                                              exclude_categories=("Cs", "Zl", "Zp", "Cc")),
                                       min_size=1, max_size=8)
sentence = st.builds(lambda ws, end: " ".join(ws) + end,
                     st.lists(word, min_size=1, max_size=12), st.sampled_from([".", "!", "?", "", ":"]))
paragraph = st.builds(" ".join, st.lists(sentence, min_size=1, max_size=5))
heading = st.builds(lambda lvl, ws: "#" * lvl + " " + " ".join(ws), st.integers(1, 4),
                    st.lists(st.sampled_from(WORDS[:10]), min_size=1, max_size=3))
table = st.builds(lambda rows: "| a | b |\n|---|---|\n" + "\n".join(f"| {r} | {i} |" for i, r in enumerate(rows)),
                  st.lists(st.sampled_from(WORDS), min_size=1, max_size=12))
bullets = st.builds(lambda items: "\n".join(f"- {i}" for i in items), st.lists(sentence, min_size=1, max_size=6))
code = st.builds(lambda lines: "```\n" + "\n".join(lines) + "\n```", st.lists(sentence, min_size=0, max_size=5))
block = st.one_of(paragraph, heading, table, bullets, code, st.just("> quoted text here."),
                  st.just("---\ntitle: T\n---"), st.just("   "), st.just("<div>html</div>"))
separator = st.sampled_from(["\n\n", "\n", "\n\n\n", " \n\n", "\n \n"])
markdown_text = st.builds(lambda bs, seps: "".join(b + s for b, s in zip(bs, seps, strict=False)),
                          st.lists(block, min_size=0, max_size=14), st.lists(separator, min_size=14, max_size=14))
any_text = markdown_text | st.text(max_size=400)
