"""Settings ▸ PDF Backend (issue 30): how the PDFs the window opens become text.

- Built-in (the default): Markdown with headings, lists, code and tables read offline from the
  page layout;
- Plain text: each page's text, as before issue 30;
- Docling: the optional docling converter; its entry is disabled, with the reason in its tooltip
  and in the menu's text, when the package is not installed.

The choice is stored (`settings_schema.PDF_BACKEND`) and applied at start-up; a change applies to
the PDFs opened after it, and the status bar says so (File ▸ Open again re-reads an open PDF).
When a PDF opens with the built-in backend, the status bar says what was recovered (headings and
how sure, tables, lists, running heads dropped, hyphens joined), and when its conversion was read
from the disk (`convertcache`: the same file opened before with the same backend).
A stored "docling" on a machine without it falls back to the built-in backend, and says why.
"""

from __future__ import annotations

from typing import Any

from inspector.core.api import CONVERSION_KEPT, PDF_BACKENDS, docling_available, set_pdf_backend
from inspector.core.viewmodel.settings_schema import PDF_BACKEND
from inspector.qt.actions.make_action import choice_menu, settings_menu
from inspector.qt.messages import INFO

#: Said of a PDF whose conversion was read from the disk (`convertcache`).
KEPT_NOTE = "its conversion read from the disk, not made again"

LABELS = {"builtin": "&Built-in: headings, lists and tables (offline)", "plain": "&Plain text per page",
          "docling": "&Docling (optional package)"}
MISSING = "docling is not installed: pip install 'chunk-inspector[docling]'"


class PdfBackendActions:
    """The PDF backend menu of one window."""

    def __init__(self, window: Any) -> None:
        self.window = window
        self.settings = window.settings
        self.menu, self.group, self.actions = choice_menu(window, "&PDF Backend", PDF_BACKENDS, LABELS,
                                                          self.set_backend, tips={})
        has_docling = docling_available()
        if not has_docling:
            self.actions["docling"].setEnabled(False)
            self.actions["docling"].setText("&Docling (not installed)")
            self.actions["docling"].setToolTip(MISSING)
        settings_menu(window).addMenu(self.menu)
        saved = str(self.settings.get(PDF_BACKEND) or "builtin")
        self.note = ""
        if saved not in PDF_BACKENDS:
            saved = "builtin"
        if saved == "docling" and not has_docling:
            self.note = f"PDF backend: {MISSING}; PDFs open with the built-in backend"
            saved = "builtin"
        self.backend = saved
        set_pdf_backend(saved)
        self.actions[saved].setChecked(True)
        if self.note:
            window.messages.warning(self.note)
        window.state.documentChanged.connect(self._on_document)

    def _on_document(self, doc: Any) -> None:
        """A PDF opened with the built-in backend: what was recovered, in the status bar, and
        whether its conversion was read from the disk; never over a warning or an error (the
        file's own warnings, a file skipped), which the status bar keeps."""
        meta = getattr(doc, "meta", None) or {}
        note = meta.get("structure_note")
        messages = self.window.messages
        if note and not meta.get("warnings") and messages.kind == INFO:
            # Said first: the note runs past a narrow window's status bar (whole in the tooltip).
            kept = f" ({KEPT_NOTE})" if meta.get(CONVERSION_KEPT) else ""
            text = f"{doc.name}{kept}: {note}"
            messages.info(text, text, tag="pdf-structure")

    def set_backend(self, name: str) -> None:
        """Store the choice and use it for the PDFs opened from now on."""
        if name == "docling" and not docling_available():
            self.window.messages.error(f"PDF backend: {MISSING}")
            self.actions[self.backend].setChecked(True)
            return
        set_pdf_backend(name)
        self.backend = name
        self.settings.set(PDF_BACKEND, name)
        self.actions[name].setChecked(True)
        doc = getattr(self.window.state, "document", None)
        again = ""
        if doc is not None and str(doc.name).lower().endswith(".pdf"):
            again = f"; open {doc.name} again to re-read it"
        self.window.messages.info(f"PDFs open with the {name} backend from now on{again}")


def install_pdf_backend(window: Any) -> PdfBackendActions:
    return PdfBackendActions(window)
