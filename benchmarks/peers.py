"""Side by side on the same text and settings, in one process: our `fixed_tokens` and `recursive`
against langchain-text-splitters, chonkie and semchunk. Ratios are peer time / our time (above
1.0x we are faster). "cold" includes our one-time tokenization of the document; "cached" is a
re-chunk after a slider move, which is what the window does (peers have no such cache).
Targets (issue 31), printed as ratios of the same run: `fixed_tokens` cold at most 2x tiktoken's
`encode_ordinary` of the same text (the floor for exact counts on one core), `recursive` cold at
least 1.0x the fastest peer, `markdown` cold with `fit_embedder` at most 4x `encode_ordinary`.

    make bench   (or: .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/peers.py)
"""

from __future__ import annotations

from _common import big_markdown, p50, timeit

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text import structure, tokens, wordpieces
from inspector.core.text.tokens import ENCODING_NAME, encoding

SIZE, OVERLAP = 256, 32


def _ours(name: str, text: str, params: dict):
    strat = get_strategy(name)

    def cold():
        tokens._INDEXES.clear()
        structure._STRUCTURES.clear()
        wordpieces._INDEXES.clear()
        return strat(from_text(text, "big.md"), params)

    doc = from_text(text, "big.md")
    strat(doc, params)
    return cold, (lambda: strat(doc, params))


def _peers(kind: str, text: str) -> dict:
    enc = encoding()
    out = {}
    try:
        from langchain_text_splitters import (
            RecursiveCharacterTextSplitter,
            TokenTextSplitter,
        )

        if kind == "fixed_tokens":
            lc = TokenTextSplitter(encoding_name=ENCODING_NAME, chunk_size=SIZE, chunk_overlap=OVERLAP)
        else:
            lc = RecursiveCharacterTextSplitter(
                chunk_size=SIZE, chunk_overlap=0, separators=[r"\n\n", r"\n", r"(?<=[.!?])\s+", " ", ""],
                is_separator_regex=True, keep_separator=True,
                length_function=lambda s: len(enc.encode_ordinary(s)))
        out["langchain"] = lambda: lc.split_text(text)
    except ImportError:
        pass
    try:
        import chonkie

        if kind == "fixed_tokens":
            ch = chonkie.TokenChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
        else:
            ch = chonkie.RecursiveChunker(tokenizer=enc, chunk_size=SIZE)
        out["chonkie"] = lambda: ch.chunk(text)
    except Exception as exc:  # noqa: BLE001  (a peer's API drift should not stop the benchmark)
        print(f"  chonkie unavailable for {kind}: {exc}")
    if kind == "recursive":
        try:
            import semchunk

            sc = semchunk.chunkerify(lambda s: len(enc.encode_ordinary(s)), SIZE)
            out["semchunk"] = lambda: sc(text, offsets=True)[0]
        except ImportError:
            pass
    return out


def _encode_ms(text: str) -> float:
    enc = encoding()
    return p50(timeit(lambda: enc.encode_ordinary(text), repeat=3))


def main() -> None:
    text = big_markdown()
    print(f"document: {len(text.encode()) / 1e6:.2f} MB; size {SIZE}, overlap {OVERLAP} (fixed_tokens), 0 (recursive)")
    for ours_name, params in (("fixed_tokens", {"size": SIZE, "overlap": OVERLAP}),
                              ("recursive", {"size": SIZE, "overlap": 0})):
        cold, cached = _ours(ours_name, text, params)
        t_cold = p50(timeit(cold, repeat=3))
        t_cached = p50(timeit(cached, repeat=5))
        t_enc = _encode_ms(text)
        target = " (target <= 2x)" if ours_name == "fixed_tokens" else ""
        print(f"\n{ours_name}: ours cold {t_cold:.0f} ms, cached {t_cached:.0f} ms; encode_ordinary {t_enc:.0f} ms, "
              f"cold / encode_ordinary {t_cold / t_enc:.2f}x{target}")
        peers = _peers(ours_name, text)
        best = None
        for peer, fn in peers.items():
            t = p50(timeit(fn, repeat=3))
            n = len(fn())
            best = t if best is None else min(best, t)
            print(f"  {peer:<10} {t:>8.0f} ms  {n:>6} chunks  ratio cold {t / t_cold:5.2f}x  "
                  f"cached {t / t_cached:6.2f}x")
        if best is not None:
            print(f"  vs fastest peer: cold {best / t_cold:.2f}x, cached {best / t_cached:.2f}x"
                  + (" (target cold >= 1.0x)" if ours_name == "recursive" else ""))
    md = get_strategy("markdown")
    cold, cached = _ours("markdown", text, {p.name: p.default for p in md.params})
    t_cold = p50(timeit(cold, repeat=3))
    t_cached = p50(timeit(cached, repeat=5))
    t_enc = _encode_ms(text)
    print(f"\nmarkdown (fit_embedder on, defaults): ours cold {t_cold:.0f} ms, cached {t_cached:.0f} ms; "
          f"encode_ordinary {t_enc:.0f} ms, cold / encode_ordinary {t_cold / t_enc:.2f}x (target <= 4x)")


if __name__ == "__main__":
    main()
