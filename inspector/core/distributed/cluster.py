"""Joining or starting a Ray cluster for the engine, with errors people can act on.

Ray is optional (`pip install 'chunk-inspector[ray]'`) and heavy to import, so it is imported here,
inside functions, only when `--engine ray` asks for it. Every way this can fail (Ray missing, an
address that does not answer, a cluster that refuses the driver) ends as one `EngineError` line.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.runtime import keptfiles
from inspector.core.runtime.cachedir import ENV_VAR

INSTALL_HINT = "pip install 'chunk-inspector[ray]'"
#: Seconds a cluster address has to answer before the engine gives up on it.
CONNECT_TIMEOUT = 5.0
#: Environment the workers need: offline model loading, and the tokenizer's threads off on the CPU
#: (as the Makefile sets for the app); the backend choice travels with the driver's, and whether a
#: long document's token index, structure and word pieces are kept on disk (`keptfiles`).
_FORWARDED_ENV = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "TOKENIZERS_PARALLELISM", "CHUNK_INSPECTOR_BACKEND",
                  keptfiles.ENV_VAR)


class EngineError(RuntimeError):
    """Ray is missing or the cluster cannot be used: the command line prints it as one line
    (exit status 2)."""


def import_ray() -> Any:
    """The `ray` module with Ray Data, or EngineError naming the install command."""
    try:
        import ray
        import ray.data  # noqa: F401  (the embedding stage needs it; fail here, not mid-run)
    except ImportError as exc:
        missing = getattr(exc, "name", None) or str(exc)
        raise EngineError(f"--engine ray needs Ray with Ray Data, which is not installed ({missing}); "
                          f"install it with: {INSTALL_HINT}") from None
    return ray


def parse_address(address: str) -> tuple[str, int] | None:
    """(host, port) of an explicit cluster address ("host:port" or "ray://host:port"); None for
    "auto" and other forms Ray resolves itself."""
    a = address.strip()
    if a.startswith("ray://"):
        a = a[len("ray://"):]
    if "://" in a or a in ("", "auto", "local"):
        return None
    host, sep, port = a.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]") or "127.0.0.1", int(port)


def check_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Raise EngineError unless an explicit address accepts a TCP connection within `timeout`
    (Ray itself retries an unreachable address for a minute before it says so)."""
    hp = parse_address(address)
    if hp is None:
        return
    try:
        with socket.create_connection(hp, timeout=timeout):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        if isinstance(exc, socket.timeout):
            why = f"no answer within {timeout:g} s"
        raise EngineError(f"cannot reach the Ray cluster at {address}: {why}") from None


def package_root() -> Path:
    """The folder holding the `inspector` package the driver runs."""
    import inspector

    return Path(inspector.__file__).resolve().parent.parent


def runtime_env(*, remote: bool) -> dict[str, Any]:
    """What the workers run with: the driver's environment switches, and the driver's own code —
    on a local cluster by PYTHONPATH (same machine, same files), on a remote one uploaded as a
    module (`py_modules`), so both engines run the same core. The cluster must have the
    dependencies installed (`pip install chunk-inspector[ray]` on its image)."""
    env = {k: os.environ[k] for k in _FORWARDED_ENV if k in os.environ}
    # Same machine: the same cache folder (the embedding cache only read there, by the one-writer
    # rule; a long document's kept files written by the task that builds them, each atomically).
    if not remote and ENV_VAR in os.environ:
        env[ENV_VAR] = os.environ[ENV_VAR]
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    out: dict[str, Any] = {"env_vars": env}
    if remote:
        out["py_modules"] = [str(package_root() / "inspector")]
    else:
        paths = [str(package_root())] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    return out


def quiet_ray_data(ray: Any) -> None:
    """Ray Data's progress bars and execution banners off: the engine reports its own stages on
    stderr, and stdout stays the report's."""
    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    if hasattr(ctx, "print_on_execution_start"):
        ctx.print_on_execution_start = False
    for name in ("ray.data", "ray._private", "ray"):
        logging.getLogger(name).setLevel(logging.ERROR)
    raylet_messages_to_stderr(ray)


def raylet_messages_to_stderr(ray: Any) -> None:
    """Ray's driver prints the cluster's error messages ("(raylet) A worker died or was killed
    ...") to stdout from a thread of its own, whatever `log_to_driver` says, and at any moment:
    in the middle of a `--format json` report, which then no longer parses (CI, stop 38). They are
    diagnostics, so they go to stderr with the engine's stage lines. The hook is Ray's own printer,
    looked up by name at each message; only the cluster's messages (pid "raylet") change stream, so
    a later `ray.init(log_to_driver=True)` in the same process still prints workers' stdout to
    stdout. Where a Ray release has no such printer, nothing changes (a test holds the routing on
    the Ray we install)."""
    worker: Any = getattr(getattr(ray, "_private", None), "worker", None)
    printer = getattr(worker, "print_to_stdstream", None)
    if worker is None or printer is None or getattr(printer, "_to_stderr", False):
        return

    def to_stderr(data: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        if data.get("pid") == "raylet":
            data = {**data, "is_err": True}
        return printer(data, *args, **kwargs)

    to_stderr._to_stderr = True  # type: ignore[attr-defined]
    worker.print_to_stdstream = to_stderr


@dataclass
class Session:
    """A driver's connection to a cluster."""

    ray: Any
    owned: bool
    """True when this session started Ray (local cluster or `ray.init(address=...)`) and so shuts
    it down; False when Ray was already initialized in this process (tests, notebooks)."""
    address: str | None
    cpus: int
    gpus: int

    def close(self) -> None:
        if self.owned and self.ray.is_initialized():
            settle_data_threads()
            self.ray.shutdown()


#: Ray Data's threads in the driver that call into Ray while an iteration runs: its block
#: prefetcher (`ray.wait` on the blocks it is given) and the workers of its threaded batch
#: iterator (they pull blocks through the executor).
_DATA_THREADS = ("Prefetcher", "iter_threaded")


def settle_data_threads(timeout: float = 10.0) -> list[str]:
    """Stop Ray Data's block prefetchers and threaded iterators' workers, and wait (at most
    `timeout` seconds in all) for them to end; the names of the threads still running after that.
    Only before `ray.shutdown()`: it stops every iteration in this process.

    Why: an iteration that Ctrl-C left (its generator held by the traceback, not closed) keeps
    these threads; one that calls into Ray after `ray.shutdown()` meets a core worker already shut
    down, and Ray then ends the whole process with status 1 ("The core worker has already been
    shutdown ... The process will exit"): the driver said "interrupted" and exited 1, not 130
    (about once in fifteen interrupted runs). A prefetcher is stopped as its iterator stops it; a
    worker as its consumer's end stops it (the worker's stop event, set: it ends at its next
    check, after the block it may be fetching). Where a Ray release builds them otherwise, the
    threads are only waited for."""
    threads = [t for t in threading.enumerate() if t.name in _DATA_THREADS and t.is_alive()]
    for t in threads:
        target = getattr(t, "_target", None)
        if t.name == "Prefetcher":
            stop = getattr(getattr(target, "__self__", None), "stop", None)
            if callable(stop):
                stop()
            continue
        for cell in getattr(target, "__closure__", None) or ():
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            if isinstance(value, threading.Event):
                value.set()
    end = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, end - time.monotonic()))
    return [t.name for t in threads if t.is_alive()]


def start_local(workers: int | None = None) -> Session:
    """A local cluster of `workers` CPUs (default: this machine's), for tests and benchmarks that
    share one across runs: the engine uses an initialized Ray as it finds it."""
    return connect(None, workers)


def connect(address: str | None = None, workers: int | None = None) -> Session:
    """Join the cluster at `address`, or start a local one with `workers` CPUs (default: all).
    A Ray already initialized in this process is used as it is."""
    ray = import_ray()
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if address and address != "auto" and parse_address(address) != parse_address(current):
            check_address(address)
            raise EngineError(f"this process is already connected to the Ray cluster at {current}, "
                              f"not {address}")
        quiet_ray_data(ray)
        return _session(ray, owned=False, address=address)
    if address:
        check_address(address)
    # Ray's own warnings (e.g. its token-authentication notice on every start) off: stderr carries
    # the engine's stage lines, and anything that stops the run arrives as an exception.
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": logging.ERROR,
                              "runtime_env": runtime_env(remote=bool(address))}
    try:
        if address:
            ray.init(address=address, **kwargs)
        else:
            ray.init(num_cpus=max(1, workers or os.cpu_count() or 1), include_dashboard=False, **kwargs)
    except Exception as exc:  # noqa: BLE001  (any refusal is one line for the user)
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        where = f"join the Ray cluster at {address}" if address else "start a local Ray cluster"
        raise EngineError(f"cannot {where}: {first}") from None
    quiet_ray_data(ray)
    return _session(ray, owned=True, address=address)


def _session(ray: Any, *, owned: bool, address: str | None) -> Session:
    res = ray.cluster_resources()
    return Session(ray, owned, address, int(res.get("CPU", 0)), int(res.get("GPU", 0)))


__all__ = ["EngineError", "Session", "connect", "start_local", "import_ray", "check_address",
           "parse_address", "runtime_env", "INSTALL_HINT"]
