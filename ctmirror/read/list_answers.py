"""A reader's Python functions that answer a list of numbers per row, called by DuckDB two ways: natively, for a
short answer, and through Arrow for a long one.

DuckDB hands an Arrow function its rows and takes its answer back through pyarrow's dataset scanner: about 0.4 ms a
call, whatever the answer's size. A native function costs a few microseconds a call, but DuckDB converts a list it
answers number by number (5 µs each); answered as the text of a list ('[1,2,3]', cast to a list in SQL), a number
costs 0.3 µs. So a plan asks the native function first, which answers a list of up to LISTED_LIMIT numbers as text
and NULL for a longer one, and the Arrow function only where that was NULL:

    unnest(coalesce(f_listed(args)::BIGINT[], f(args)))

DuckDB's coalesce evaluates its second argument only for the rows whose first is NULL, so a call whose answers are
all short never reaches the Arrow function. A long answer, computed by the native call, is kept for the Arrow
call of the same arguments, which follows it in the same statement.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

import duckdb
import numpy as np
import pyarrow as pa

# The longest answer given as text: parsing 1,000 numbers in SQL costs about what the Arrow call does.
LISTED_LIMIT = 512
# Long answers kept for their Arrow call, up to this many bytes: DuckDB asks the native function for a vector of
# rows (2,048 calls of a batch) before the Arrow function for those of them that were long; one left behind (a
# statement cancelled in between) is let go among the oldest.
KEPT_BYTES = 64 * 1024 * 1024


def register_list_functions(con: duckdb.DuckDBPyConnection, name: str, arrow: Callable[..., pa.Array],
                            listed_name: str, listed: Callable[..., str | None], arguments: list,
                            result_type: duckdb.sqltypes.DuckDBPyType) -> None:
    """Registers a function's two forms on a connection: `name` through Arrow (its answers of type `result_type`)
    and `listed_name` native (the short ones as text)."""
    con.create_function(name, arrow, arguments, result_type, type="arrow", null_handling="special",
                        side_effects=False)
    con.create_function(listed_name, listed, arguments, duckdb.sqltypes.VARCHAR, type="native",
                        null_handling="special", side_effects=False)


class ListAnswers:
    """One function's answers, by arguments: as text from `listed` (None when long), as an array from `take`."""

    def __init__(self, answer: Callable[..., np.ndarray]) -> None:
        self._answer = answer
        self._kept: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._kept_bytes = 0
        self._lock = threading.Lock()  # DuckDB may call the functions from two of its threads at once

    def listed(self, *arguments: Hashable) -> str | None:
        """The answer as the text of a list, or None (kept for `take`) when it is longer than LISTED_LIMIT."""
        found = self._answer(*arguments)
        if len(found) <= LISTED_LIMIT:
            return "[" + ",".join(map(str, found.tolist())) + "]"
        with self._lock:
            if arguments not in self._kept:
                self._kept[arguments] = found
                self._kept_bytes += found.nbytes
            while self._kept_bytes > KEPT_BYTES and len(self._kept) > 1:
                self._kept_bytes -= self._kept.popitem(last=False)[1].nbytes
        return None

    def arrow_lists(self, columns: list[pa.Array], value_type: pa.DataType) -> pa.ListArray:
        """The Arrow function's answer: for each row of its argument columns, the answer `take` gives, as one list
        array."""
        offsets = [0]
        found: list[np.ndarray] = [np.empty(0, value_type.to_pandas_dtype())]
        for arguments in zip(*(column.to_pylist() for column in columns), strict=True):
            answer = self.take(*arguments)
            found.append(answer)
            offsets.append(offsets[-1] + len(answer))
        return pa.ListArray.from_arrays(pa.array(np.asarray(offsets, np.int32), pa.int32()),
                                        pa.array(np.concatenate(found), value_type))

    def take(self, *arguments: Hashable) -> np.ndarray:
        """The answer as an array: the one `listed` kept for these arguments, or computed now."""
        with self._lock:
            found = self._kept.pop(arguments, None)
            if found is not None:
                self._kept_bytes -= found.nbytes
        return self._answer(*arguments) if found is None else found
