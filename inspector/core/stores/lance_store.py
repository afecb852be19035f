"""Reading a LanceDB table (what `langchain_community.vectorstores.LanceDB` fills).

LangChain's LanceDB integration adds rows {"vector": [...], "id": ..., "text": ...,
"metadata": {...}}; LanceDB stores "vector" as a fixed-size list of float32 and "metadata" as a
struct of the metadata's keys. Other pipelines name the columns otherwise, so the vector column
is found by its type (a fixed-size list of floats; "vector" when there are several), the text
column by name ("text", then "page_content", "document", ...), and the metadata is the
"metadata" column (a struct, a map or a JSON string) or, without one, the other scalar columns.
LanceDB keeps no metric with the table (it is chosen per query; LangChain's default is "l2").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.errors import InputError
from inspector.core.runtime.cancel import check_cancelled
from inspector.core.stores.collection import (
    TEXT_FIELDS,
    StoreCollection,
    empty_collection,
    json_metadata,
    listed,
    need_package,
    no_text,
    open_failure,
    unknown_collection,
)
from inspector.core.stores.spec import StoreSpec

ID_COLUMNS = ("id", "_id", "chunk_id", "node_id")
VECTOR_NAME = "vector"


def _table_names(db: Any) -> list[str]:
    """Every table of the connection (`list_tables` pages; older clients only have `table_names`)."""
    lister = getattr(db, "list_tables", None)
    if lister is None:
        return list(db.table_names())
    names: list[str] = []
    token = None
    while True:
        resp = lister(page_token=token) if token else lister()
        if isinstance(resp, (list, tuple)):
            return [str(n) for n in resp]
        names.extend(str(n) for n in resp.tables)
        token = getattr(resp, "page_token", None)
        if not token:
            return names


def read_lancedb(spec: StoreSpec, folder: Path, limit: int | None) -> StoreCollection:
    """The rows of table `spec.collection` in the LanceDB folder, in the table's order."""
    shown = spec.location
    lancedb = need_package("lancedb", "lancedb")
    try:
        db = lancedb.connect(str(folder))
        names = _table_names(db)
        if spec.collection not in names:
            raise unknown_collection("lancedb", shown, spec.collection, names)
        table = db.open_table(spec.collection)
        total = int(table.count_rows())
        if total == 0:
            raise empty_collection("lancedb", shown, spec.collection)
        check_cancelled()
        data = table.head(limit) if limit is not None and limit < total else table.to_arrow()
    except InputError:
        raise
    except Exception as exc:
        raise open_failure("lancedb", shown, exc) from None
    return from_arrow(data, spec, total)


def from_arrow(data: Any, spec: StoreSpec, total: int) -> StoreCollection:
    """A StoreCollection from a pyarrow Table laid out as described in the module's docstring."""
    import pyarrow as pa

    shown = spec.location
    schema = data.schema
    n = data.num_rows
    floats = [f.name for f in schema
              if pa.types.is_fixed_size_list(f.type) and pa.types.is_floating(f.type.value_type)]
    if len(floats) > 1 and VECTOR_NAME in floats:
        floats = [VECTOR_NAME]
    if len(floats) > 1:
        raise InputError(f"the LanceDB table {spec.collection!r} has several vector columns "
                         f"({listed(floats)}); reading one of several is not supported", path=shown)
    vector_field = floats[0] if floats else ""
    vectors = _vectors(data.column(vector_field), n, spec) if vector_field else None

    text_field = next((name for name in TEXT_FIELDS if name in schema.names
                       and (pa.types.is_string(schema.field(name).type)
                            or pa.types.is_large_string(schema.field(name).type))), "")
    if not text_field:
        raise no_text("lancedb", shown, spec.collection,
                      [f"{f.name} ({f.type})" for f in schema])
    texts = tuple(t or "" for t in data.column(text_field).to_pylist())
    if not any(texts):
        raise no_text("lancedb", shown, spec.collection, [f"{text_field} (all empty)"])

    id_field = next((name for name in ID_COLUMNS if name in schema.names), "")
    ids = (tuple(str(v) for v in data.column(id_field).to_pylist()) if id_field
           else tuple(str(i) for i in range(n)))

    if "metadata" in schema.names:
        column = data.column("metadata")
        if pa.types.is_map(column.type):
            metas = tuple({} if m is None else dict(m) for m in column.to_pylist())
        else:
            metas = tuple(json_metadata(m) for m in column.to_pylist())
    else:
        used = {vector_field, text_field, id_field}
        others = [f.name for f in schema if f.name not in used and not pa.types.is_nested(f.type)]
        metas = tuple(data.select(others).to_pylist()) if others else tuple({} for _ in range(n))
    return StoreCollection("lancedb", spec.collection, shown, ids, texts, metas, vectors, None,
                           text_field, vector_field, total)


def _vectors(column: Any, n: int, spec: StoreSpec) -> np.ndarray:
    arr = column.combine_chunks()
    if arr.null_count:
        raise InputError(f"{arr.null_count} of the {n} rows of the LanceDB table {spec.collection!r} "
                         "have no vector", path=spec.location)
    dim = arr.type.list_size
    values = arr.flatten().to_numpy(zero_copy_only=False)
    return np.asarray(values, dtype=np.float32).reshape(n, dim)
