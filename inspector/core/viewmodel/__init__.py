"""The window's view-model, without Qt: what views need computed from the domain (overlap
segments, UTF-16 offsets, the text laid out as QPlainTextEdit blocks, boundary differences, the
slider scale, the settings schema, the embedding map's projection, the trace's plan, the HTML
export). Qt-free like the rest of the core, so it is tested with plain pytest; the window
renders what it computes."""
