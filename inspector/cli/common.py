"""What every command shares: the one-line error, strategy and device flags, user strategies, the
corpus opened on a workbench, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

#: The retrievers a command may be asked for (`--retriever`).
RETRIEVER_CHOICES = ("dense", "bm25", "hybrid")


class CliError(Exception):
    """Printed as one line on stderr with exit status 2."""


def one_line_error(parser: argparse.ArgumentParser):
    """argparse's usage dump replaced by one line naming the command and the problem."""

    def error(message: str) -> NoReturn:
        print(f"error: {parser.prog}: {message}", file=sys.stderr)
        raise SystemExit(2)

    return error


def print_json(data: Any) -> None:
    """A JSON answer on stdout, indented, non-ASCII kept as it is."""
    print(json.dumps(data, ensure_ascii=False, indent=2))


def sample_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "sample_docs"


def add_strategy_args(p: argparse.ArgumentParser, default: str = "markdown") -> None:
    p.add_argument("--strategy", default=default, help="strategy name (see `strategies`)")
    p.add_argument("--size", type=int, help="size parameter (tokens or characters, per strategy)")
    p.add_argument("--overlap", type=int, help="overlap parameter (per strategy)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="any other declared parameter, e.g. --param hard_cap=800")
    p.add_argument("--strategy-file", action="append", default=[], metavar="FILE",
                   help="register the strategies a Python file declares (RUNS THE FILE'S CODE)")
    p.add_argument("--import-chunks", metavar="FILE",
                   help="chunks made elsewhere (LangChain/LlamaIndex JSONL) as strategy 'imported'; "
                        "implies --strategy imported unless another is given")


def add_encoding_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--encoding", metavar="NAME", default=None,
                   help="read plain-text documents in this encoding (e.g. cp1252, latin-1) instead of "
                        "detecting it; a file it cannot decode is an error naming the line")
    add_pdf_backend_arg(p)  # every command that opens documents


def add_pdf_backend_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--pdf-backend", metavar="builtin|plain|docling", default=None,
                   help="how PDFs become text: builtin (default) Markdown with headings, lists and tables "
                        "read offline from the page layout; plain: page text only; docling: the optional "
                        "docling converter (pip install 'chunk-inspector[docling]')")


def apply_pdf_backend(args: argparse.Namespace) -> None:
    """Use the backend `--pdf-backend` names for every PDF this run opens; an unknown name, or
    docling without its package, is a one-line error (exit 2) before any file is read."""
    name = getattr(args, "pdf_backend", None)
    if not name:
        return
    from inspector.core.api import PDF_BACKENDS, docling_available, set_pdf_backend

    if name not in PDF_BACKENDS:
        raise CliError(f"--pdf-backend: unknown backend {name!r}; choose one of {', '.join(PDF_BACKENDS)}")
    if name == "docling" and not docling_available():
        raise CliError("--pdf-backend docling needs the optional docling package "
                       "(pip install 'chunk-inspector[docling]'); the builtin backend needs nothing")
    set_pdf_backend(name)


def document_encoding(args: argparse.Namespace) -> str | None:
    """The codec `--encoding` names (Python's name for it), None when not given; an unknown one is
    a one-line error (exit 2) before any file is read."""
    name = getattr(args, "encoding", None)
    if not name:
        return None
    from inspector.core.api import canonical_codec

    try:
        return canonical_codec(name)
    except ValueError as exc:
        raise CliError(f"--encoding: {exc}") from None


def print_document_warnings(docs) -> None:
    """Each document's notes on stderr, naming the file: a legacy encoding that was guessed (and
    the line where the bytes stop being UTF-8), a converter's trouble with a page."""
    for doc in docs:
        for note in (doc.meta or {}).get("warnings", ()):
            print(f"warning: {doc.doc_id}: {note}", file=sys.stderr)


def add_device_args(p: argparse.ArgumentParser) -> None:
    """--device, --dtype and --batch-size: where and how the embedding model runs."""
    p.add_argument("--device", default="auto", metavar="auto|cpu|cuda|cuda:N|mps",
                   help="where the embedding model runs (default auto: CUDA, then Apple MPS, then the CPU)")
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"),
                   help="precision of the model (half precision only on a GPU; the CPU uses float32)")
    p.add_argument("--batch-size", type=int, default=None, metavar="N",
                   help="texts per model call (default by device: 8 on the CPU, 256 on CUDA)")


def configured_embedder(args: argparse.Namespace):
    """The bundled model set to the flags' device and precision, resolved now: a device that is not
    there is a DeviceError (one line, exit 2) before any work starts."""
    from inspector.core.api import configure_default_embedder

    batch = getattr(args, "batch_size", None)
    if batch is not None and batch < 1:
        raise CliError(f"--batch-size must be at least 1, got {batch}")
    emb = configure_default_embedder(device=getattr(args, "device", None) or "auto",
                                     dtype=getattr(args, "dtype", None) or "float32", batch_size=batch)
    emb.resolve()
    if emb.dtype_note:
        print(f"warning: {emb.dtype_note}", file=sys.stderr)
    return emb


def device_fields(embedder) -> dict:
    """{"device", "dtype", "backend"} for a JSON report (None values when no model ran)."""
    from inspector.core.api import device_info

    return device_info(embedder)


def device_line(embedder) -> str:
    """The text reports' header line naming where vectors were computed."""
    info = device_fields(embedder)
    if info["device"] is None:
        return "device: none (BM25 needs no model)"
    backend = {"openvino": " (OpenVINO)", "numpy": " (test embedder)", "torch": "",
               None: " (every vector from the cache: the model did not run)"}.get(info["backend"], "")
    return f"device: {info['device']}, {info['dtype']}{backend}"


def load_user_strategies(args: argparse.Namespace) -> None:
    """Plug-ins, LangChain's ready-made splitters, --strategy-file and --import-chunks."""
    from inspector.core.api import external

    for problem in external.load_entry_point_strategies().problems:
        print(f"warning: {problem.one_line()}", file=sys.stderr)
    external.register_langchain_strategies()
    for path in getattr(args, "strategy_file", None) or []:
        external.load_strategy_file(path)
    if getattr(args, "import_chunks", None):
        from inspector.core.api import imported_strategy

        imported_strategy("imported", args.import_chunks)
        if getattr(args, "strategy", None) in ("markdown", None):
            args.strategy = "imported"


def print_alignment_reports(name: str, docs) -> None:
    """What an external or imported strategy could not place, one warning per piece."""
    from inspector.core.api import is_external, last_alignment_report

    if not is_external(name):
        return
    for doc in docs:
        report = last_alignment_report(name, doc.doc_id)
        for line in report.lines() if report else ():
            print(f"warning: {line}", file=sys.stderr)


def param_flags(strategy, items) -> dict:
    """`--param NAME=VALUE` items as typed values for the strategy's declared parameters."""
    names = {p.name: p for p in strategy.params}
    out: dict = {}
    for item in items or ():
        if "=" not in item:
            raise ValueError(f"--param expects NAME=VALUE, got {item!r}")
        k, v = item.split("=", 1)
        p = names.get(k)
        if p is None:
            raise ValueError(f"strategy '{strategy.name}' has no parameter '{k}' "
                             f"(known: {', '.join(names) or 'none'})")
        try:
            if p.kind == "float":
                out[k] = float(v)
            elif p.kind == "int":
                out[k] = int(v)
            elif p.kind == "bool":
                out[k] = v.lower() in ("1", "true", "yes", "on")
            else:
                out[k] = v
        except ValueError:
            raise ValueError(f"--param {k} expects a {p.kind}, got {v!r}") from None
    return out


def strategy_params(args: argparse.Namespace) -> tuple[str, dict]:
    """(strategy name, params) from the common arguments; unknown names raise ValueError.

    `--size`/`--overlap` set the parameters holding the "size"/"overlap" roles, and `--param`
    names parameters exactly (and wins over them). Unlike `eval` (`with_size_overlap`), nothing
    else is adjusted: `chunks --strategy markdown --size 1000` asks for `--param hard_cap=...`
    too, and `--overlap` (even 0) on a strategy without an overlap role is an error, as before
    roles were declared.
    """
    from inspector.core.api import get_strategy

    strat = get_strategy(args.strategy)
    params: dict = {}
    for role in ("size", "overlap"):
        value = getattr(args, role, None)
        if value is None:
            continue
        p = strat.param_for_role(role)
        if p is None:
            raise ValueError(f"strategy '{strat.name}' has no {role} parameter")
        params[p.name] = value
    params.update(param_flags(strat, args.param))
    return strat.name, strat.validate(params)


# -- the embedding model (--embedder SPEC and its options) ----------------------------------------

def add_embedder_args(p: argparse.ArgumentParser) -> None:
    """--embedder SPEC and the options that go with it."""
    g = p.add_argument_group("embedding model")
    g.add_argument("--embedder", default="minilm", metavar="SPEC",
                   help="minilm (the bundled all-MiniLM-L6-v2, default), st:NAME_OR_PATH (a "
                        "sentence-transformers model: a folder, or a hub name already downloaded), "
                        "openai:MODEL (an OpenAI-compatible /v1/embeddings endpoint: OpenAI, Azure, Ollama, "
                        "vLLM, TEI, LM Studio), static:PATH (a static model folder: sentence-transformers "
                        "StaticEmbedding or model2vec), or hash (a fast model-free test embedder); its tokenizer "
                        "and input limit count the word pieces and truncation flags")
    g.add_argument("--embed-url", metavar="URL", default=None,
                   help="openai: the endpoint's base URL (default https://api.openai.com/v1; "
                        "e.g. http://localhost:11434/v1 for Ollama)")
    g.add_argument("--embed-key-env", metavar="NAME", default=None,
                   help="openai: the environment variable holding the API key (default OPENAI_API_KEY); "
                        "the key is never printed or written")
    g.add_argument("--embed-tokenizer", metavar="NAME", default=None,
                   help="openai: how the model counts tokens: cl100k_base (default), o200k_base, or "
                        "hf:FOLDER (a local model folder's tokenizer.json)")
    g.add_argument("--embed-max-tokens", metavar="N", type=int, default=None,
                   help="tokens the model reads per text (default: its own limit; 8,191 for OpenAI's)")
    g.add_argument("--embed-dimensions", metavar="N", type=int, default=None,
                   help="openai: vector size to ask for (text-embedding-3 can shorten its vectors)")
    g.add_argument("--trust-remote-code", action="store_true",
                   help="st: let the model run the code it ships (only for models you trust)")


def _spec_options(args: argparse.Namespace) -> dict[str, Any]:
    return {"url": getattr(args, "embed_url", None), "tokenizer": getattr(args, "embed_tokenizer", None),
            "max_tokens": getattr(args, "embed_max_tokens", None),
            "dimensions": getattr(args, "embed_dimensions", None),
            "trust_remote_code": bool(getattr(args, "trust_remote_code", False))}


def embedder_spec(args: argparse.Namespace, text: str | None = None, *, lenient: bool = False) -> Any:
    """The EmbedderSpec `--embedder` (or `text`) names with the --embed-* options; an InputError of
    one line (exit 2) for a malformed spec or an option its kind does not read. `lenient`: each
    option goes only to a kind that reads it (several models named at once)."""
    from inspector.core.api import options_read_by, parse_embedder_spec

    text = text if text is not None else (getattr(args, "embedder", None) or "minilm")
    options = _spec_options(args)
    if lenient:  # several models named (compare --against-embedder, sweep --embedders)
        reads = options_read_by(text.strip().partition(":")[0].lower())
        options = {k: (v if k in reads else (False if k == "trust_remote_code" else None))
                   for k, v in options.items()}
    return parse_embedder_spec(text, key_env=getattr(args, "embed_key_env", None), **options)


def make_model(args: argparse.Namespace, spec: Any = None) -> Any:
    """The embedder a spec names on the flags' device, precision and batch size. Nothing is
    loaded and nothing is sent yet, but a folder or device that is not there is a one-line error
    now."""
    from inspector.core.api import make_embedder

    spec = spec if spec is not None else embedder_spec(args)
    if spec.kind == "minilm":
        emb = configured_embedder(args)
        emb.spec = spec
        return emb
    batch = getattr(args, "batch_size", None)
    if batch is not None and batch < 1:
        raise CliError(f"--batch-size must be at least 1, got {batch}")
    try:
        return make_embedder(spec, device=getattr(args, "device", None) or "auto",
                             dtype=getattr(args, "dtype", None) or "float32", batch_size=batch)
    except ImportError as exc:
        raise CliError(f"{spec.text}: the model's runtime is not installed ({exc})") from None


def use_model_pieces(embedder: Any) -> None:
    """Count word pieces (and flag truncation, fit budgets) as this embedder reads its input (None:
    the bundled model's)."""
    from inspector.core.api import use_embedder_pieces

    use_embedder_pieces(embedder)


def embedder_report(embedder: Any) -> Any:
    """The report's `embedder` object (spec, model_id, dims, max_tokens, tokenizer, backend); None
    when no model ran (BM25). Never holds a key."""
    if embedder is None:
        return None
    from inspector.core.api import embedder_info

    return embedder_info(embedder)


def embedder_line(embedder: Any) -> str | None:
    """The text reports' line naming the model (None without one)."""
    info = embedder_report(embedder)
    if info is None:
        return None
    parts = [f"{info['dims']} dims" if info["dims"] else None,
             f"reads {info['max_tokens']:,} tokens" if info["max_tokens"] else None,
             f"counted with {info['tokenizer']}" if info["tokenizer"] else None]
    more = ", ".join(p for p in parts if p)
    return f"embedder: {info['spec'] or info['model_id']}" + (f" ({more})" if more else "")


# -- the reranker (--reranker SPEC, --rerank-depth N) ---------------------------------------------

def add_reranker_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("reranker")
    g.add_argument("--reranker", metavar="SPEC", default=None,
                   help="rerank the retriever's top hits: st-ce:NAME_OR_PATH (a sentence-transformers "
                        "CrossEncoder) or http:URL (a /rerank endpoint as TEI, vLLM and infinity serve)")
    g.add_argument("--rerank-depth", metavar="N", type=int, default=None,
                   help="hits the reranker reads before cutting to k (default 50)")


def make_reranker(args: argparse.Namespace) -> tuple[Any, int]:
    """(the reranker --reranker names, the depth) or (None, depth); one-line errors for a bad
    spec or depth."""
    from inspector.core.api import RERANK_DEPTH, parse_reranker_spec

    depth = getattr(args, "rerank_depth", None)
    text = getattr(args, "reranker", None)
    if depth is not None and not text:
        raise CliError("--rerank-depth needs --reranker")
    depth = RERANK_DEPTH if depth is None else depth
    if depth < 1:
        raise CliError(f"--rerank-depth must be at least 1, got {depth}")
    if not text:
        return None, depth
    options: dict[str, Any] = {}
    if text.strip().lower().startswith("st-ce:"):
        options["device"] = getattr(args, "device", None) or "auto"
    try:
        return parse_reranker_spec(text, **options), depth
    except ImportError as exc:
        raise CliError(f"{text}: the reranker's runtime is not installed ({exc})") from None


def reranker_report(reranker: Any) -> dict[str, Any]:
    """What a report says about the reranker (its own `info()` when it has one; never a key)."""
    info = getattr(reranker, "info", None)
    return dict(info()) if callable(info) else {"model_id": str(reranker.model_id)}


# -- the user's vector store (--store SPEC) -----------------------------------------------------------

def add_store_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("vector store")
    g.add_argument("--store", metavar="SPEC", default=None,
                   help="the chunks of your vector store (read only), placed on the documents and scored "
                        "on its own vectors (dense by default; the question embedded by --embedder): "
                        "chroma:PATH:COLLECTION, lancedb:PATH:TABLE or qdrant:PATH_OR_URL:COLLECTION")
    g.add_argument("--store-source-key", metavar="KEY", default=None,
                   help="the metadata key naming each record's source document (default: source, "
                        "file_path, file_name or filename)")


def check_store_flags(args: argparse.Namespace) -> None:
    """Before any work: --store chooses the chunks (so no --strategy beside it) and, unless a
    retriever is named, dense retrieval on its own vectors."""
    if getattr(args, "store_source_key", None) and not getattr(args, "store", None):
        raise CliError("--store-source-key needs --store")
    if not getattr(args, "store", None):
        return
    if getattr(args, "strategy", None) or getattr(args, "import_chunks", None):
        raise CliError("--store and --strategy/--import-chunks both choose the chunks; give one")
    if hasattr(args, "retriever"):
        args.retriever = args.retriever or "dense"  # the point of a store: its own vectors


def open_store(args: argparse.Namespace, wb: Any) -> Any:
    """The store --store names, read and placed on the workbench's documents (its chunks the
    strategy `source.strategy`); what could not be placed is said on stderr, one line a record."""
    source = wb.open_store(args.store, source_key=getattr(args, "store_source_key", None))
    placement = source.placement
    for u in placement.unplaced:
        print(f"warning: {source.collection.label}: record {u.id} not placed ({u.reason}): {u.detail}",
              file=sys.stderr)
    for w in placement.warnings:
        print(f"warning: {source.collection.label}: {w}", file=sys.stderr)
    if source.note:
        print(f"warning: {source.note}", file=sys.stderr)
    print(f"store: {source.collection.label}: {placement.summary()}", file=sys.stderr)
    if not placement.placed:
        raise CliError(f"{source.collection.label}: no record could be placed on the documents opened "
                       f"({placement.summary()}); open the documents the store was filled from")
    return source


def store_report(source: Any) -> Any:
    """The report's `store` object: spec, records, placed, unplaced with reasons (None without
    --store)."""
    if source is None:
        return None
    c, p = source.collection, source.placement
    return {"spec": c.spec, "kind": c.kind, "collection": c.name, "records": p.records, "placed": p.placed,
            "dims": c.dim, "metric": c.metric, "note": source.note,
            "unplaced": [{"id": u.id, "reason": u.reason, "detail": u.detail, "source": u.source,
                          "preview": u.preview} for u in p.unplaced],
            "warnings": list(p.warnings)}


# -- the corpus on a workbench ------------------------------------------------------------------------

def open_workbench(args: argparse.Namespace, retrievers: Sequence[str], *, gold: bool = True,
                   spec: Any = None):
    """The corpus (and gold set) of the command line, opened on a Workbench with the embedder
    and cache the flags ask for (or the model `spec` names); problems are printed as warnings.
    Word pieces are counted as the chosen model reads them, also when BM25 alone runs (the chunks
    are the same either way)."""
    from inspector.core.api import Workbench

    check_prices(args)  # before the work, not after it
    encoding = document_encoding(args)
    spec = spec if spec is not None else embedder_spec(args)
    emb = _embedder(args, retrievers, spec)
    wb = Workbench(embedder=emb, cache=_cache(spec))
    from inspector.core.api import set_semantic_embedder

    if emb is not None:
        wb.set_embedder(emb)  # its pieces and the semantic strategy's sentence vectors
    elif spec.kind != "minilm":  # BM25 alone: the chunks are still the chosen model's
        model = make_model(args, spec)
        use_model_pieces(model if spec.names_model else None)
        set_semantic_embedder(model)
    else:
        use_model_pieces(None)
        set_semantic_embedder(None)
    loaded = wb.open(args.paths, encoding=encoding)
    for problem in loaded.problems:
        print(f"warning: {problem.one_line()}", file=sys.stderr)
    print_document_warnings(loaded.documents)
    if not loaded.documents:
        raise CliError("no document could be loaded")
    if gold:
        for w in wb.load_gold(args.gold).warnings:
            print(f"warning: {w.one_line()}", file=sys.stderr)
    return wb


def _embedder(args: argparse.Namespace, retrievers: Sequence[str], spec: Any) -> Any:
    if all(r == "bm25" for r in retrievers):
        if getattr(args, "device", None) and spec.kind == "minilm":
            # BM25 needs no model, but a device the user named and this machine lacks is still
            # their mistake to hear about (one line, exit 2), not something to pass over.
            configured_embedder(args)  # resolves the device only; the model is not loaded
        return None
    try:
        return make_model(args, spec)
    except ImportError as exc:
        raise CliError(f"the embedding model is not installed ({exc}); try --retriever bm25") from None


def switch_model(wb: Any, spec: Any, model: Any) -> None:
    """Embed with `model` (named by `spec`) on this workbench from now on, with its own cache:
    vectors are kept per model identity, so two models never mix (compare --against-embedder,
    sweep --embedders)."""
    wb.cache = _cache(spec)
    wb.set_embedder(model)


def _cache(spec: Any) -> Any:
    """The on-disk embedding cache for a real model (a second run embeds nothing new). Vectors are
    kept per model identity (its id, endpoint, size and limit): two models never mix."""
    if spec.kind == "hash":
        return None
    from inspector.core.api import default_cache

    return default_cache()


def check_prices(args: argparse.Namespace) -> None:
    """--embed-price and --llm-price, when given, are prices of at least 0 (a one-line error)."""
    for flag, price in (("--embed-price", getattr(args, "embed_price", None)),
                        ("--llm-price", getattr(args, "llm_price", None))):
        if price is not None and not price >= 0:  # also refuses nan
            raise CliError(f"{flag} must be a price of at least 0 dollars per million tokens, got {price}")
