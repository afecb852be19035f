"""The document view paints exactly the core's runs for the visible range; clicks select chunks."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QFont, QTextCursor

from inspector.core.chunking.registry import chunk_document
from inspector.core.viewmodel.segments import SpanIndex


def _repaint(view):
    view.viewport().repaint()
    assert view.last_paint is not None
    return view.last_paint


def _point_of(view, cp: int) -> QPoint:
    """Viewport point in the middle of the character at code-point offset `cp`."""
    cur = QTextCursor(view.document())
    cur.setPosition(view.umap.to_utf16(cp))
    left = view.cursorRect(cur)
    cur.setPosition(view.umap.to_utf16(cp + 1))
    right = view.cursorRect(cur)
    x = (left.x() + right.x()) // 2 if right.y() == left.y() else left.x() + 3
    return QPoint(x, left.center().y())


def _visible_code_point_range(view):
    first = view.firstVisibleBlock()
    last = view.cursorForPosition(QPoint(0, view.viewport().height() - 1)).block()
    return view.umap.to_codepoint(first.position()), view.umap.to_codepoint(last.position() + last.length() - 1)


def test_painted_runs_are_the_cores_runs(qtbot, make_window, open_doc):
    w = make_window()
    w.state.set_strategy("markdown")
    r = open_doc(w)
    doc = w.state.document
    expected = chunk_document(doc, "markdown", w.state.params)
    core = SpanIndex([(c.start, c.end) for c in expected])
    for fraction in (0.0, 0.37, 0.81):
        w.view.scroll_to_line_fraction(fraction)
        paint = _repaint(w.view)
        lo, hi = _visible_code_point_range(w.view)
        assert paint.lo <= lo and hi <= paint.hi  # the painted range covers what is on screen
        assert paint.segments == core.segments_in(paint.lo, paint.hi)
        assert list(paint.chunk_ids) == core.chunks_in(paint.lo, paint.hi)
        assert paint.segments, "some chunk is on screen"
    assert [(c.start, c.end) for c in r.chunks] == [(c.start, c.end) for c in expected]


def test_overlap_runs_are_painted_as_their_own_regions(qtbot, make_window, open_doc):
    w = make_window()
    w.state.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 500)
    w.strategy_panel.set_value("overlap", 50)
    open_doc(w)
    paint = _repaint(w.view)
    overlaps = [s for s in paint.segments if len(s.chunk_ids) == 2]
    assert overlaps and all(s.end - s.start == 50 for s in overlaps[:-1])
    # The overlap run is painted in a colour of its own, different from both chunks' tints.
    s = overlaps[0]
    theme = w.view.theme
    ranks = tuple(w.state.result.index.rank(c) for c in s.chunk_ids)
    blend = theme.overlap_fill(ranks)
    assert blend.rgb() != theme.fill(ranks[0]).rgb() and blend.rgb() != theme.fill(ranks[1]).rgb()
    assert theme.fill(ranks[0]).rgb() != theme.fill(ranks[1]).rgb()  # neighbours differ


def test_click_selects_and_cycles_through_overlapping_chunks(qtbot, make_window, open_doc):
    w = make_window()
    w.state.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 400)
    w.strategy_panel.set_value("overlap", 100)
    open_doc(w)
    seg = next(s for s in _repaint(w.view).segments if len(s.chunk_ids) == 2
               and w.state.document.text[s.start + 10] not in " \n")
    pt = _point_of(w.view, seg.start + 10)
    a, b = seg.chunk_ids
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=pt)
    assert w.state.selection == a
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=pt)
    assert w.state.selection == b
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=pt)
    assert w.state.selection == a
    # A click inside one chunk only selects it, and the table follows.
    single = next(s for s in _repaint(w.view).segments if len(s.chunk_ids) == 1
                  and w.state.document.text[s.start + 5] not in " \n")
    qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=_point_of(w.view, single.start + 5))
    assert w.state.selection == single.chunk_ids[0]
    rows = w.table.view.selectionModel().selectedRows()
    assert len(rows) == 1 and w.table.proxy.data(rows[0].siblingAtColumn(0)) == str(single.chunk_ids[0])


def test_astral_characters_keep_offsets_exact(qtbot, make_window, open_doc, tmp_path):
    # Every emoji takes two UTF-16 units in Qt: without conversion, offsets drift by one per emoji.
    text = "# Rockets 🚀\n\n" + "".join(f"Paragraph {i} 🚀🎉 with 𝄞 music and more words here.\n\n" for i in range(60))
    path = tmp_path / "emoji.md"
    path.write_text(text, encoding="utf-8")
    w = make_window()
    w.state.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 120)
    r = open_doc(w, path)
    assert w.view.umap.has_astral
    late = [c for c in r.chunks if c.start > 1000][:3]
    for c in late:
        w.view.scroll_to_offset(c.start)
        _repaint(w.view)
        for off in (c.start + 2, c.end - 2):
            if text[off] in "\n ":
                continue
            assert w.view.offset_at(_point_of(w.view, off)) == off
            assert c.id in w.view.chunk_ids_at(off)
        qtbot.mouseClick(w.view.viewport(), Qt.MouseButton.LeftButton, pos=_point_of(w.view, c.start + 2))
        assert w.state.selection == c.id
        # The painted band starts where Qt draws the chunk's first character.
        vis = w.view._visible_blocks()
        rects = w.view._rects(vis, w.view.umap.to_utf16(c.start), w.view.umap.to_utf16(c.end))
        cur = QTextCursor(w.view.document())
        cur.setPosition(w.view.umap.to_utf16(c.start))
        first = w.view.cursorRect(cur)
        assert rects and abs(rects[0].top() - first.top()) <= 1
        assert rects[0].left() == 0 or abs(rects[0].left() - first.left()) <= 1


def test_selecting_a_chunk_scrolls_it_into_view(qtbot, make_window, open_doc):
    w = make_window()
    r = open_doc(w)
    last = r.index.ids[-1]
    w.state.select(last)
    c = r.chunk(last)
    top, bottom = w.view.y_range(c.start, c.end)
    assert 0 <= top < w.view.viewport().height()
    assert last in _repaint(w.view).chunk_ids


def test_truncated_tail_is_shaded(qtbot, make_window, open_doc):
    w = make_window()
    w.state.set_strategy("fixed_tokens")
    w.strategy_panel.set_value("size", 600)
    r = open_doc(w)
    c = next(c for c in r.chunks if c.truncated_at is not None and c.end - c.truncated_at > 400)
    w.view.scroll_to_offset(c.truncated_at, context_lines=4)
    _repaint(w.view)
    vis = w.view._visible_blocks()
    u = w.view.umap
    kept = w.view._rects(vis, u.to_utf16(c.start), u.to_utf16(c.truncated_at))
    lost = w.view._rects(vis, u.to_utf16(c.truncated_at), u.to_utf16(c.end))
    img = w.view.viewport().grab().toImage()
    # Compare the right margin of a full line before the cut with one after it (no glyphs there).
    h = w.view.viewport().height()
    before = [rr for rr in kept if rr.top() >= 0 and rr.right() >= w.view.viewport().width() - 1][-1]
    after = next(rr for rr in lost[1:] if rr.top() >= 0 and rr.bottom() < h)
    x = int(before.right()) - 3
    kept_px = img.pixelColor(x, int(before.center().y())).rgb()
    lost_px = img.pixelColor(x, int(after.center().y())).rgb()
    assert kept_px == w.view.theme.fill(r.index.rank(c.id)).rgb()
    assert lost_px != kept_px


def test_headings_are_emphasized(qtbot, make_window, open_doc):
    w = make_window()
    r = open_doc(w)
    h = r.headings[3]
    block = w.view.document().findBlock(w.view.umap.to_utf16(h.start))
    fmt = block.begin().fragment().charFormat()
    assert fmt.fontWeight() == QFont.Weight.Bold
    body = w.view.document().findBlock(w.view.umap.to_utf16(h.end) + 2)
    assert body.begin().fragment().charFormat().fontWeight() != QFont.Weight.Bold


def test_next_and_previous_chunk(qtbot, make_window, open_doc):
    w = make_window()
    r = open_doc(w)
    w.state.select(r.index.ids[10])
    w.next_action.trigger()
    assert w.state.selection == r.index.ids[11]
    w.prev_action.trigger()
    w.prev_action.trigger()
    assert w.state.selection == r.index.ids[9]


def test_a_long_documents_gutter_keeps_its_width_while_re_chunking(qtbot, make_window, open_doc, wait_complete,
                                                                  monkeypatch):
    """The gutter's width is the text's left margin: each change lays the whole text out again
    (~70 ms for 20 MB, on the GUI thread). A gutter never narrows while its document is shown, and
    a long document's has room from the start (the handbook plays both, by moving the threshold)."""
    from inspector.qt.document import gutter

    def margins_seen(sizes):
        seen = []
        for v in sizes:
            w.strategy_panel.set_value("size", v)
            wait_complete(w)
            seen.append(w.view._margins)
        return seen

    w = make_window()
    open_doc(w)
    w.strategy_panel.set_strategy("fixed_chars")
    wait_complete(w)
    margins_seen([4000])
    open_doc(w)  # the same document again: its gutter starts over, fitting 24 chunks (2 digits)
    sizes = [4000, 200, 4000, 120]
    seen = margins_seen(sizes)
    assert seen[1] > seen[0] and seen[1:] == [seen[1]] * 3  # grew for 3-digit numbers, never narrowed

    monkeypatch.setattr(gutter, "RESERVE_FROM", 10_000)
    open_doc(w)
    first = w.view._margins
    assert set(margins_seen(sizes)) == {first}  # long document: one width for every result
    assert w.view.gutter.width_hint() == first[0]


def _y_span_by_layout(vis, a: int, b: int) -> tuple[float, float]:
    """The y span asked of Qt's layout for each position (how `y_span` worked before its table)."""
    h = float(vis.height)
    a16, b16 = vis.umap.to_utf16(a), vis.umap.to_utf16(max(a, b - 1))
    first, last = vis[0], vis[-1]
    if a16 < first.pos:
        top = -2.0
    elif a16 > last.pos + last.length:
        top = h + 2.0
    else:
        pt = vis.point_of(a16)
        top = pt[1] if pt is not None else -2.0
    if b16 > last.pos + last.length:
        bottom = h + 2.0
    elif b16 < first.pos:
        bottom = -2.0
    else:
        pt = vis.point_of(b16)
        bottom = pt[1] + pt[2] if pt is not None else h + 2.0
    return top, bottom


def test_y_spans_from_the_line_table_are_the_layouts(qtbot, make_window, open_doc, tmp_path):
    # Wrapped lines, short lines, blank lines, astral characters and one block of many lines, so
    # positions fall at line starts, ends, wraps and block separators.
    text = "".join(f"Line {i} 🚀 " + ("word " * (i % 7) * 9) + ("\n\n" if i % 3 else "\n") for i in range(80))
    text += "long " * 3000 + "\n" + "tail line\n" * 20
    path = tmp_path / "wrapped.md"
    path.write_text(text, encoding="utf-8")
    w = make_window()
    open_doc(w, path)
    for where in (0, len(text) // 3, text.index("long ") + 7000, len(text) - 5):
        w.view.scroll_to_offset(where)
        _repaint(w.view)
        vis = w.view._visible_blocks()
        lo, hi = vis.text_range()
        h = float(vis.height)

        def clamp(span, h=h):  # off-screen values only have to stay off screen
            return tuple(min(max(y, -2.0), h + 2.0) for y in span)

        step = max(1, (hi - lo) // 150)
        points = list(range(max(0, lo - 40), min(len(text), hi + 40), step))
        for a in points:
            for b in (a + 1, a + 17, a + 230, hi + 50):
                if b <= len(text):
                    assert clamp(vis.y_span(a, b)) == clamp(_y_span_by_layout(vis, a, b)), (where, a, b)


def test_the_gutter_names_a_chunk_where_its_boundary_is(qtbot, make_window, open_doc):
    """Issue 26: heading paths and token counts were only in the table and the side pane. Hovering
    a chunk's number in the gutter says "#n · heading path · N tokens (M word pieces)"; the text's
    own tooltip names the heading path too."""
    from PySide6.QtCore import QEvent, QPoint
    from PySide6.QtGui import QHelpEvent
    from PySide6.QtWidgets import QApplication, QToolTip

    w = make_window(size=(1400, 900))
    open_doc(w)
    qtbot.waitUntil(lambda: all(c.embed_tokens is not None for c in w.state.result.chunks), timeout=20_000)
    r = w.state.result
    c = next(c for c in r.chunks if len(c.heading_path) >= 2)
    w.view.scroll_to_offset(c.start, context_lines=2)
    qtbot.wait(20)
    vis = w.view.visible_blocks()
    y = vis.y_span(c.start, c.end)[0] + w.view.fontMetrics().height() / 2
    expected = (f"#{c.id} · {' › '.join(c.heading_path)} · {c.token_count:,} tokens "
                f"({c.embed_tokens:,} word pieces)")
    gutter = w.view.gutter
    # As the user gets it: a tooltip event over the chunk's number.
    pos = QPoint(gutter.width() // 2, int(y))
    QApplication.sendEvent(gutter, QHelpEvent(QEvent.Type.ToolTip, pos, gutter.mapToGlobal(pos)))
    assert QToolTip.text().split("\n")[0] == expected
    assert gutter.chunk_tooltip(y).split("\n")[0] == expected
    # Inside the chunk, below its first line: the chunk whose bar is there.
    y1 = vis.y_span(c.start, c.end)[1]
    if y1 - y > 3 * w.view.fontMetrics().height():
        assert f"#{c.id} · " in gutter.chunk_tooltip(y + 2 * w.view.fontMetrics().height())
    assert " › ".join(c.heading_path) in w.view.describe(c.id)


def test_a_rank_badge_stands_beside_its_own_hit(qtbot, make_window, open_doc):
    """The flag column's rank badge ("#2 0.655") and flags go beside a chunk with some of it on
    screen.
    The visible lines include the one just above the viewport; a hit ending on that line had its
    badge pinned to the top of the column, beside the next chunk, which read as that chunk being
    retrieved (docs/gold.png: "#2" beside the chunk holding a missed question's answer)."""
    from inspector.qt.document.hits import HitMark

    w = make_window(size=(1400, 900))
    w.state.set_strategy("fixed_chars")
    w.strategy_panel.set_value("size", 500)
    w.strategy_panel.set_value("overlap", 0)
    open_doc(w)
    chunks, text = w.state.result.chunks, w.state.document.text

    def inside_a_paragraph(c) -> bool:  # `c` ends on a line of a paragraph that goes on for lines
        return c.end - text.rfind("\n", 0, c.end) > 100 and text.find("\n", c.end) - c.end > 300

    i = next(k for k, c in enumerate(chunks) if c.start > len(text) // 2 and inside_a_paragraph(c) and c.flags)
    before, after = chunks[i], chunks[i + 1]
    w.view.set_hits([HitMark(2, before.start, before.end, 0.655, before.id),
                     HitMark(4, after.start, after.end, 0.5, after.id)])
    column = w.view.flag_column
    h = column.badge_height()
    sb = w.view.verticalScrollBar()
    w.view.scroll_to_offset(before.start, context_lines=0)
    checked = 0
    for _ in range(60):  # a line at a time, until `before` has left the viewport
        _repaint(w.view)
        column.repaint()
        vis = w.view.visible_blocks()
        on_lines, labelled = column.hit_spans(vis, h)
        flagged = {cid for cid, _flag in column.last_labels}
        y0, y1 = vis.y_span(before.start, before.end)
        ranks = {hit.rank for hit, *_ in labelled}
        if y1 <= 0:  # `before` ends above the viewport: no badge of its own, `after` keeps its
            assert 2 not in ranks and 4 in ranks
            assert before.id not in flagged  # nor its flags ("cut")
            checked += 1
            if 2 not in {hit.rank for hit, *_ in on_lines}:
                break
        elif y1 >= h / 2 + max(y0, 0):
            assert 2 in ranks
            if y1 - max(y0, 0) > 3 * h:  # room for its badge and a flag below it
                assert before.id in flagged
        sb.setValue(sb.value() + 1)
    assert checked >= 1
