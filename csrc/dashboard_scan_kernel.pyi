# The compiled module built from scan_kernel.c (see its comments and dashboard/actions/grams.py):
# slots and flags answer with (place, start, count) triples of int64, as bytes.
from typing import Any

from numpy.typing import NDArray

def slots(
    window: bytes | memoryview,
    word: int,
    step: int,
    hashed: bool,
    mult: int,
    bits: int,
    table: NDArray[Any],
    start: NDArray[Any],
    count: NDArray[Any],
    /,
) -> bytes: ...
def flags(
    window: bytes | memoryview,
    word: int,
    step: int,
    hashed: bool,
    mult: int,
    bits: int,
    first: NDArray[Any],
    second: NDArray[Any],
    heads: NDArray[Any],
    low: int,
    /,
) -> bytes: ...
def fill(table: NDArray[Any], values: NDArray[Any], shift: int, /) -> None: ...
