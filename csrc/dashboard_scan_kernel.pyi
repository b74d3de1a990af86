# The compiled module built from scan_kernel.c (see its comments and dashboard/actions/grams.py):
# each function answers with (place, run) pairs of int64, as bytes.
from typing import Any

from numpy.typing import NDArray

def slots(
    window: bytes, word: int, step: int, hashed: bool, mult: int, bits: int, table: NDArray[Any], /
) -> bytes: ...
def flags(
    window: bytes,
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
