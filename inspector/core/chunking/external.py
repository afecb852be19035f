"""Bring your own splitter: any callable, LangChain splitter, entry point or `.py` file becomes a strategy.

A foreign splitter returns pieces of text (or spans). Strings are put back onto the document by
`align_chunks`, in order, with a moving cursor and whitespace-insensitive matching, so the chunks
stay spans of `Document.text` (STYLE.md lesson 1) and go through `SpanContext.make` like every
built-in strategy: token counts, heading paths, prefixes and flags are real.

A piece that cannot be placed is never dropped silently. Because a strategy must return exactly
`tuple[Chunk, ...]`, the pieces left out are kept in an alignment report per (strategy, document):
`last_alignment_report(name, doc_id)` returns it, for the window to show beside the chunk table
and the CLI to print as warnings.
"""

from __future__ import annotations

import bisect
import hashlib
import importlib.util
import inspect
import re
import sys
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.chunking.chunk import Chunk
from inspector.core.chunking.params import Param, Strategy
from inspector.core.chunking.registry import register_strategy, strategies, unregister
from inspector.core.documents.document import Document
from inspector.core.errors import InputError
from inspector.core.runtime.lru import SizedLRU

#: The entry-point group packages use to contribute strategies (`load_entry_point_strategies`).
ENTRY_POINT_GROUP = "chunk_inspector.strategies"

#: The module-level name `load_strategy_file` reads: `{"name": callable_or_splitter_or_Strategy}`.
FILE_STRATEGIES_NAME = "CHUNK_INSPECTOR_STRATEGIES"

PREVIEW_CHARS = 60


# ----------------------------------------------------------------------------- alignment


@dataclass(frozen=True, slots=True)
class Unaligned:
    """A piece that could not be placed on the document."""

    index: int
    """Position of the piece in the splitter's output (0-based)."""
    preview: str
    """The first PREVIEW_CHARS characters of the piece (or the span as text)."""
    reason: str
    """Why it was left out, in words."""
    line: int | None = None
    """For imported chunks: the line of the file the piece came from."""


@dataclass(frozen=True, slots=True)
class AlignResult:
    """Spans of the pieces that could be placed, in piece order, and the ones that could not."""

    spans: tuple[tuple[int, int], ...]
    """(start, end) into the text; for string pieces trimmed to the first and last non-space."""
    indices: tuple[int, ...]
    """For each span, the index of the piece it came from."""
    unaligned: tuple[Unaligned, ...] = ()


_WS_RE = re.compile(r"\s+")
_WS_CODES: np.ndarray | None = None


def _whitespace_codes() -> np.ndarray:
    """Code points for which `str.isspace()` holds (all lie below U+3001); `re`'s `\\s` agrees."""
    global _WS_CODES
    if _WS_CODES is None:
        _WS_CODES = np.array([c for c in range(0x3001) if chr(c).isspace()], dtype=np.uint32)
    return _WS_CODES


class SquashedText:
    """The text without any whitespace, with a map from each kept character back to its offset.

    Splitters strip, collapse or re-join whitespace (`"\\n\\n"` -> `" "`, `"  \\n"` line joins);
    matching the non-space characters only makes alignment immune to all of that, and the map
    turns a match back into a span of the original text in one lookup.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.norm = _WS_RE.sub("", text)
        cps = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        keep = np.flatnonzero(~np.isin(cps, _whitespace_codes()))
        if len(keep) != len(self.norm):  # pragma: no cover - the two whitespace notions agree
            keep = np.array([i for i, ch in enumerate(text) if not ch.isspace()], dtype=np.int64)
        self.index = keep
        self._index_list: list[int] | None = None

    def to_norm(self, offset: int) -> int:
        """Index of the first kept character at or after `offset`."""
        if self._index_list is None:
            self._index_list = self.index.tolist()
        return bisect.bisect_left(self._index_list, offset)

    def span(self, nstart: int, nlen: int) -> tuple[int, int]:
        return int(self.index[nstart]), int(self.index[nstart + nlen - 1]) + 1


def squash_whitespace(piece: str) -> str:
    """The text with every whitespace character removed: what alignment compares."""
    return _WS_RE.sub("", piece)


def _preview(text: str) -> str:
    return text[:PREVIEW_CHARS]


def align_chunks(text: str, pieces: Sequence[str | tuple[int, int]], *,
                 normalized: SquashedText | None = None) -> AlignResult:
    """Place a splitter's pieces on `text`, in order; report the ones that do not fit.

    `(start, end)` pieces are checked (integers, in range, not blank) and kept as given. String
    pieces are matched on their non-space characters only (see SquashedText), in order: each
    one starts at or after the previous one's start (overlap allowed, never a search from
    position 0 that could land on an earlier repeat). Equal starts are allowed because real
    splitters emit them: LangChain's overlap can start a chunk where the previous one started
    ("A." then "A.\\nB."). Three linear passes:

    1. forward, earliest match from the previous piece's start: which pieces can be placed in
       order at all, and the earliest place for each (greedy-earliest places the most pieces);
    2. backward, latest match up to the next piece's latest place: the latest place for each;
    3. forward, choosing inside [earliest, latest] the latest match at or before the previous
       piece's end that reaches past it (splitters cover the text without gaps, so a tiling
       splitter's pieces land on exactly their own text even in "abc abc abc", and an
       overlapping one's are pinned by the pieces after them); failing that, or when the piece
       fits inside the previous one (a child after its parent), the first match from the
       previous piece's start.

    Where repeated text leaves several places consistent with the order, the text at the chosen
    span still equals the piece; only which repeat it sits on is a guess. Identical consecutive
    pieces are read as tiling ("b", "b" -> two places), not as a parent and its only child.

    A string piece found nowhere after the previous one is placed before it only if it occurs
    exactly once in the whole text (parents-then-children output, unambiguous); otherwise it is
    reported in `unaligned`, like blank pieces and bad spans. Each pass scans from a cursor to
    the next match, so a 1 MB text with 5,000 pieces aligns in well under a second.
    """
    nt = normalized if normalized is not None and normalized.text is text else SquashedText(text)
    norm = nt.norm
    n = len(text)
    placed: dict[int, tuple[int, int]] = {}
    unaligned: list[Unaligned] = []
    # Chain members in order: (piece index, normalized piece or None for a fixed span).
    chain: list[tuple[int, str | None]] = []
    fixed_norm: dict[int, tuple[int, int]] = {}
    earliest: dict[int, int] = {}
    leftovers: list[tuple[int, str, str]] = []

    # Pass 1: validate, normalize, earliest places.
    cursor = 0  # normalized start of the previous chain member
    for i, piece in enumerate(pieces):
        if isinstance(piece, str):
            p: str | None = squash_whitespace(piece)
            if not p:
                unaligned.append(Unaligned(i, _preview(piece), "empty or whitespace-only piece"))
                continue
            hit = norm.find(p, cursor)
            if hit < 0:
                leftovers.append((i, p, piece))
                continue
            earliest[i] = cursor = hit
            chain.append((i, p))
            continue
        try:
            a, b = piece
        except (TypeError, ValueError):
            unaligned.append(Unaligned(i, _preview(repr(piece)), "not a string or a (start, end) pair"))
            continue
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (a, b)):
            unaligned.append(Unaligned(i, _preview(repr(piece)), "span offsets must be integers"))
            continue
        if not 0 <= a < b <= n:
            unaligned.append(Unaligned(i, _preview(repr(piece)),
                                       f"span {a}..{b} is empty or outside the text (0..{n})"))
            continue
        if text[a:b].isspace():
            unaligned.append(Unaligned(i, _preview(text[a:b]), "span holds only whitespace"))
            continue
        placed[i] = (a, b)
        fixed_norm[i] = (nt.to_norm(a), nt.to_norm(b))
        cursor = fixed_norm[i][0]
        chain.append((i, None))

    # Pass 2: latest places. A string piece starts no later than the next piece: the next string
    # piece's latest place, or the next fixed span's start unless that span is out of order.
    latest: dict[int, int] = {}
    bound = len(norm)  # the start of the next piece is at most this
    for i, p in reversed(chain):
        if p is None:
            bound = fixed_norm[i][0]
            continue
        if bound < earliest[i]:  # only after an out-of-order fixed span
            bound = len(norm)
        latest[i] = bound = norm.rfind(p, earliest[i], bound + len(p))

    # Pass 3: choose.
    prev_start, prev_end = 0, 0
    for i, p in chain:
        if p is None:
            prev_start, prev_end = fixed_norm[i]
            continue
        lo, hi = max(earliest[i], prev_start), latest[i]
        top = min(hi, prev_end)
        hit = norm.rfind(p, lo, top + len(p)) if top >= lo else -1
        if hit < 0 or hit + len(p) <= prev_end:
            # No place that continues the previous piece, or the piece fits inside it (a child
            # after its parent): the first place from the previous start.
            hit = norm.find(p, lo, hi + len(p))
        placed[i] = nt.span(hit, len(p))
        prev_start, prev_end = hit, hit + len(p)

    for i, p, piece in leftovers:
        first = norm.find(p)
        if first < 0:
            unaligned.append(Unaligned(i, _preview(piece), "text not found in the document"))
        elif norm.find(p, first + 1) >= 0:
            unaligned.append(Unaligned(i, _preview(piece), "not found after the previous piece, and "
                                                           "found more than once before it (ambiguous)"))
        else:
            placed[i] = nt.span(first, len(p))
    order = sorted(placed)
    unaligned.sort(key=lambda u: u.index)
    return AlignResult(tuple(placed[i] for i in order), tuple(order), tuple(unaligned))


# ----------------------------------------------------------------------------- alignment reports


@dataclass(frozen=True, slots=True)
class AlignmentReport:
    """What the last run of an external strategy on one document left out."""

    strategy: str
    doc_id: str
    pieces: int
    """How many pieces the splitter returned."""
    unaligned: tuple[Unaligned, ...]
    warnings: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.unaligned and not self.warnings

    def lines(self) -> list[str]:
        """One line per problem, for the CLI's stderr and the GUI's status area."""
        out = [f"{self.strategy}: {w}" for w in self.warnings]
        for u in self.unaligned:
            where = f"line {u.line}" if u.line is not None else f"piece {u.index}"
            out.append(f"{self.strategy}: {self.doc_id}: {where} not aligned ({u.reason}): {u.preview!r}")
        return out


#: The latest alignment report per (strategy, document): the core's locked LRU, bounded so a long
#: session over many documents does not keep every report (their previews hold text) alive.
_REPORTS: SizedLRU[AlignmentReport] = SizedLRU(512, 512)


def record_report(report: AlignmentReport) -> None:
    _REPORTS.put((report.strategy, report.doc_id), report)  # moved to the end: the last run is last


def last_alignment_report(name: str, doc_id: str | None = None) -> AlignmentReport | None:
    """The report of the strategy's latest run on `doc_id` (or on any document, if None)."""
    if doc_id is not None:
        return _REPORTS.get((name, doc_id))  # not lookup: a read must not reorder "the last run"
    for key, report in reversed(_REPORTS.snapshot()):
        if isinstance(key, tuple) and key[0] == name:
            return report
    return None


def clear_alignment_reports(name: str | None = None) -> None:
    if name is None:
        _REPORTS.clear()
        return
    for key, _r in _REPORTS.snapshot():
        if isinstance(key, tuple) and key[0] == name:
            _REPORTS.discard(key)


# ----------------------------------------------------------------------------- callables as strategies


class ExternalStrategyError(ValueError):
    """A user-supplied splitter failed or returned something that is not a list of pieces.

    A ValueError, like a bad parameter, so the CLI prints it as one line and the GUI as a message.
    """


def _piece_of(item: Any) -> str | tuple[int, int] | Any:
    """Strings and (start, end) pass; LangChain Documents, LlamaIndex nodes and dicts give text."""
    if isinstance(item, (str, tuple)):
        return item
    if isinstance(item, list) and len(item) == 2:
        return (item[0], item[1])
    for attr in ("page_content", "text"):
        value = getattr(item, attr, None)
        if isinstance(value, str):
            return value
    if isinstance(item, Mapping):
        for key in ("page_content", "text"):
            if isinstance(item.get(key), str):
                return item[key]
    return item  # align_chunks reports it


def pieces_of(output: Any, name: str) -> list:
    """A splitter's output as a list of pieces; a bare string or non-iterable is an error."""
    if isinstance(output, (str, bytes)) or not isinstance(output, Iterable):
        raise ExternalStrategyError(
            f"strategy '{name}': the splitter must return a list of strings or (start, end) pairs, "
            f"got {type(output).__name__}")
    return [_piece_of(x) for x in output]


def _budget(params: Mapping[str, Any], declared: Sequence[Param]) -> int | None:
    """A token-sized "size"/"chunk_size" parameter doubles as the over-budget limit."""
    for p in declared:
        if p.name in ("size", "chunk_size", "max_tokens") and p.unit == "tokens":
            return int(params[p.name])
    return None


def chunks_from_pieces(doc: Document, pieces: Sequence[Any], name: str, *,
                       budget: int | None = None, warnings: Sequence[str] = (),
                       lines: Sequence[int | None] | None = None) -> tuple[Chunk, ...]:
    """Align pieces on the document, build Chunks with SpanContext.make, record the report."""
    from inspector.core.chunking.common import SpanContext

    result = align_chunks(doc.text, pieces)
    unaligned = result.unaligned
    if lines is not None:
        unaligned = tuple(replace(u, line=lines[u.index]) for u in unaligned)
    record_report(AlignmentReport(name, doc.doc_id, len(pieces), unaligned, tuple(warnings)))
    if not result.spans:
        return ()
    ctx = SpanContext(doc)
    return tuple(ctx.make(result.spans, budget=budget))


def strategy_from_callable(name: str, func: Callable[..., Any], params: Sequence[Param] = (),
                           description: str = "", *, register: bool = True) -> Strategy:
    """A Strategy that calls `func(doc.text, **params)` and turns its pieces into Chunks.

    `func` returns strings, (start, end) pairs, LangChain `Document`s or LlamaIndex nodes. The
    pieces are aligned with `align_chunks`; what could not be placed is in
    `last_alignment_report(name, doc.doc_id)`. Registered under `name` unless `register=False`.

    `--size`/`--overlap` and the sweep address the parameters with the "size"/"overlap" roles. A
    user's `Param` need not declare one: a parameter named exactly "size" (or "overlap") takes
    the role when no other declares it, and such an "overlap" must stay below a "size" of the
    same unit (`params.infer_roles`), as before roles were declared. Declare `role=` (and
    `less_than=`/`at_least=`) to address a parameter with another name, e.g. "chunk_size".
    """
    declared = tuple(params)

    def run(doc: Document, values: Mapping[str, Any]) -> tuple[Chunk, ...]:
        kwargs = {p.name: values[p.name] for p in declared}
        try:
            output = func(doc.text, **kwargs)
        except Exception as exc:
            raise ExternalStrategyError(
                f"strategy '{name}': the splitter raised {type(exc).__name__}: {exc}") from exc
        return chunks_from_pieces(doc, pieces_of(output, name), name, budget=_budget(values, declared))

    desc = description or (inspect.getdoc(func) or "").split("\n\n")[0] or f"External splitter {name}"
    strategy = Strategy(name, run, declared, desc)
    if register:
        register_external(strategy)
    return strategy


_EXTERNAL_NAMES: set[str] = set()


def register_external(strategy: Strategy) -> None:
    """Register, refusing to shadow a built-in (re-registering one's own external name is fine)."""
    existing = strategies()
    if strategy.name in existing and strategy.name not in _EXTERNAL_NAMES:
        raise ValueError(f"strategy name '{strategy.name}' is taken by a built-in strategy; choose another")
    _EXTERNAL_NAMES.add(strategy.name)
    register_strategy(strategy)


def remove_external(name: str) -> None:
    """Unregister an external strategy and forget its reports (built-ins are left alone)."""
    if name in _EXTERNAL_NAMES:
        _EXTERNAL_NAMES.discard(name)
        unregister(name)
        clear_alignment_reports(name)


def is_external(name: str) -> bool:
    """True for strategies registered through this module (their output may have a report)."""
    return name in _EXTERNAL_NAMES


def as_strategy(name: str, obj: Any, *, register: bool = True) -> Strategy:
    """A Strategy from what a user hands over: a Strategy, a splitter with `split_text`, a callable."""
    if isinstance(obj, Strategy):
        if register:
            register_external(obj)
        return obj
    if hasattr(obj, "split_text") and callable(obj.split_text):
        return langchain_strategy(obj, name=name, register=register)
    if callable(obj):
        marker = getattr(obj, "__chunk_inspector__", None) or {}
        return strategy_from_callable(name, obj, marker.get("params", ()),
                                      marker.get("description", ""), register=register)
    raise TypeError(f"'{name}' is a {type(obj).__name__}, not a function, splitter or Strategy")


def chunk_strategy(name: str | None = None, *, params: Sequence[Param] = (), description: str = ""):
    """Decorator for functions in a strategy file: `@chunk_strategy("mine", params=(Param(...),))`.

    Marked functions are registered by `load_strategy_file` without listing them in
    CHUNK_INSPECTOR_STRATEGIES.
    """

    def deco(func):
        func.__chunk_inspector__ = {"name": name or func.__name__, "params": tuple(params),
                                    "description": description}
        return func

    return deco


# ----------------------------------------------------------------------------- LangChain


def langchain_strategy(splitter: Any, name: str | None = None, description: str = "", *,
                       register: bool = True) -> Strategy:
    """Inspect exactly the splitter a pipeline uses: any object with `split_text(text)`.

    Works for every langchain-text-splitters class (`RecursiveCharacterTextSplitter`,
    `MarkdownHeaderTextSplitter`, which returns Documents, `TokenTextSplitter` ...).
    """
    name = name or f"lc_{type(splitter).__name__}"
    desc = description or f"LangChain {type(splitter).__name__} as configured by the caller"

    def split(text: str) -> Any:
        return splitter.split_text(text)

    return strategy_from_callable(name, split, (), desc, register=register)


def register_langchain_strategies() -> list[Strategy]:
    """Register `lc_recursive` and `lc_markdown_header` if langchain-text-splitters is installed.

    Nothing is imported until a strategy runs (langchain_core is slow to import). Returns the
    strategies registered (empty when the package is absent).
    """
    if importlib.util.find_spec("langchain_text_splitters") is None:
        return []

    def lc_recursive(text: str, size: int, overlap: int) -> Any:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap).split_text(text)

    def lc_markdown_header(text: str, max_level: int, strip_headers: bool) -> Any:
        from langchain_text_splitters import MarkdownHeaderTextSplitter

        heads = [("#" * k, f"h{k}") for k in range(1, max_level + 1)]
        return MarkdownHeaderTextSplitter(heads, strip_headers=strip_headers).split_text(text)

    made = [
        strategy_from_callable("lc_recursive", lc_recursive, (
            Param("size", "characters", 1000, 50, 20000, 50, "chunk_size (LangChain counts characters)",
                  role="size", practical=(100, 10000), scale="log10"),
            Param("overlap", "characters", 200, 0, 5000, 10, "chunk_overlap", role="overlap",
                  less_than="size", scale="log10", practical_share=0.5),
        ), "LangChain RecursiveCharacterTextSplitter with its defaults (sizes in characters), aligned "
           "back onto the text"),
        strategy_from_callable("lc_markdown_header", lc_markdown_header, (
            Param("max_level", "level", 3, 1, 6, 1, "Split on headings #..this level"),
            Param("strip_headers", "", True, help="LangChain's strip_headers: heading lines left out"),
        ), "LangChain MarkdownHeaderTextSplitter: one chunk per section, headings as metadata"),
    ]
    return made


# ----------------------------------------------------------------------------- entry points


@dataclass(frozen=True, slots=True)
class LoadReport:
    """Strategies registered from plug-ins, and the ones that failed (reported, not fatal)."""

    strategies: tuple[Strategy, ...]
    problems: tuple[InputError, ...] = ()


def load_entry_point_strategies(group: str = ENTRY_POINT_GROUP) -> LoadReport:
    """Register what installed packages declare under the entry-point group.

    In a plug-in's pyproject.toml: `[project.entry-points."chunk_inspector.strategies"]`
    `my_splitter = "my_pkg.split:split"`; the object may be a function, a splitter with
    `split_text`, or a Strategy. A broken plug-in is reported in `problems` and skipped.
    """
    from importlib.metadata import entry_points

    made: list[Strategy] = []
    problems: list[InputError] = []
    for ep in entry_points(group=group):
        where = f"entry point {ep.name} = {ep.value}"
        try:
            obj = ep.load()
            made.append(as_strategy(ep.name, obj))
        except Exception as exc:
            problems.append(InputError(f"{type(exc).__name__}: {exc}", path=where))
    return LoadReport(tuple(made), tuple(problems))


# ----------------------------------------------------------------------------- strategy files


def load_strategy_file(path: str | Path) -> list[Strategy]:
    """Run a user's Python file and register the strategies it declares.

    THIS RUNS THE FILE'S CODE, with the user's rights: call it only on the user's explicit request
    (menu "Load strategy file…", CLI `--strategy-file`). The file declares strategies with a
    module-level `CHUNK_INSPECTOR_STRATEGIES = {"name": function_or_splitter}` and/or functions
    decorated with `@chunk_strategy(...)`. Each function takes the text (plus its declared params
    as keyword arguments) and returns strings or (start, end) pairs.

    A syntax error, an exception while running the file, or a file that declares nothing raises
    InputError naming the file (and the line, where there is one). Loading again re-runs the file
    and replaces its strategies.
    """
    p = Path(path)
    shown = str(p)
    try:
        source = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError("no such file", path=shown) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", path=shown) from None
    try:
        code = compile(source, shown, "exec")
    except SyntaxError as exc:
        raise InputError(f"syntax error: {exc.msg}", path=shown, line=exc.lineno) from None
    digest = hashlib.sha1(str(p.resolve()).encode()).hexdigest()[:12]
    mod_name = f"chunk_inspector_user_{digest}"
    spec = importlib.util.spec_from_file_location(mod_name, p)
    if spec is None:  # pragma: no cover - a readable file always yields a spec
        raise InputError("cannot load as a Python module", path=shown)
    module = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = module  # dataclasses and pickling inside the file need it
    try:
        exec(code, module.__dict__)
    except Exception as exc:
        sys.modules.pop(mod_name, None)
        line = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == shown:
                line = frame.lineno
        raise InputError(f"raised {type(exc).__name__}: {exc}", path=shown, line=line) from None
    declared: dict[str, Any] = {}
    table = module.__dict__.get(FILE_STRATEGIES_NAME)
    if table is not None:
        if not isinstance(table, Mapping):
            raise InputError(f"{FILE_STRATEGIES_NAME} must be a dict of name -> function",
                             path=shown, field=FILE_STRATEGIES_NAME)
        declared.update(table)
    for value in list(module.__dict__.values()):
        marker = getattr(value, "__chunk_inspector__", None)
        if callable(value) and isinstance(marker, dict) and value not in declared.values():
            declared[marker["name"]] = value
    if not declared:
        raise InputError(f"declares no strategies: define {FILE_STRATEGIES_NAME} = {{'name': function}} "
                         "or decorate functions with @chunk_strategy", path=shown)
    made: list[Strategy] = []
    for name, obj in declared.items():
        if not isinstance(name, str) or not name.strip():
            raise InputError(f"strategy names must be non-empty strings, got {name!r}", path=shown,
                             field=FILE_STRATEGIES_NAME)
        try:
            made.append(as_strategy(name, obj))
        except (TypeError, ValueError) as exc:
            raise InputError(str(exc), path=shown, field=name) from None
    return made
