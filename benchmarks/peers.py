"""Side by side on the same text and settings, in one process: our `fixed_tokens` and `recursive`
against langchain-text-splitters, chonkie and semchunk. Ratios are peer time / our time (above
1.0x we are faster). "cold" includes our one-time tokenization of the document; "cached" is a
re-chunk after a slider move, which is what the window does (peers have no such cache).
Targets (issue 31), printed as ratios of the same run: `fixed_tokens` cold at most 2x tiktoken's
`encode_ordinary` of the same text (the floor for exact counts on one core), `recursive` cold at
least 1.0x the fastest peer, `markdown` cold with `fit_embedder` at most 4x `encode_ordinary`.

Cold is cold for everyone: chonkie's recursive chunker and semchunk memoize token counts per piece
of text (an lru_cache kept across calls), so a peer's cold call starts with its memo emptied, as
ours starts with our caches emptied; the peer reused with its memo kept is printed beside it
("memo kept"), and so is ours with its encode handed back at once (`_encode_free`: the floor a
memo of repeated text in our encode could reach). Three documents: `handbook x11`, the sample
handbook repeated to ~1 MB (headings numbered; every paragraph repeats, which a per-piece memo
answers from the second copy on), and `chroma`, Chroma's five public corpora joined (1.45 MB of
real text that does not repeat; benchmarks/data/chroma, MIT), and `sample handbook`, the sample
handbook itself (95 KB, the window's first document, no repeats). All three by default; `--doc
handbook|chroma|sample` runs one, `--doc both` the first two.

The calls a ratio compares are timed in rounds (ours, `encode_ordinary`, each peer, once a round;
`--repeat` rounds), and a ratio is the median of each round's ratio: this host's speed moves by
1.5x within minutes, and medians timed minutes apart made the ratios swing by as much.

    make bench   (or: .venv/bin/pip install -e '.[bench]' && .venv/bin/python benchmarks/peers.py)
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

from _common import HANDBOOK, big_markdown, chroma_text, forget_document_caches, p50, timeit

from inspector.core.chunking.registry import get_strategy
from inspector.core.documents.document import from_text
from inspector.core.text.tokens import ENCODING_NAME, encoding

SIZE, OVERLAP = 256, 32


def _ours(name: str, text: str, params: dict):
    strat = get_strategy(name)

    def cold():
        return strat(from_text(text, "big.md"), params)

    doc = from_text(text, "big.md")
    strat(doc, params)
    return (cold, forget_document_caches), (lambda: strat(doc, params))


def _nothing() -> None:
    pass


def _encode_free(cold: Callable[[], object], text: str) -> Callable[[], object]:
    """`cold` with the document's encode handed back at once (its tokens computed beforehand; the
    work meant to run beside it still runs): the floor that a memo of repeated text in the encode
    alone could bring our cold call down to. Why (issue 31): chonkie answers ten of the handbook
    x11's eleven copies of every paragraph from its memo; this says whether one in our encode
    could meet it."""
    from inspector.core.text import tokens

    real = tokens._encode_in_slices
    known = real(text)

    def oracle(t: str, odd=None, meanwhile=None, *, tail: bool = False):
        if t is not text:
            return real(t, odd, meanwhile, tail=tail)
        if meanwhile is not None:
            meanwhile()
        return known

    def call() -> object:
        tokens._encode_in_slices = oracle
        try:
            return cold()
        finally:
            tokens._encode_in_slices = real

    return call


def _peers(kind: str, text: str) -> dict[str, tuple[Callable[[], list], Callable[[], None]]]:
    """name -> (chunk the text, empty the peer's own memo of token counts before a cold call)."""
    enc = encoding()
    out: dict[str, tuple[Callable[[], list], Callable[[], None]]] = {}
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
        out["langchain"] = (lambda: lc.split_text(text), _nothing)
    except ImportError:
        pass
    try:
        import chonkie

        if kind == "fixed_tokens":
            ch = chonkie.TokenChunker(tokenizer=enc, chunk_size=SIZE, chunk_overlap=OVERLAP)
            out["chonkie"] = (lambda: ch.chunk(text), _nothing)
        else:
            ch = chonkie.RecursiveChunker(tokenizer=enc, chunk_size=SIZE)
            # Its per-piece count memo (functools.lru_cache on the class: cleared for every instance).
            memo = getattr(type(ch)._estimate_token_count, "cache_clear", _nothing)
            out["chonkie"] = (lambda: ch.chunk(text), memo)
    except Exception as exc:  # noqa: BLE001  (a peer's API drift should not stop the benchmark)
        print(f"  chonkie unavailable for {kind}: {exc}")
    if kind == "recursive":
        try:
            import semchunk
            from semchunk import semchunk as semchunk_module

            sc = semchunk.chunkerify(lambda s: len(enc.encode_ordinary(s)), SIZE)

            def forget() -> None:  # the memoized counters semchunk keeps for the process
                for f in getattr(semchunk_module, "_memoized_token_counters", {}).values():
                    getattr(f, "cache_clear", _nothing)()

            out["semchunk"] = (lambda: sc(text, offsets=True)[0], forget)
        except ImportError:
            pass
    return out


def _rounds(calls: dict[str, tuple[Callable[[], object], Callable[[], None]]], repeat: int
            ) -> dict[str, list[float]]:
    """Milliseconds of each call, `repeat` rounds, every call once a round after its `forget` (not
    timed): the figures a ratio compares are taken moments apart, not minutes (this host's speed
    moves by 1.5x within a run, which made ratios of separately timed medians swing)."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, (fn, forget) in calls.items():
            forget()
            times[name].append(timeit(fn, repeat=1)[0])
    return times


def _reopened(cold: Callable[[], object], text: str, repeat: int) -> str:
    """Median ms of the first chunking of a document whose token index, structure and word
    pieces are on disk (`keptfiles`) but nothing is in memory: a document opened again in a new
    session."""
    from inspector.core.runtime import keptfiles

    if not keptfiles.wanted(len(text)):
        return f"not kept (under {keptfiles.PERSIST_AT_LEAST:,} characters, or ${keptfiles.ENV_VAR} off)"
    forget_document_caches()
    cold()  # hands its files to the writer thread
    keptfiles.flush()
    times = _rounds({"again": (cold, lambda: forget_document_caches(disk=False))}, repeat)
    forget_document_caches()
    return f"{p50(times['again']):.0f} ms"


def _ratio(num: list[float], den: list[float]) -> float:
    """Median of the per-round ratios num / den."""
    return p50([a / b for a, b in zip(num, den, strict=True)])


def _documents(which: str) -> dict[str, str]:
    docs = {}
    if which in ("sample", "all"):
        docs["sample handbook"] = HANDBOOK.read_text(encoding="utf-8")
    if which in ("both", "handbook", "all"):
        docs["handbook x11"] = big_markdown()
    if which in ("both", "chroma", "all"):
        docs["chroma"] = chroma_text()
    return docs


def run(name: str, text: str, repeat: int) -> None:
    print(f"\n== {name}: {len(text.encode()) / 1e6:.2f} MB; size {SIZE}, overlap {OVERLAP} (fixed_tokens), "
          f"0 (recursive); {repeat} rounds, medians (ratios: the median of each round's ratio)")
    enc = encoding()
    encode = (lambda: enc.encode_ordinary(text), _nothing)
    for ours_name, params in (("fixed_tokens", {"size": SIZE, "overlap": OVERLAP}),
                              ("recursive", {"size": SIZE, "overlap": 0})):
        cold, cached = _ours(ours_name, text, params)
        peers = _peers(ours_name, text)
        free = {"free": (_encode_free(cold[0], text), cold[1])} if ours_name == "recursive" else {}
        times = _rounds({"ours": cold, "encode": encode, **free,
                         **{peer: (fn, forget) for peer, (fn, forget) in peers.items()}}, repeat)
        t_cold, t_enc = p50(times["ours"]), p50(times["encode"])
        t_cached = p50(timeit(cached, repeat=5))
        target = " (target <= 2x)" if ours_name == "fixed_tokens" else ""
        print(f"\n{ours_name}: ours cold {t_cold:.0f} ms, cached {t_cached:.0f} ms; encode_ordinary {t_enc:.0f} ms, "
              f"cold / encode_ordinary {_ratio(times['ours'], times['encode']):.2f}x{target}")
        # The outline is scanned again (no parse is kept by these strategies; issue 31, stop 46).
        print(f"  ours opened again (token index read from disk, outline scanned): {_reopened(cold[0], text, repeat)}")
        best: tuple[float, str] | None = None
        for peer, (fn, forget) in peers.items():
            t = p50(times[peer])
            n = len(fn())  # type: ignore[arg-type]
            ratio = _ratio(times[peer], times["ours"])
            best = (ratio, peer) if best is None or ratio < best[0] else best
            kept = ""
            if forget is not _nothing:
                t_kept = p50(timeit(fn, repeat=3))
                kept = f"  (memo kept: {t_kept:.0f} ms, {t_kept / t_cold:.2f}x)"
            print(f"  {peer:<10} {t:>8.0f} ms  {n:>6} chunks  ratio cold {ratio:5.2f}x  "
                  f"cached {t / t_cached:6.2f}x{kept}")
        if best is not None:
            print(f"  vs fastest peer ({best[1]}): cold {best[0]:.2f}x"
                  + (" (target cold >= 1.0x)" if ours_name == "recursive" else ""))
        if free and best is not None:
            print(f"  ours with the encode free (its tokens handed back: the floor of a memo in the encode): "
                  f"{p50(times['free']):.0f} ms, {best[1]} / it {_ratio(times[best[1]], times['free']):.2f}x")
    md = get_strategy("markdown")
    cold, cached = _ours("markdown", text, {p.name: p.default for p in md.params})
    times = _rounds({"ours": cold, "encode": encode}, repeat)
    t_cached = p50(timeit(cached, repeat=5))
    print(f"\nmarkdown (fit_embedder on, defaults): ours cold {p50(times['ours']):.0f} ms, cached {t_cached:.0f} ms; "
          f"encode_ordinary {p50(times['encode']):.0f} ms, cold / encode_ordinary "
          f"{_ratio(times['ours'], times['encode']):.2f}x (target <= 4x)")
    print(f"  ours opened again (token index, structure and word pieces read from disk): "
          f"{_reopened(cold[0], text, repeat)}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--doc", choices=("both", "handbook", "chroma", "sample", "all"), default="all",
                    help="all (default): the three; both: handbook x11 and chroma; sample: the sample handbook itself")
    ap.add_argument("--repeat", type=int, default=5, help="rounds of timed calls (each call once a round)")
    args = ap.parse_args()
    for name, text in _documents(args.doc).items():
        run(name, text, args.repeat)


if __name__ == "__main__":
    main()
