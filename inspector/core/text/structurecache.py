"""A long Markdown document's structure kept on disk, so that opening it again reads its blocks and
headings instead of parsing the text again (issue 31: the cold path; `tokencache` keeps its
token index the same way).

Why: the structure is the other half of a long document's first chunking. A 20 MB handbook's
parse is ~1.6 s (markdown-it.rs's tree 1.2 s, the rest Python over ~90,000 blocks); the 1 MB
handbook x11's ~60 ms, longer than its token index built on two threads. Read back, it is the
blocks made again from plain tuples (~10x sooner).

What is kept, per document text (`runtime.keptfiles`: one checked file per text, the folder
bounded): the parse's own result (the blocks with their children, the raw headings, the front
matter's title) as nested tuples of strings and integers, in `marshal`'s format (loading it runs
no code). Not the Structure: its title falls back on the document's name, which is not the text's.
The file's key is everything else the parse depends on: this format, `marshal`'s version,
markdown-it-py's, its plugins' and markdown-it-pyrs's versions, and the parse's own code
(`structure_key`). A payload whose shape or values a parse cannot give (a kind not known, a
block or heading out of the text or out of order, blocks nested deeper than a list's items or a
table's rows) is refused like a failed checksum.
"""

from __future__ import annotations

import marshal
from functools import lru_cache
from pathlib import Path

from inspector.core.runtime import keptfiles
from inspector.core.runtime.keptfiles import KeptFolder
from inspector.core.text.markdown_blocks import BLOCK_KINDS, Block

MAGIC = b"CISTRU01"
#: Where the structures are kept (below the app's cache folder), and how much at most.
FILES = KeptFolder("structures", ".structure", MAGIC, 256 << 20)
_KINDS = frozenset(BLOCK_KINDS)

#: The modules that read a text's blocks (beside this one, in `inspector.core.text`).
_SOURCES = ("markdown_blocks.py", "markdown_fast.py", "structure.py")

Parts = tuple[list[Block], list[tuple[int, str, int, int]], "str | None"]


@lru_cache(maxsize=1)
def structure_key() -> str:
    """What a parse depends on besides its text: this format, `marshal`'s version, the parsers'
    packages' versions, and the code that reads blocks (the modules `_SOURCES`, and
    `runtime.slices`' offsets)."""
    from inspector.core.runtime import slices

    here = Path(__file__).parent
    return keptfiles.code_key(MAGIC, packages=("markdown-it-py", "mdit-py-plugins", "markdown-it-pyrs"),
                              parts=(str(marshal.version),),
                              files=(*(here / name for name in _SOURCES), Path(slices.__file__)))


def _plain(block: Block) -> tuple:
    return (block.kind, block.start, block.end, block.level, block.info,
            tuple([_plain(c) for c in block.children]) if block.children else ())


def encode(parts: Parts) -> bytes:
    """The payload for a parse's result."""
    blocks, headings, title = parts
    return marshal.dumps((tuple([_plain(b) for b in blocks]), tuple(headings), title))


class _Refused(Exception):
    pass


def _block(t: tuple, text_len: int, floor: int, nested: bool = False) -> Block:
    """A Block from its tuple; its children (list items, table rows: one level, a parse makes no
    deeper nesting) in order within the text."""
    kind, start, end, level, info, children = t
    if kind not in _KINDS or type(start) is not int or type(end) is not int or not (floor <= start <= end <= text_len) \
            or type(level) is not int or type(info) is not str or (children and nested):
        raise _Refused
    kids: tuple[Block, ...] = ()
    if children:
        out = []
        low = start
        for c in children:
            child = _block(c, text_len, low, True)
            low = child.start
            out.append(child)
        kids = tuple(out)
    return Block(kind, start, end, level, kids, info)


def decode(payload: bytes | memoryview, text_len: int) -> Parts | None:
    """A parse's result from a payload, None when it is not one a text of `text_len` characters
    can have (its shape, the kinds, the spans within the text and in order)."""
    try:
        plain_blocks, headings, title = marshal.loads(payload)
        blocks: list[Block] = []
        low = 0
        for t in plain_blocks:
            block = _block(t, text_len, low)
            low = block.start
            blocks.append(block)
        heads = [_heading(h, text_len) for h in headings]
        if title is not None and type(title) is not str:
            raise _Refused
    except (_Refused, ValueError, TypeError, EOFError):
        return None
    if any(a[2] > b[2] for a, b in zip(heads, heads[1:], strict=False)):
        return None  # headings in the text's order
    return blocks, heads, title


def _heading(h: tuple, text_len: int) -> tuple[int, str, int, int]:
    level, title, start, end = h
    if type(level) is not int or not 1 <= level <= 6 or type(title) is not str or type(start) is not int \
            or type(end) is not int or not 0 <= start <= end <= text_len:
        raise _Refused
    return level, title, start, end
