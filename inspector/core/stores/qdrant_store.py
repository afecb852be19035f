"""Reading a Qdrant collection: a local folder (`QdrantClient(path=...)`) or a server (`url=`).

LangChain's Qdrant integration (`langchain_qdrant.QdrantVectorStore`) writes points with the
payload {"page_content": text, "metadata": {...}} and its dense vector under the name ""
(Qdrant's unnamed vector), beside a sparse one ("langchain-sparse") in hybrid mode. Plain
payloads ({"text": ..., "source": ...}) are read too. Of the collection's dense vectors the only
one is used; several named dense vectors, or multi-vectors, are an error naming them.

A local folder is opened by one client at a time (Qdrant locks it): a folder held by a running
program is a clear error, never a wait. The folder must already hold Qdrant's `meta.json`
(the client would otherwise create a new store there). A server's API key, when it needs one,
is read from the environment variable QDRANT_API_KEY and never shown.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any

from inspector.core.errors import InputError
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.stores.collection import (
    PAGE,
    StoreCollection,
    as_vectors,
    empty_collection,
    listed,
    need_package,
    no_text,
    open_failure,
    split_payload,
    unknown_collection,
)
from inspector.core.stores.spec import StoreSpec

META_FILE = "meta.json"
API_KEY_ENV = "QDRANT_API_KEY"
_METRICS = {"cosine": "cosine", "dot": "ip", "euclid": "l2", "manhattan": "l1"}


def _client(spec: StoreSpec, folder: Path | None) -> Any:
    qdrant_client = need_package("qdrant_client", "qdrant")
    try:
        if folder is None:
            options: dict[str, Any] = {"url": spec.location, "api_key": os.environ.get(API_KEY_ENV) or None,
                                       "timeout": 30}
            if "check_compatibility" in inspect.signature(qdrant_client.QdrantClient).parameters:
                options["check_compatibility"] = False  # one request less, and no warning when it fails
            return qdrant_client.QdrantClient(**options)
        return qdrant_client.QdrantClient(path=str(folder))
    except Exception as exc:  # "already accessed by another instance": the folder's lock
        raise open_failure("qdrant", spec.location, exc) from None


def _dense_vector(spec: StoreSpec, config: Any) -> tuple[str | None, str | None]:
    """(name of the dense vector to read, metric); (None, None) when the collection has none.
    The unnamed vector's name is ""."""
    if config is None:
        return None, None
    if isinstance(config, dict):
        if not config:
            return None, None
        if len(config) > 1:
            raise InputError(f"the Qdrant collection {spec.collection!r} has several named vectors "
                             f"({listed(sorted(config))}); reading one of several is not supported",
                             path=spec.location)
        name, params = next(iter(config.items()))
    else:
        name, params = "", config
    if getattr(params, "multivector_config", None) is not None:
        raise InputError(f"the Qdrant collection {spec.collection!r} stores multi-vectors (several "
                         "vectors a point, late interaction); they are not supported", path=spec.location)
    distance = getattr(params, "distance", None)
    raw = str(getattr(distance, "value", distance) or "").lower()
    return str(name), _METRICS.get(raw, raw or None)


def read_qdrant(spec: StoreSpec, folder: Path | None, limit: int | None) -> StoreCollection:
    """The points of `spec.collection` (payload and dense vector), in Qdrant's scroll order
    (by point id). `folder` None reads from the server at `spec.location`."""
    shown = spec.location
    if folder is not None and not (folder / META_FILE).is_file():
        raise InputError(f"not a Qdrant folder: it holds no {META_FILE}", path=shown)
    client = _client(spec, folder)
    try:
        try:
            names = [c.name for c in client.get_collections().collections]
            if spec.collection not in names:
                raise unknown_collection("qdrant", shown, spec.collection, names)
            info = client.get_collection(spec.collection)
            vector_name, metric = _dense_vector(spec, info.config.params.vectors)
            total = info.points_count
            if total is None:
                total = client.count(spec.collection, exact=True).count
            total = int(total)
            if total == 0:
                raise empty_collection("qdrant", shown, spec.collection)
            want = total if limit is None else min(limit, total)
            points: list[Any] = []
            offset = None
            while len(points) < want:
                check_cancelled()
                page, offset = client.scroll(spec.collection, limit=min(PAGE, want - len(points)),
                                             offset=offset, with_payload=True,
                                             with_vectors=vector_name is not None)
                points.extend(page)
                if offset is None or not page:
                    break
        except InputError:
            raise
        except Exception as exc:
            raise open_failure("qdrant", shown, exc) from None
    finally:
        client.close()
    return _collection(spec, points, vector_name, metric, total)


def _collection(spec: StoreSpec, points: list[Any], vector_name: str | None, metric: str | None,
                total: int) -> StoreCollection:
    ids: list[str] = []
    texts: list[str] = []
    metas: list[dict[str, Any]] = []
    rows: list[Any] = []
    used: dict[str, int] = {}
    keys: set[str] = set()
    for p in points:
        ids.append(str(p.id))
        text, field, meta = split_payload(p.payload)
        if text and field:
            used[field] = used.get(field, 0) + 1
        else:
            keys.update(meta)
        texts.append(text or "")
        metas.append(meta)
        if vector_name is not None:
            vec = p.vector
            if isinstance(vec, dict):
                vec = vec.get(vector_name)
            if not isinstance(vec, list):
                raise InputError(f"point {p.id} of the Qdrant collection {spec.collection!r} has no "
                                 f"dense vector {vector_name!r}", path=spec.location)
            rows.append(vec)
    if not used:
        raise no_text("qdrant", spec.location, spec.collection, sorted(keys))
    vectors = as_vectors(rows, len(ids), "qdrant", spec.location) if vector_name is not None else None
    return StoreCollection("qdrant", spec.collection, spec.location, tuple(ids), tuple(texts), tuple(metas),
                           vectors, metric, max(used, key=lambda k: used[k]), vector_name or "", total)
