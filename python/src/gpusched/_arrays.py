"""Checks of array and scalar inputs: wrong dtype -> TypeError, wrong shape or value -> InvalidArgumentError
(a ValueError), each naming the field (and the index of the first bad value)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional, Union

import numpy as np
import numpy.typing as npt

from gpusched._core import InvalidArgumentError

LIMIT = 1 << 50  # gpusched's bound on CPU and memory quantities (products stay within int64)


def invalid(field: str, why: str) -> InvalidArgumentError:
    e = InvalidArgumentError(f"{field}: {why}")
    e.field = field  # type: ignore[attr-defined]
    return e


def _as_array(value: Any, field: str) -> npt.NDArray[Any]:
    try:
        return np.asarray(value)
    except (TypeError, ValueError) as e:  # ragged nested lists, and similar
        raise TypeError(f"{field}: cannot be read as an array ({e})") from None


def _shape(arr: npt.NDArray[Any], field: str, n: Optional[int], broadcast: bool) -> npt.NDArray[Any]:
    if arr.ndim == 0 and broadcast and n is not None:
        return np.full(n, arr[()], dtype=arr.dtype)
    if arr.ndim != 1:
        raise invalid(field, f"expected a 1-D array, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise invalid(field, f"expected {n} values (one per item), got {arr.shape[0]}")
    return arr


def int_column(
    value: Any, field: str, n: Optional[int] = None, *, lo: int = 0, hi: int = LIMIT, broadcast: bool = False
) -> npt.NDArray[np.int64]:
    """A 1-D int64 array of integers within lo..hi (a scalar is repeated n times when broadcast)."""
    arr = _as_array(value, field)
    kind = arr.dtype.kind
    if kind not in "iu":
        hint = " (round and convert with .astype(np.int64) first)" if kind == "f" else ""
        raise TypeError(f"{field}: expected integers, got dtype {arr.dtype}{hint}")
    arr = _shape(arr, field, n, broadcast)
    if arr.size:
        if kind == "u" and int(arr.max()) > hi:
            i = int(np.argmax(arr > hi))
            raise invalid(f"{field}[{i}]", f"must be within {lo}..{hi}, got {arr[i]}")
        bad = (arr < lo) | (arr > hi)
        if bad.any():
            i = int(np.argmax(bad))
            raise invalid(f"{field}[{i}]", f"must be within {lo}..{hi}, got {arr[i]}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def float_column(
    value: Any, field: str, n: Optional[int] = None, *, lo: float = 0.0, hi: float = 1.0, broadcast: bool = False
) -> npt.NDArray[np.float64]:
    """A 1-D float64 array of finite numbers within lo..hi."""
    arr = _as_array(value, field)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{field}: expected numbers, got dtype {arr.dtype}")
    arr = _shape(arr, field, n, broadcast).astype(np.float64)
    finite = np.isfinite(arr)
    if not finite.all():
        i = int(np.argmax(~finite))
        raise invalid(f"{field}[{i}]", f"must be a finite number, got {arr[i]}")
    bad = (arr < lo) | (arr > hi)
    if bad.any():
        i = int(np.argmax(bad))
        raise invalid(f"{field}[{i}]", f"must be within {lo:g}..{hi:g}, got {arr[i]}")
    return np.ascontiguousarray(arr)


def bool_column(value: Any, field: str, n: int) -> npt.NDArray[np.bool_]:
    arr = _as_array(value, field)
    if arr.dtype.kind != "b":
        raise TypeError(f"{field}: expected booleans, got dtype {arr.dtype}")
    return np.ascontiguousarray(_shape(arr, field, n, broadcast=True))


def str_column(value: Union[str, Sequence[str], npt.NDArray[Any]], field: str, n: int) -> list[str]:
    """n strings; one string is repeated n times."""
    if isinstance(value, str):
        return [value] * n
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "UO":
            raise TypeError(f"{field}: expected strings, got dtype {value.dtype}")
        if value.ndim != 1:
            raise invalid(field, f"expected a 1-D array, got shape {value.shape}")
        items: list[Any] = value.tolist()
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise TypeError(f"{field}: expected a string or a sequence of strings, got {type(value).__name__}")
    if len(items) != n:
        raise invalid(field, f"expected {n} values (one per item), got {len(items)}")
    for i, s in enumerate(items):
        if not isinstance(s, str):
            raise TypeError(f"{field}[{i}]: expected a string, got {type(s).__name__}")
    return items


def length_of(field_values: dict[str, Any]) -> int:
    """The common length of the 1-D arguments (scalars and strings broadcast)."""
    n: Optional[int] = None
    first = ""
    for field, v in field_values.items():
        if v is None or isinstance(v, str):
            continue
        shape = np.shape(v)
        if len(shape) == 0:
            continue
        if len(shape) != 1:
            raise invalid(field, f"expected a 1-D array, got shape {shape}")
        m = shape[0]
        if n is None:
            n, first = m, field
        elif m != n:
            raise invalid(field, f"has {m} values but {first} has {n}")
    if n is None:
        raise invalid(next(iter(field_values)), "at least one argument must be an array")
    return n
