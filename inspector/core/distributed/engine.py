"""The Ray engine: `evaluate`, `compare` and `sweep` of a `Workbench`, with the heavy part on a cluster.

The stages, each built from the core's own functions (`tasks.py`):

1. documents -> chunks: one task per document chunks it every way the run needs (its cold
   tokenization and parse paid once, on a worker); the chunks stay in the object store.
2. the texts the cache lacks: the driver looks every embedded text up in the persistent
   `EmbeddingCache` by content hash and plans the rest as model batches, formed the way
   `embed_texts` forms them (deduplicated, longest first, the embedder's batch size, one group of
   configurations after the other as the local sweep embeds them).
3. embedding: a Ray Data `map_batches` over an actor pool, the model loaded once per actor (a GPU
   per actor when the cluster has GPUs). Pooled runs first build each document's piece table
   (`build_piece_table`) the same way, once per document.
4. vectors back into the cache: the workers return vectors and the driver alone writes them, as
   atomic segment files (`EmbeddingCache.flush`) — one writer, so a cancelled or crashed run
   leaves whole segments or nothing, and a re-run by either engine is answered from the cache.
5. one evaluation task per configuration group (configurations that differ only in k share one),
   the gold set, the documents, the chunks and the vectors shared through the object store;
   each task builds the index and scores with `Workbench.build_index`, `Workbench.evaluate` and
   `score_group`, the local engine's functions. Sorting, confirming and the recommendation
   happen on the driver, as in `Workbench.sweep`.

Results are the local engine's: the same chunks, the same vectors (the same batches through the
same model code, or the cache), the same scoring code.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from inspector.core.chunking.registry import BUILTINS, get_strategy
from inspector.core.distributed.cluster import Session, connect
from inspector.core.distributed.tasks import (
    BuildPieces,
    EmbedBatches,
    EmbedderSpec,
    GroupJob,
    chunk_document,
    evaluate_group,
)
from inspector.core.evaluation.compare import Comparison, compare_reports
from inspector.core.evaluation.config import EvalConfig
from inspector.core.evaluation.metrics import Report
from inspector.core.evaluation.sweep import SweepResult, SweepRow, rank_key
from inspector.core.runtime.cancel import Cancelled
from inspector.core.workbench import Workbench
from inspector.core.workbench.evaluator import recommend

#: `progress(stage, done, total)`: stage is "chunking", "pieces", "embedding" or "evaluating";
#: counted in documents, documents, texts and configurations.
StageProgress = Callable[[str, int, int], None]
UNITS = {"chunking": "documents", "pieces": "documents", "embedding": "texts", "evaluating": "configurations"}


class RayEngine:
    """Runs a Workbench's evaluations on Ray. The workbench keeps what it is given (documents,
    gold set, embedder, cache); the engine adds a cluster session.

    `address`: join that cluster (None: start a local one, or use the Ray already initialized in
    this process); `workers`: embedding actors and tasks at once (default: the cluster's CPUs, or
    its GPUs when it has some); `progress`/`cancel`: as in the core (cancel returns True to stop:
    `Cancelled` for evaluate/compare, a partial `SweepResult` for sweeps, as the local engine)."""

    def __init__(self, workbench: Workbench, *, address: str | None = None, workers: int | None = None,
                 progress: StageProgress | None = None, cancel: Callable[[], bool] | None = None,
                 session: Session | None = None) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"--workers must be at least 1, got {workers}")
        self.wb = workbench
        self.session = session if session is not None else connect(address, workers)
        self.workers = workers
        self.progress = progress
        self.cancel = cancel
        self.device: dict[str, Any] | None = None
        """What the embedding actors reported: {"device", "dtype", "backend"} (None: no model ran)."""
        self.timings: dict[str, float] = {}
        """Seconds per stage, summed over the run (benchmarks read them); "embedding_first": of
        the embedding stage, the seconds until the first batch came back (actors started, model
        loaded)."""
        self.counts: dict[str, int] = {}
        """What each stage handled: documents, texts embedded, texts found in the cache, tasks."""

    # -- lifecycle ------------------------------------------------------------------------------
    def close(self) -> None:
        """Shut the cluster down if this engine started it."""
        self.session.close()

    def __enter__(self) -> RayEngine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- the Workbench's API ----------------------------------------------------------------------
    @property
    def embedder(self) -> Any:
        return self.wb.embedder

    def evaluate(self, config: EvalConfig, *, budget: int | None = None) -> Report:
        """`Workbench.evaluate` on the cluster."""
        report = self._phase([[config]], budget=budget, sweep=False)[0]
        if report is None:
            raise Cancelled()
        return report

    def compare(self, a: EvalConfig, b: EvalConfig, *, budget: int | None = None) -> Comparison:
        """`Workbench.compare` on the cluster: A (the baseline) and B scored at once."""
        reports = self._phase([[a], [b]], budget=budget, sweep=False)
        if reports[0] is None or reports[1] is None:
            raise Cancelled()
        return compare_reports(reports[0], reports[1], before_config=a, after_config=b)

    def sweep(self, configs: Iterable[EvalConfig], *, skipped: Sequence[tuple[str, str]] = (), confirm: int = 0,
              against: EvalConfig | None = None, budget: int | None = None, folds: int = 5,
              seed: int = 0) -> SweepResult:
        """`Workbench.sweep` on the cluster: every group of configurations in parallel, then the
        rows sorted, the best pooled ones confirmed exactly, the recommendation made, as locally."""
        configs = list(configs)
        if against is not None and against not in configs:
            configs.append(against)
        groups: dict[tuple, list[EvalConfig]] = {}
        for c in configs:
            groups.setdefault(c.chunking_key, []).append(c)
        scored = self._phase(list(groups.values()), budget=budget, sweep=True, against=against)
        cancelled = any(r is None for r in scored)
        rows: list[SweepRow] = [row for r in scored if r is not None for row in r]
        rows.sort(key=rank_key)
        if confirm and not cancelled:
            picks = [i for i, row in enumerate(rows)
                     if i < confirm and row.config.embedding == "pooled" and row.config.retriever != "bm25"]
            if picks:
                exact = self._phase([[replace(rows[i].config, embedding="exact")] for i in picks],
                                    budget=budget, sweep=False)
                for i, rep in zip(picks, exact, strict=True):
                    if rep is None:
                        cancelled = True
                    else:
                        rows[i] = replace(rows[i], exact=rep)
        questions = self.wb.questions()
        recommendation = None
        if against is not None and not cancelled and questions and rows:
            rows, recommendation = recommend(rows, against, budget=budget, folds=folds, seed=seed,
                                             findings_for=self.wb.evaluator.findings_for(),
                                             evidence_for=self.wb.evaluator.evidence_for())
        return SweepResult(tuple(rows), tuple(skipped), cancelled, recommendation, budget)

    # -- one phase: chunk, embed, evaluate -------------------------------------------------------
    def _phase(self, groups: list[list[EvalConfig]], *, budget: int | None, sweep: bool,
               against: EvalConfig | None = None) -> list[Any]:
        """Each group's result (a Report, or sweep rows), None for groups a cancel left unfinished."""
        ray = self.session.ray
        wb = self.wb
        docs = list(wb.documents)
        questions = wb.questions(docs)
        dense_groups = [g for g in groups if g[0].retriever != "bm25"]
        emb = wb.embedder_for("dense") if dense_groups else None
        spec = EmbedderSpec.of(emb) if emb is not None else None
        from inspector.core.embedding.embedder import cache_namespace

        ns = cache_namespace(emb) if emb is not None else None

        splits, group_split, wants, shipped = _plan_splits(groups)

        # 1. documents -> chunks, one task per document.
        doc_refs = [ray.put(d) for d in docs]
        chunk_task = ray.remote(num_cpus=1)(chunk_document)
        out_refs = [chunk_task.options(num_returns=len(splits) + 1).remote(r, splits, wants, shipped, spec)
                    for r in doc_refs]
        infos = self._wait([refs[-1] for refs in out_refs], "chunking")
        if any(i is None for i in infos):
            return [None] * len(groups)

        # 2. the texts the cache lacks, planned as `embed_texts` would embed them, group by group.
        vectors: dict[bytes, np.ndarray] = {}
        batches: list[tuple[list[str], list[bytes]]] = []
        planned: set[bytes] = set()
        bs = self._batch_size(spec) if spec is not None else 32
        cache = wb.cache
        dim = int(emb.dim) if emb is not None else 0
        found_count = 0

        def lookup(keys: list[bytes]) -> None:
            nonlocal found_count
            need = [k for k in keys if k not in vectors]
            if cache is not None and ns is not None and need:  # ns: there is a model
                found = cache.get_many(ns, need, dim)
                vectors.update(found)
                found_count += len(found)

        def plan(texts: Sequence[str], keys: Sequence[bytes]) -> None:
            unique: dict[bytes, str] = {}
            for t, k in zip(texts, keys, strict=True):
                unique.setdefault(k, t)
            lookup(list(unique))
            missing = [k for k in unique if k not in vectors and k not in planned]
            missing.sort(key=lambda k: -len(unique[k]))  # stable, as embed_texts sorts
            for b in range(0, len(missing), bs):
                part = missing[b:b + bs]
                batches.append(([unique[k] for k in part], part))
            planned.update(missing)

        from inspector.core.embedding.cache import text_key

        q_texts = list(dict.fromkeys(q.question for q in questions))
        questions_planned = False
        for i, g in enumerate(groups):
            first = g[0]
            if first.retriever == "bm25":
                continue
            want = (group_split[i], bool(first.with_prefix))
            texts = [t for info in infos for t in info[want][0]]
            keys = [k for info in infos for k in info[want][1]]
            if first.embedding == "exact":
                plan(texts, keys)
            else:
                lookup(list(dict.fromkeys(keys)))  # pooled: cached exact vectors where there are any
            if not questions_planned:
                plan(q_texts, [text_key(t) for t in q_texts])
                questions_planned = True
        self.counts["cached"] = self.counts.get("cached", 0) + found_count

        # 3a. pooled: piece tables (once per document) and prefix pieces, on the actors.
        pieces: dict[str, tuple[Any, dict]] | None = None
        pooled_groups = [i for i, g in enumerate(groups) if g[0].retriever != "bm25" and g[0].embedding == "pooled"]
        if pooled_groups and spec is not None:
            pieces = self._pieces(docs, infos, [(group_split[i], bool(groups[i][0].with_prefix))
                                                for i in pooled_groups], emb, spec)
            if pieces is None:
                return [None] * len(groups)

        # 3b + 4. embedding on the actor pool; vectors into the driver's cache as they arrive.
        if batches:
            assert spec is not None and ns is not None
            if not self._embed(batches, spec, ns, vectors):
                return [None] * len(groups)

        # 5. one evaluation task per group, everything shared through the object store.
        t0 = time.perf_counter()
        vectors_ref = None
        if dense_groups and ns is not None:
            keys_arr = (np.frombuffer(b"".join(vectors), dtype=np.uint8).reshape(-1, 32)
                        if vectors else np.zeros((0, 32), np.uint8))
            mat = np.stack(list(vectors.values())) if vectors else np.zeros((0, dim), np.float32)
            vectors_ref = ray.put((keys_arr, np.ascontiguousarray(mat, dtype=np.float32)))
        pieces_ref = ray.put(pieces) if pieces else None
        questions_ref = ray.put(tuple(questions))
        eval_task = ray.remote(num_cpus=1)(evaluate_group)
        refs = []
        for i, g in enumerate(groups):
            dense = g[0].retriever != "bm25"
            job = GroupJob(tuple(g), budget, against, spec if dense else None, ns, sweep)
            refs.append(eval_task.remote(job, questions_ref, vectors_ref if dense else None,
                                         pieces_ref if dense and g[0].embedding == "pooled" else None,
                                         len(docs), *doc_refs, *[refs_[group_split[i]] for refs_ in out_refs]))
        self.timings["share"] = self.timings.get("share", 0.0) + time.perf_counter() - t0
        return self._wait(refs, "evaluating")

    # -- stages ---------------------------------------------------------------------------------
    def _batch_size(self, spec: EmbedderSpec) -> int:
        if not spec.minilm:
            return int(getattr(spec.obj, "batch_size", 0) or 32)
        if spec.batch_size:
            return int(spec.batch_size)
        from inspector.core.embedding.device import default_batch_size

        return default_batch_size("cuda" if self._use_gpu(spec) else "cpu")

    def _use_gpu(self, spec: EmbedderSpec) -> bool:
        return spec.minilm and self.session.gpus > 0 and spec.device not in ("cpu", "mps")

    def _actors(self, spec: EmbedderSpec) -> tuple[int, dict[str, Any]]:
        """(pool size, resources per actor): a GPU each when the cluster has them, else a CPU."""
        if self._use_gpu(spec):
            n = min(self.workers or self.session.gpus, self.session.gpus)
            return max(1, n), {"num_gpus": 1, "num_cpus": 1}
        # An actor that dies fails the run (its batches are the driver's to plan again next run,
        # from the cache); no restarts also keeps Ray from warning about restartable actors.
        return max(1, min(self.workers or self.session.cpus, max(1, self.session.cpus))), {"num_cpus": 1}

    def _embed(self, batches: list[tuple[list[str], list[bytes]]], spec: EmbedderSpec, ns: str,
               vectors: dict[bytes, np.ndarray]) -> bool:
        """Run the planned batches on the actor pool; False when cancelled (what arrived is kept)."""
        import ray.data

        from inspector.core.embedding.cache import FLUSH_EVERY

        t0 = time.perf_counter()
        total = sum(len(k) for _t, k in batches)
        size, resources = self._actors(spec)
        size = min(size, len(batches))  # no actor (and model load) without a batch to embed
        source = ray.data.from_items([{"texts": t, "keys": k} for t, k in batches],
                                     override_num_blocks=min(len(batches), 4 * size))
        ds = source.map_batches(EmbedBatches, fn_constructor_kwargs={"spec": spec}, batch_size=1,
                            compute=ray.data.ActorPoolStrategy(size=size), batch_format="numpy",
                            zero_copy_batch=True, **resources)
        cache = self.wb.cache
        done = 0
        self._report("embedding", 0, total)
        ok = True
        first = True
        it = iter(ds.iter_batches(batch_size=None, batch_format="numpy"))
        try:
            for out in it:
                if first:  # the actors' start and model load, before any batch came back
                    first = False
                    self.timings["embedding_first"] = (self.timings.get("embedding_first", 0.0)
                                                       + time.perf_counter() - t0)
                keys = [bytes(k) for k in out["key"]]
                vecs = np.asarray(out["vector"], dtype=np.float32)
                if keys and self.device is None:
                    self.device = {"device": str(out["device"][0]), "dtype": spec.dtype,
                                   "backend": str(out["backend"][0])}
                vectors.update(zip(keys, vecs, strict=True))
                if cache is not None:
                    cache.put_many(ns, keys, vecs)
                    if cache.pending_count() >= FLUSH_EVERY:
                        cache.flush()
                done += len(keys)
                self._report("embedding", done, total)
                if self.cancel is not None and self.cancel():
                    ok = False
                    break
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
            if cache is not None:
                cache.flush()  # whole segments only: atomic files, whatever stopped the loop
            self.timings["embedding"] = self.timings.get("embedding", 0.0) + time.perf_counter() - t0
            self.counts["embedded"] = self.counts.get("embedded", 0) + done
        return ok

    def _pieces(self, docs: list[Any], infos: list[Any], wanted: list[tuple[int, bool]], emb: Any,
                spec: EmbedderSpec) -> dict[str, tuple[Any, dict]] | None:
        """Piece tables and prefix pieces of every document for pooled groups; None when cancelled."""
        import pickle

        import ray.data

        from inspector.core.retrieval.pooled import (
            cached_piece_table,
            piece_encoder_for,
            store_piece_table,
        )
        from inspector.core.runtime.cachedir import default_cache_dir

        t0 = time.perf_counter()
        encoder = piece_encoder_for(emb)
        cache_dir = default_cache_dir()  # where pooled_for keeps them for the local engine
        out: dict[str, tuple[Any, dict]] = {}
        rows = []
        for d, info in zip(docs, infos, strict=True):
            prefixes = sorted({p for split, wp in wanted if wp for p in info[(split, wp)][2]})
            table = cached_piece_table(d, encoder, cache_dir)
            out[d.doc_id] = (table, {})
            if table is None or prefixes:
                rows.append({"doc": pickle.dumps(d, protocol=pickle.HIGHEST_PROTOCOL), "build": table is None,
                             "prefixes": prefixes})
        if not rows:
            return out
        size, resources = self._actors(spec)
        source = ray.data.from_items(rows, override_num_blocks=len(rows))
        ds = source.map_batches(BuildPieces, fn_constructor_kwargs={"spec": spec}, batch_size=1,
                            compute=ray.data.ActorPoolStrategy(size=min(size, len(rows))),
                            batch_format="numpy", **resources)
        by_id = {d.doc_id: d for d in docs}
        done = 0
        self._report("pieces", 0, len(rows))
        it = iter(ds.iter_batches(batch_size=None, batch_format="numpy"))
        try:
            for batch in it:
                for raw in batch["result"]:
                    doc_id, table, prefix_pieces = pickle.loads(raw)
                    if table is not None:
                        store_piece_table(table, by_id[doc_id], cache_dir)  # the driver alone writes
                    else:
                        table = out[doc_id][0]
                    out[doc_id] = (table, prefix_pieces)
                    done += 1
                self._report("pieces", done, len(rows))
                if self.cancel is not None and self.cancel():
                    return None
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
            self.timings["pieces"] = self.timings.get("pieces", 0.0) + time.perf_counter() - t0
        return out

    def _wait(self, refs: list[Any], stage: str) -> list[Any]:
        """Results in order as tasks finish, with progress; None for those a cancel left out (the
        rest are cancelled on the cluster). Ctrl-C cancels them too, then propagates."""
        ray = self.session.ray
        t0 = time.perf_counter()
        results: list[Any] = [None] * len(refs)
        pending = {r: i for i, r in enumerate(refs)}
        self._report(stage, 0, len(refs))
        try:
            while pending:
                if self.cancel is not None and self.cancel():
                    break
                ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.5)
                for r in ready:
                    results[pending.pop(r)] = self._get(r)
                    self._report(stage, len(refs) - len(pending), len(refs))
        finally:
            for r in pending:
                with contextlib.suppress(Exception):  # finished meanwhile, or already gone
                    ray.cancel(r, force=True)
            self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - t0
            self.counts[stage] = self.counts.get(stage, 0) + len(refs)
        return results

    def _get(self, ref: Any) -> Any:
        """ray.get, with a task's own exception raised as itself (one line for the command line),
        not wrapped in Ray's traceback."""
        ray = self.session.ray
        try:
            return ray.get(ref)
        except ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, BaseException):
                raise cause from None
            raise

    def _report(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)


__all__ = ["RayEngine", "StageProgress", "UNITS"]


def _plan_splits(groups: list[list[EvalConfig]]) -> tuple[list[EvalConfig], list[int], list[tuple[int, bool]],
                                                          list[Any]]:
    """The chunkings a run needs (strategy, params, describe, embed view: one config each), the chunking of
    each group, which (chunking, with prefix) texts are embedded, and the strategies that are not
    built in (shipped to the workers)."""
    split_index: dict[tuple, int] = {}
    splits: list[EvalConfig] = []
    for g in groups:
        key = (g[0].strategy, tuple(sorted(g[0].params.items())), g[0].describe, g[0].embed_view)
        if key not in split_index:
            split_index[key] = len(splits)
            splits.append(g[0])
    group_split = [split_index[(g[0].strategy, tuple(sorted(g[0].params.items())), g[0].describe,
                                g[0].embed_view)]
                   for g in groups]
    wants = sorted({(group_split[i], bool(g[0].with_prefix)) for i, g in enumerate(groups)
                    if g[0].retriever != "bm25"})
    shipped = [s for s in {get_strategy(c.strategy).name: get_strategy(c.strategy) for c in splits}.values()
               if s not in BUILTINS]
    return splits, group_split, wants, shipped
