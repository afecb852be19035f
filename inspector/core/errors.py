"""One error type for bad input, shaped so the CLI and the window can print it as one line."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input from the user's disk: names the file, the line where it applies, and the problem."""

    def __init__(self, problem: str, *, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.problem = problem
        self.path = path
        self.line = line
        self.field = field
        super().__init__(self.one_line())

    def one_line(self) -> str:
        where = ""
        if self.path is not None:
            where = str(self.path)
            if self.line is not None:
                where += f":{self.line}"
            where += ": "
        field = f"field '{self.field}': " if self.field else ""
        return f"{where}{field}{self.problem}"


def write_failure(path: object, exc: InputError | OSError, what: str = "") -> str:
    """The one line a failed write of `path` shows: an InputError's own line (the file was not
    what we expected), else "could not write [what to] path: reason" for the system's error."""
    if isinstance(exc, InputError):
        return exc.one_line()
    return f"could not write {what + ' to ' if what else ''}{path}: {exc.strerror or exc}"
