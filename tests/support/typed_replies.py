"""Does a JSON reply have the type a method declares? `check(value, hint)` walks the value
against the hint (TypedDicts with their required and optional keys and no others, generic
TypedDicts such as Page[T], lists, dicts, unions, Literals, str, int, float, bool, None, Any) and
raises AssertionError naming the first place where they differ."""

from __future__ import annotations

import types
from typing import Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints, is_typeddict


def check(value: Any, hint: Any, where: str = "reply") -> None:
    """AssertionError, naming the path (`reply.hits[0].page`), where `value` is not a `hint`."""
    if hint is Any:
        return
    origin, args = get_origin(hint), get_args(hint)
    if is_typeddict(hint) or is_typeddict(origin):
        _typed_dict(value, hint, where)
    elif origin in (Union, types.UnionType):
        failures = []
        for option in args:
            try:
                check(value, option, where)
                return
            except AssertionError as failed:
                failures.append(str(failed))
        raise AssertionError(f"{where}: none of {hint}: {'; '.join(failures)}")
    elif origin is Literal:
        assert value in args, f"{where}: {value!r} is not one of {args}"
    elif origin is list:
        assert isinstance(value, list), f"{where}: {type(value).__name__}, not a list"
        for n, item in enumerate(value):
            check(item, args[0] if args else Any, f"{where}[{n}]")
    elif origin is dict or hint is dict:
        assert isinstance(value, dict), f"{where}: {type(value).__name__}, not a dict"
        for key, item in value.items():
            assert isinstance(key, str), f"{where}: a key {key!r} that is not text"
            check(item, args[1] if args else Any, f"{where}.{key}")
    elif hint is None or hint is type(None):
        assert value is None, f"{where}: {value!r}, not null"
    elif hint is float:
        assert isinstance(value, int | float) and not isinstance(value, bool), f"{where}: {value!r}"
    elif hint is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: {value!r}"
    else:
        assert isinstance(value, hint), f"{where}: {value!r} is not a {hint}"


def _typed_dict(value: Any, hint: Any, where: str) -> None:
    typed = get_origin(hint) or hint
    bound: dict[Any, Any] = dict(
        zip(getattr(typed, "__parameters__", ()), get_args(hint), strict=False)
    )
    fields = {name: _bound(h, bound) for name, h in get_type_hints(typed).items()}
    assert isinstance(value, dict), f"{where}: {type(value).__name__}, not an object"
    missing = typed.__required_keys__ - value.keys()
    unknown = value.keys() - fields.keys()
    assert not missing, f"{where}: {sorted(missing)} missing ({typed.__name__})"
    assert not unknown, f"{where}: {sorted(unknown)} not in {typed.__name__}"
    for name, item in value.items():
        check(item, fields[name], f"{where}.{name}")


def _bound(hint: Any, bound: dict[Any, Any]) -> Any:
    """`hint` with each type variable of a generic TypedDict replaced by its argument."""
    if isinstance(hint, TypeVar):
        return bound.get(hint, Any)
    args = get_args(hint)
    if not args or not bound:
        return hint
    origin = get_origin(hint)
    replaced = tuple(_bound(a, bound) for a in args)
    if origin in (Union, types.UnionType):
        return Union[replaced]  # noqa: UP007 - a union built from a tuple
    return origin[replaced] if origin is not None else hint
