"""The current view as one standalone HTML file: the text with its chunks, a question's hits, the
gold figures and every question's result, and any marks (audit findings) — for a colleague who
has a browser and not this program.

One pure function, `view_html`, builds the page: inline CSS, no external resource, readable with
JavaScript off (a few lines of inline script only highlight the whole chunk under the pointer).
The text is cut into runs at every chunk boundary, hit, answer and mark, so each run is one
`<span>` whose classes say what covers it; runs are exact spans of `doc.text`, HTML-escaped, and
nothing else is text inside the document's `<pre>`: chunk numbers and rank badges are CSS
pseudo-elements from data attributes, so copying the text out of the page gives the document back.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

from inspector.core.chunking.chunk import Chunk
from inspector.core.documents.document import Document
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.format import num, pct
from inspector.core.evaluation.gold import answer_spans
from inspector.core.evaluation.metrics import Report
from inspector.core.evaluation.report import retrieval_line
from inspector.core.viewmodel.segments import SpanIndex

#: Hues of the chunk cycle (the window's `CHUNK_HUES`): neighbours never share a colour.
HUES = (212, 38, 135, 275, 178, 345)

FLAG_LABELS = {"truncated_by_embedder": "truncated", "cut_mid_sentence": "cut mid-sentence",
               "split_table": "split table", "over_budget": "over budget", "no_heading": "no heading"}
FLAG_ORDER = tuple(FLAG_LABELS)


@dataclass(frozen=True, slots=True)
class TextMark:
    """A finding to mark on the text (an audit's, say): a span, a kind and a line for people."""

    start: int
    end: int
    label: str
    kind: str = "mark"


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _css() -> str:
    fills = "\n".join(f".r{i}{{background:hsl({h} 80% 91%)}} .cb.r{i}{{border-color:hsl({h} 65% 45%)}} "
                      f".cb.r{i}::before{{background:hsl({h} 65% 42%)}}" for i, h in enumerate(HUES))
    # The chunk fills first: a tail, an answer or an overlap drawn over a chunk must win.
    return fills + """
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;background:#fafafa}
header{padding:14px 22px;border-bottom:1px solid #ddd;background:#fff}
header h1{margin:0 0 4px;font-size:20px}
.meta{color:#555}
.wrap{display:grid;grid-template-columns:minmax(0,1fr) 440px;gap:0}
@media (max-width:1100px){.wrap{grid-template-columns:1fr}}
main{padding:12px 22px 40px 22px;min-width:0}
aside{padding:12px 18px 40px;border-left:1px solid #ddd;background:#fff;font-size:13px}
aside h2{font-size:15px;margin:18px 0 6px}
pre.doc{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.6 ui-monospace,"SF Mono",Menlo,Consolas,monospace;
 background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 14px 12px 54px;margin:0}
pre.doc .cb{position:relative;border-left:2px solid #888;margin-left:-1px}
pre.doc .cb::before{content:attr(data-n);position:absolute;left:-46px;top:0;min-width:34px;text-align:right;
 font:bold 10px/1.6 system-ui,sans-serif;color:#fff;border-radius:3px;padding:0 4px;opacity:.9}

.ov{background:repeating-linear-gradient(135deg,#e6dcc8 0 4px,#f5efe2 4px 8px)}
.tail{background:repeating-linear-gradient(45deg,#f1c9c9 0 3px,#fbeaea 3px 7px);color:#777}
pre.doc .flagged{text-decoration:underline wavy #d03a3a55}
pre.doc.has-hits .c:not(.hit){opacity:.45}
pre.doc .hit{box-shadow:inset 0 2px 0 #e2711d,inset 0 -2px 0 #e2711d}
pre.doc .badge{position:relative}
pre.doc .badge::after{content:attr(data-rank);position:absolute;right:-2px;top:-1.2em;white-space:nowrap;
 font:bold 10px/1.5 system-ui,sans-serif;background:#e2711d;color:#fff;border-radius:8px;padding:0 6px;z-index:2}
pre.doc .gold{text-decoration:underline dotted #b8860b;text-underline-offset:3px}
.ans{background:#ffe45c;outline:1px solid #d4b000}
pre.doc .mk{text-decoration:underline 2px #7a3fc2;text-underline-offset:2px}
pre.doc .c.hl{filter:brightness(.9) saturate(1.6)}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:3px 6px;border-bottom:1px solid #eee;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.hitw{color:#2e8b57;font-weight:600}.miss{color:#d03a3a;font-weight:600}
.big{font-size:18px;font-weight:700}
.legend span{display:inline-block;margin:2px 8px 2px 0}
.sw{display:inline-block;width:12px;height:12px;border-radius:2px;vertical-align:-2px;margin-right:4px}
details summary{cursor:pointer;color:#333;margin:6px 0}
a{color:#1f5fb4;text-decoration:none}a:hover{text-decoration:underline}
.note{color:#8a5a00}
"""


_SCRIPT = """
document.querySelectorAll('pre.doc [data-c]').forEach(function (el) {
  el.addEventListener('mouseenter', function () {
    el.dataset.c.split(' ').forEach(function (c) {
      document.querySelectorAll('pre.doc [data-c~="' + c + '"]').forEach(function (x) { x.classList.add('hl'); });
    });
  });
  el.addEventListener('mouseleave', function () {
    document.querySelectorAll('pre.doc .hl').forEach(function (x) { x.classList.remove('hl'); });
  });
});
"""


def _chunk_line(c: Chunk) -> str:
    parts = [f"Chunk {c.id}" + (f" ({c.role})" if c.role != "chunk" else ""), f"{c.token_count} tokens",
             f"characters {c.start:,}–{c.end:,}"]
    if c.heading_path:
        parts.append(" > ".join(c.heading_path))
    flags = [FLAG_LABELS.get(f, f) for f in FLAG_ORDER if f in c.flags]
    if flags:
        parts.append(", ".join(flags))
    return " · ".join(parts)


def _cut_points(n: int, painted: Sequence[Chunk], hit_spans: Sequence[tuple[int, int, Any]],
                answers: Sequence[tuple[int, int]], gold: Sequence[tuple[int, int, int]],
                marks: Sequence[TextMark]) -> list[int]:
    """Where a run may change: every edge of a chunk, hit, answer, gold answer or mark, in order."""
    cuts = {0, n}
    for c in painted:
        cuts.update((c.start, c.end))
        if c.truncated_at is not None:
            cuts.add(c.truncated_at)
    for a, b, _h in hit_spans:
        cuts.update((a, b))
    for a, b in answers:
        cuts.update((a, b))
    for a, b, _q in gold:
        cuts.update((a, b))
    for m in marks:
        cuts.update((m.start, m.end))
    return sorted(p for p in cuts if 0 <= p <= n)


def _text_runs(doc: Document, painted: Sequence[Chunk], hits: Sequence[Any], answers: Sequence[tuple[int, int]],
               gold: Sequence[tuple[int, int, int]], marks: Sequence[TextMark]) -> str:
    """The document as runs: one `<span>` per stretch covered by the same chunks, hits, answers
    and marks; a zero-width marker before each chunk's first run."""
    text = doc.text
    n = len(text)
    by_id = {c.id: c for c in painted}
    index = SpanIndex([(c.start, c.end) for c in painted], [c.id for c in painted])
    rank_of = {cid: k for k, cid in enumerate(index.ids)}
    hit_spans = [(max(0, h.chunk.start), min(n, h.chunk.end), h) for h in hits]
    mark_index = SpanIndex([(m.start, m.end) for m in marks])
    gold_index = SpanIndex([(a, b) for a, b, _q in gold])
    points = _cut_points(n, painted, hit_spans, answers, gold, marks)
    starts_at: dict[int, list[int]] = {}
    for c in sorted(painted, key=lambda c: (c.start, c.id)):
        starts_at.setdefault(c.start, []).append(c.id)
    badge_at: dict[int, list[Any]] = {}
    for a, _b, h in hit_spans:
        badge_at.setdefault(a, []).append(h)
    anchored: set[int] = set()
    out: list[str] = []
    for p, q in itertools.pairwise(points):
        if p >= q:
            continue
        for cid in starts_at.get(p, ()):
            c = by_id[cid]
            flags = " ⚑" if c.flags - {"no_heading"} else ""
            out.append(f'<span class="cb r{rank_of[cid] % len(HUES)}" id="c{cid}" data-n="{cid}{flags}" '
                       f'title="{_e(_chunk_line(c))}"></span>')
        ids = index.ids_at(p)
        classes: list[str] = []
        title: list[str] = []
        attrs = ""
        if ids:
            classes.append("c")
            classes.append("ov" if len(ids) > 1 else f"r{rank_of[ids[0]] % len(HUES)}")
            attrs += f' data-c="{" ".join(map(str, ids))}"'
            if len(ids) > 1:
                title.append("Overlap of chunks " + ", ".join(map(str, ids)))
            else:
                title.append(_chunk_line(by_id[ids[0]]))
            cut_at = [t for t in (by_id[i].truncated_at for i in ids) if t is not None]
            if any(p >= t for t in cut_at):
                classes.append("tail")
                title.append("beyond the embedder's limit: never embedded")
        else:
            classes.append("gap")
        covering_hits = [h for a, b, h in hit_spans if a <= p < b]
        if covering_hits:
            classes.append("hit")
            title.append("retrieved: " + ", ".join(f"#{h.rank} ({h.score:.3g})" for h in covering_hits))
        if any(a <= p < b for a, b in answers):
            classes.append("ans")
            title.append("the answer")
        gold_here = gold_index.ids_at(p)
        if gold_here:
            classes.append("gold")
            title.append("gold answer: " + "; ".join(f"Q{gold[g][2]}" for g in gold_here))
        marks_here = mark_index.ids_at(p)
        if marks_here:
            classes.append("mk")
            classes.extend(sorted({f"mk-{_e(marks[m].kind)}" for m in marks_here}))
            title.extend(marks[m].label for m in marks_here)
        for h in sorted(badge_at.get(p, ()), key=lambda h: h.rank):
            out.append(f'<span class="badge" data-rank="#{h.rank}  {h.score:.3g}"></span>')
        anchor = ""
        for g in gold_here:
            qi = gold[g][2]
            if qi not in anchored and gold[g][0] == p:
                anchored.add(qi)
                anchor = f' id="q{qi}"'
                break
        out.append(f'<span{anchor} class="{" ".join(classes)}"{attrs} title="{_e(chr(10).join(title))}">'
                   f"{_e(text[p:q])}</span>")
    return "".join(out)


def corpus_note(name: str, corpus_size: int) -> str:
    """The line under a corpus page's title: whose figures these are, whose text is shown."""
    return (f"The gold figures and the question's ranking are over the whole corpus of {corpus_size:,} "
            f"documents; the text shown is one of them, {name}, and only its chunks are painted.")


def _figures(report: Report, answered_by: str, corpus_size: int = 1) -> list[str]:
    rows = [(f"Hit rate@{report.k}", f"{pct(report.hit_rate)}  ({report.hits}/{len(report.questions)})"),
            ("MRR", num(report.mrr))]
    if report.recall is not None:
        scope = report.span_scope()
        scope = f" ({scope})" if scope else ""
        rows += [(f"Recall@{report.k}{scope}", num(report.recall)),
                 (f"Precision@{report.k}{scope}", num(report.precision)), (f"IoU{scope}", num(report.iou))]
    c = report.cost
    rows += [("Chunks indexed", f"{c.chunks:,}"), ("Embedded tokens", f"{c.embedded_tokens:,}"),
             ("Token inflation", f"{c.inflation:.2f}×")]
    out = ["<h2>Gold set</h2>" if corpus_size <= 1 else f"<h2>Gold set · all {corpus_size:,} documents</h2>"]
    if answered_by:
        out.append(f'<div class="meta">Retrieval: {_e(answered_by)}</div>')
    out.append("<table>")
    for i, (name, value) in enumerate(rows):
        cls = ' class="n big"' if i == 0 else ' class="n"'
        out.append(f"<tr><th>{_e(name)}</th><td{cls}>{_e(value)}</td></tr>")
    out.append("</table>")
    return out


def _questions(report: Report, doc: Document, linked: set[int]) -> list[str]:
    out = ["<h2>Questions</h2>", '<table><tr><th class="n">#</th><th>Question</th><th>Result</th></tr>']
    for i, r in enumerate(report.questions, 1):
        q = r.question
        head = f'<a href="#q{i}">{_e(q.question)}</a>' if i in linked else _e(q.question)
        answer = " / ".join(q.answers) if q.answers else ", ".join(f"{a}–{b}" for a, b in q.references)
        if r.hit:
            key = r.retrieved[r.rank - 1] if r.rank and r.rank <= len(r.retrieved) else ""
            cid = key.rsplit("#", 1)[-1] if key.startswith(doc.doc_id + "#") else ""
            where = f' in <a href="#c{_e(cid)}">chunk {_e(cid)}</a>' if cid else ""
            result = f'<span class="hitw">hit</span> rank {r.rank}{where}'
        else:
            result = '<span class="miss">miss</span>'
            if r.diagnosis is not None:
                result += f"<br>{_e(r.diagnosis.message)}"
        out.append(f'<tr><td class="n">{q.line or i}</td><td>{head}<br><small>{_e(answer)}</small></td>'
                   f"<td>{result}</td></tr>")
    out.append("</table>")
    return out


def _hits(question: str, hits: Sequence[Any], doc: Document) -> list[str]:
    out = ["<h2>Question</h2>", f"<p><b>{_e(question)}</b></p>"]
    if not hits:
        out.append("<p>No chunk of this document was retrieved.</p>")
        return out
    out.append('<table><tr><th class="n">Rank</th><th class="n">Score</th><th>Chunk</th></tr>')
    for h in hits:
        c = h.chunk
        where = " > ".join(c.heading_path) or f"characters {c.start:,}–{c.end:,}"
        link = f'<a href="#c{c.id}">chunk {c.id}</a>' if c.role != "parent" else f"parent {c.id}"
        out.append(f'<tr><td class="n">#{h.rank}</td><td class="n">{h.score:.3g}</td>'
                   f"<td>{link}<br><small>{_e(where)}</small></td></tr>")
    out.append("</table>")
    return out


def _chunk_table(painted: Sequence[Chunk]) -> list[str]:
    out = [f"<details><summary>All {len(painted):,} chunks</summary>",
           '<table><tr><th class="n">#</th><th class="n">Tokens</th><th>Heading path · flags</th></tr>']
    for c in painted:
        flags = ", ".join(FLAG_LABELS.get(f, f) for f in FLAG_ORDER if f in c.flags)
        out.append(f'<tr><td class="n"><a href="#c{c.id}">{c.id}</a></td><td class="n">{c.token_count}</td>'
                   f"<td>{_e(' > '.join(c.heading_path))}{'<br><small>' + _e(flags) + '</small>' if flags else ''}"
                   f"</td></tr>")
    out.append("</table></details>")
    return out


def view_html(doc: Document, chunks: Sequence[Chunk], *, hits: Iterable[Any] = (), question: str = "",
              answers: Sequence[tuple[int, int]] = (), report: Report | None = None,
              config: EvalConfig | None = None, settings: str = "", mode: str = "",
              marks: Sequence[TextMark] = (), title: str = "", corpus_size: int = 1) -> str:
    """The page. `chunks`: the document's chunks (parents of parent_child are listed, not painted);
    `hits`: the question's retrieved chunks (`Hit`-like: chunk, rank, score), those of other
    documents left out; `answers`: spans to highlight as the question's answer; `report` and
    `config`: the gold set's figures and the settings they belong to (`settings` labels the
    chunking when no config is given); `mode`: the stage the figures came from ("exact", "pooled",
    "fallback"; "" reads the configuration's); `marks`: findings to underline (an audit's), skipped
    when empty; `corpus_size`: how many documents the figures and the question searched (a corpus
    open in the window). Above one, the title and the figures say so: the page shows one
    document's text, while its hit rate is the whole corpus's (issue 26: a reader took a corpus
    figure for the document's)."""
    n = len(doc.text)
    painted = [c for c in chunks if c.role != "parent" and c.doc_id in ("", doc.doc_id)
               and 0 <= c.start <= c.end <= n]
    own_hits = [h for h in hits if h.chunk.doc_id in ("", doc.doc_id)]
    marks = [m for m in marks if 0 <= m.start < m.end <= n]
    gold: list[tuple[int, int, int]] = []
    if report is not None:
        for i, r in enumerate(report.questions, 1):
            for a, b in answer_spans(doc, r.question):
                if 0 <= a < b <= n:
                    gold.append((a, b, i))
    label = config.label() if config is not None else settings
    tokens = sum(c.token_count for c in painted)
    flagged = sum(1 for c in painted if c.flags - {"no_heading"})
    name = title or doc.name
    corpus = report is not None or bool(question)
    if corpus_size > 1 and corpus:
        name += f" — one document of a corpus of {corpus_size:,}"
    head = [f"<header><h1>{_e(name)}</h1>",
            f'<div class="meta">{_e(label) + " · " if label else ""}{len(painted):,} chunks · {tokens:,} tokens · '
            f"{flagged:,} flagged · {n:,} characters</div>"]
    if corpus_size > 1 and corpus:
        head.append(f'<div class="meta note" id="corpus-note">{_e(corpus_note(doc.name, corpus_size))}</div>')
    head.append("</header>")
    legend = ['<h2>Legend</h2><div class="legend">',
              '<span><i class="sw r0"></i><i class="sw r1"></i>chunks (neighbours alternate)</span>',
              '<span><i class="sw ov"></i>overlap</span>',
              '<span><i class="sw tail"></i>never embedded (past the model\'s limit)</span>']
    if own_hits:
        legend.append('<span><i class="sw" style="box-shadow:inset 0 0 0 2px #e2711d"></i>retrieved</span>')
    if answers:
        legend.append('<span><i class="sw ans"></i>answer</span>')
    if gold:
        legend.append('<span><i class="sw" style="border-bottom:2px dotted #b8860b"></i>gold answers</span>')
    if marks:
        legend.append('<span><i class="sw" style="border-bottom:2px solid #7a3fc2"></i>marks</span>')
    legend.append("</div><p class=\"meta\">Hover the text for a chunk's tokens, heading path and flags; "
                  "the numbers in the margin start chunks.</p>")
    side: list[str] = legend
    if question:
        side += _hits(question, own_hits, doc)
    if report is not None:
        side += _figures(report, retrieval_line(config, mode or None) if config is not None or mode else "",
                         corpus_size)
        side += _questions(report, doc, {i for _a, _b, i in gold})
    if marks:
        side.append(f"<h2>Marks ({len(marks)})</h2><table>")
        for m in marks:
            side.append(f"<tr><td>{_e(m.kind)}</td><td>{_e(m.label)}</td>"
                        f'<td class="n">{m.start:,}–{m.end:,}</td></tr>')
        side.append("</table>")
    side += _chunk_table(painted)
    body = _text_runs(doc, painted, own_hits, answers, gold, marks)
    cls = "doc has-hits" if own_hits else "doc"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{_e(name)} — "
            f"Chunk Inspector</title><style>{_css()}</style></head><body>" + "".join(head)
            + f'<div class="wrap"><main><pre class="{cls}" id="doc">{body}</pre></main><aside>'
            + "\n".join(side) + "</aside></div><footer class=\"meta\" style=\"padding:8px 22px\">Made with Chunk "
            "Inspector. Every chunk is a span of the document: its text is exactly what is highlighted."
            f"</footer><script>{_SCRIPT}</script></body></html>\n")


__all__ = ["TextMark", "corpus_note", "view_html"]
