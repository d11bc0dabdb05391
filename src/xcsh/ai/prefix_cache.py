"""Memoised conversion of a growing message history (docs/performance.md, profile 15).

A conversation is converted for the model on every request, and between two requests it
usually only grows at the end. :class:`PrefixCache` keeps the converted form of the
history up to its newest *cut* and converts only what follows.

Contract of the wrapped ``convert(items, params)``: it is a pure function of the items'
contents and of ``params``, which the caller's ``key`` determines completely, and
``convert(a + b) == convert(a) + convert(b)`` whenever ``b`` starts with an item for which
``is_cut`` is true (the conversion carries no state across a cut and looks neither back
nor ahead across it). Items are recognised by identity (a prefix that is equal item by
item also counts as unchanged: it converts the same), so items that are reused from the
cache must never be changed in place: a changed message is a new object (pruning,
compaction and branch switches replace messages, never mutate them). The converted
items are shared between calls, so callers must not change them in place either.

Because neither side changes, the remembered outputs can also be kept as JSON text:
:meth:`PrefixCache.encoded` hands back a request's history with its remembered part as
``msgspec.Raw`` fragments, each encoded once, so encoding a request body costs only its new
part (docs/performance.md, "Fourth session: flat requests").
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable, Sequence
from operator import is_
from typing import Any, Generic, TypeVar, cast

import msgspec

T = TypeVar("T")
R = TypeVar("R")


class _Entry(msgspec.Struct, Generic[T, R]):
    key: Hashable
    inputs: list[T] = msgspec.field(default_factory=list)
    outputs: list[R] = msgspec.field(default_factory=list)
    # (len(inputs), len(outputs)) at every cut taken, ascending; (0, 0) first
    cuts: list[tuple[int, int]] = msgspec.field(default_factory=lambda: [(0, 0)])
    # the JSON of outputs[:len(marks)], filled on demand (PrefixCache.encoded): ``items`` holds
    # their items one after another, ``raws`` the fragment of each output that has items, and
    # marks[i] is (len(raws), len(items)) once output i is encoded
    items: list[Any] = msgspec.field(default_factory=list)
    raws: list[msgspec.Raw] = msgspec.field(default_factory=list)
    marks: list[tuple[int, int]] = msgspec.field(default_factory=list)

    def truncate(self, index: int) -> None:
        """Keep the prefix up to cut number ``index``."""
        n_in, n_out = self.cuts[index]
        del self.inputs[n_in:], self.outputs[n_out:], self.cuts[index + 1 :]
        if len(self.marks) > n_out:
            n_raws, n_items = self.marks[n_out - 1] if n_out else (0, 0)
            del self.raws[n_raws:], self.items[n_items:], self.marks[n_out:]


class PrefixCache(Generic[T, R]):
    """``convert`` memoised over the longest unchanged prefix of its input (see the module docstring).

    Up to ``slots`` histories are remembered at once (per ``key``; several sessions or
    models in one process), the least recently used is dropped first.
    """

    def __init__(
        self,
        convert: Callable[..., list[R]],
        is_cut: Callable[[T], bool],
        *,
        slots: int = 4,
        offset: bool = False,
        flat: bool = False,
    ) -> None:
        """``offset``: call ``convert(items, params, n)`` with ``n`` the number of outputs already
        converted before ``items`` (for a conversion that numbers its outputs across the whole
        history; it must then return one output per position it counts). ``flat``: each output
        is a list whose items the caller sends one after another (see :meth:`encoded`)."""
        self._convert = convert
        self._is_cut = is_cut
        self._slots = slots
        self._offset = offset
        self._flat = flat
        self._entries: list[_Entry[T, R]] = []

    def _call(self, items: Sequence[T], params: Any, before: int) -> list[R]:
        if self._offset:
            return self._convert(items, params, before)
        return self._convert(items, params)

    def __call__(self, items: Sequence[T], key: Hashable = None, params: Any = None) -> list[R]:
        """``convert(items, params)``, reusing the converted prefix of an earlier call with the same
        ``key`` where it still holds."""
        entry = self._reusable(items, key)
        start = len(entry.inputs) if entry is not None else 0
        last = self._last_cut(items, start)
        if last > start:
            if entry is None:
                entry = self._remember(key)
            head = items[start:last]
            entry.inputs.extend(head)
            entry.outputs.extend(self._call(head, params, len(entry.outputs)))
            entry.cuts.append((len(entry.inputs), len(entry.outputs)))
            start = last
        tail = self._call(items[start:], params, len(entry.outputs) if entry is not None else 0)
        return entry.outputs + tail if entry is not None else tail

    def clear(self) -> None:
        self._entries.clear()

    def encoded(self, values: list[Any], start: int = 0) -> list[Any]:
        """``values`` with the remembered outputs of the latest call as their JSON text, for encoding.

        ``values`` holds what the latest call returned from index ``start`` on (each output's
        items one after another with ``flat``), usually inside a request body. The remembered
        outputs become ``msgspec.Raw`` fragments, each encoded once with msgspec and written
        verbatim by it (one fragment per output, its items joined by commas with ``flat``), so
        ``msgspec.json.encode`` of the result gives the same bytes as of ``values`` while it
        encodes only what follows. ``values`` is returned unchanged when the run from
        ``start`` is not, item by item and by identity, what the latest call remembered (a
        caller replaced one of them, or the call remembered nothing), and when msgspec cannot
        encode an output: the caller's own encoding then takes its usual path. Call it before
        the next call to this cache: only the latest call's outputs are spliced.
        """
        if not self._entries or not self._entries[0].outputs:
            return values
        entry = self._entries[0]
        try:
            self._encode_more(entry)
        except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
            return values
        items = entry.items
        end = start + len(items)
        if len(values) < end or not all(map(is_, items, values[start:end])):
            return values
        return [*values[:start], *entry.raws, *values[end:]]

    def _encode_more(self, entry: _Entry[T, R]) -> None:
        """Encode the outputs of ``entry`` that are not encoded yet (in order; stops at a failure)."""
        encode = msgspec.json.encode
        flat = self._flat
        marks, raws, items = entry.marks, entry.raws, entry.items
        for output in entry.outputs[len(marks) :]:
            if flat:
                text = encode(output)[1:-1]  # "[a,b]" -> "a,b": the items as they sit in a list
                if text:
                    raws.append(msgspec.Raw(text))
                items.extend(cast(list[Any], output))
            else:
                raws.append(msgspec.Raw(encode(output)))
                items.append(output)
            marks.append((len(raws), len(items)))

    def _last_cut(self, items: Sequence[T], start: int) -> int:
        """The index of the newest cut after ``start`` (``start`` when there is none)."""
        is_cut = self._is_cut
        for index in range(len(items) - 1, start, -1):
            if is_cut(items[index]):
                return index
        return start

    def _reusable(self, items: Sequence[T], key: Hashable) -> _Entry[T, R] | None:
        """The remembered history that ``items`` continues, trimmed to where it still holds."""
        entries = self._entries
        for position, entry in enumerate(entries):
            if entry.key != key or not entry.inputs or not items or entry.inputs[0] is not items[0]:
                continue
            self._trim(entry, items)
            entries.insert(0, entries.pop(position))
            return entry
        return None

    def _remember(self, key: Hashable) -> _Entry[T, R]:
        entry = _Entry[T, R](key)
        self._entries.insert(0, entry)
        del self._entries[self._slots :]
        return entry

    def _trim(self, entry: _Entry[T, R], items: Sequence[T]) -> None:
        """Cut ``entry`` back to its newest cut that ``items`` still starts with and that still sits on a cut."""
        inputs = entry.inputs
        head = items[: len(inputs)]
        if isinstance(head, list):
            # a list compares its items by identity first, in C: ~6x faster than map(is_) over a
            # long history; an equal item that is another object converts the same (the contract)
            same = head == inputs
            if same:
                entry.inputs = inputs = head  # equal copies adopted: the next check finds them by identity
        else:
            same = len(head) == len(inputs) and all(map(is_, inputs, head))
        if same and (len(inputs) == len(items) or self._is_cut(items[len(inputs)])):
            return
        if same:
            agree = len(inputs)
        else:
            agree = next(
                (i for i, (old, new) in enumerate(zip(inputs, items, strict=False)) if old is not new),
                min(len(inputs), len(items)),
            )
        index = bisect_right(entry.cuts, (agree, len(entry.outputs) + 1)) - 1
        while index > 0:
            n_in = entry.cuts[index][0]  # <= agree: items start with inputs[:n_in]
            if n_in == len(items) or self._is_cut(items[n_in]):
                break
            index -= 1
        entry.truncate(index)
