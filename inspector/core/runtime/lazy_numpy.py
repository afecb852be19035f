"""numpy, imported when a module first reads one of its names (issue 31: importing numpy was ~0.1 s
of the window's start before its first paint, which needs none of it).

    from typing import TYPE_CHECKING
    if TYPE_CHECKING:
        import numpy as np
    else:
        from inspector.core.runtime.lazy_numpy import np

`np.zeros(...)` then imports numpy on the first read, under the import system's own lock (safe from
any thread, unlike `importlib.util.LazyLoader` on Python 3.11), and keeps each name it has read on
the stand-in, so later reads are an attribute lookup like the module's own. Annotations stay
strings (`from __future__ import annotations`); module-level code must not read `np` (that would
import numpy at once)."""

from __future__ import annotations

from typing import Any


class _Numpy:
    """A stand-in for the numpy module that imports it on first use."""

    def __getattr__(self, name: str) -> Any:
        import numpy

        value = getattr(numpy, name)
        self.__dict__[name] = value  # read once: the next read finds it without this method
        return value

    def __repr__(self) -> str:
        return "<numpy, imported on first use>"


np = _Numpy()
