"""A sequence whose items are made when read: the one ``__getitem__`` of the engine's long lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class MadeOnRead(Sequence[T]):
    """Items made by ``_rows(start, stop)`` (a contiguous run, ``0 <= start <= stop <= len``), so a
    page that reads 15 of 100,000 makes 15; other slices and negative indices as a list's."""

    def _rows(self, start: int, stop: int) -> list[T]:
        raise NotImplementedError

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self._rows(start, max(start, stop))
            return [self[j] for j in range(start, stop, step)]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self._rows(i, i + 1)[0]
