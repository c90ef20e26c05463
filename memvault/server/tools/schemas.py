"""The tools' JSON schemas as a model reads them: the same values accepted, fewer characters.

Every session pays for `tools/list` in context tokens, and pydantic's schemas spend them on
what says nothing to a model: a title per field that repeats its name, `"default": null`, and
`anyOf` lists where a list of types says the same (`{"type": ["string", "null"]}`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, cast

# Keywords whose value is one schema, a list of schemas, or a mapping of names to schemas.
_ONE = ("items", "additionalProperties", "not")
_MANY = ("anyOf", "oneOf", "allOf", "prefixItems")
_NAMED = ("properties", "$defs", "patternProperties")
# Keywords that constrain only values of their own type, so they stay true in a type list.
_TYPE_BOUND = frozenset(
    {
        "type",
        "enum",
        "items",
        "additionalProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "properties",
        "required",
        "description",
    }
)


def compact(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` with each definition used once written where it is used, without titles or
    null defaults, each `anyOf` of plain types as one type list, and no `type` beside an
    `enum` (its values say it)."""
    defs = schema.get("$defs", {})
    uses = Counter(_refs(schema))
    once = {f"#/$defs/{name}": body for name, body in defs.items() if uses[f"#/$defs/{name}"] == 1}
    node = _inlined(schema, once)
    kept = {name: body for name, body in defs.items() if f"#/$defs/{name}" not in once}
    node.pop("$defs", None)
    if kept:
        node = {"$defs": _inlined(kept, once), **node}
    return cast(dict[str, Any], _walked(_walked(node, _compacted), _enum_untyped))


def _refs(node: Any) -> Iterator[str]:
    """Every `$ref` in a schema."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            else:
                yield from _refs(value)
    elif isinstance(node, list):
        for item in node:
            yield from _refs(item)


def _inlined(node: Any, once: dict[str, Any]) -> Any:
    """`node` with each `{"$ref": R}` whose R is in `once` replaced by its definition."""
    if isinstance(node, list):
        return [_inlined(item, once) for item in node]
    if not isinstance(node, dict):
        return node
    if node.keys() == {"$ref"} and node["$ref"] in once:
        return _inlined(once[node["$ref"]], once)
    return {key: _inlined(value, once) for key, value in node.items() if key != "$defs"}


def _walked(schema: Any, fix: Callable[[dict[str, Any]], dict[str, Any]]) -> Any:
    """`schema` (or a list of schemas) rebuilt from the leaves up: the schemas each keyword
    holds (a `properties` object's values, read as names to schemas) first, then `fix` makes
    the node from them. Values that are not schemas (`enum`, `default`, `required`) are kept."""
    if isinstance(schema, list):
        return [_walked(item, fix) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            node[key] = {name: _walked(sub, fix) for name, sub in value.items()}
        elif key in _ONE or key in _MANY:
            node[key] = _walked(value, fix)
        else:
            node[key] = value
    return fix(node)


def _compacted(node: dict[str, Any]) -> dict[str, Any]:
    """A node without its title or a null default, an `anyOf` of plain types joined."""
    kept = {
        key: value
        for key, value in node.items()
        if not (key == "title" and isinstance(value, str))
        and not (key == "default" and value is None)
    }
    return _types_joined(kept)


def _enum_untyped(node: dict[str, Any]) -> dict[str, Any]:
    """A node with an `enum` without its `type`: the values say it. A pass of its own, after
    the joins, which read each option's type."""
    if not isinstance(node.get("enum"), list):
        return node
    return {key: value for key, value in node.items() if key != "type"}


def _pruned(node: dict[str, Any]) -> dict[str, Any]:
    """A node without `required`, a description or a default."""
    return {k: v for k, v in node.items() if k not in ("required", "description", "default")}


def _types_joined(node: dict[str, Any]) -> dict[str, Any]:
    """An `anyOf` whose options are plain types, each type once (an array's `items`, an
    object's `additionalProperties` and one type's `enum` kept), as one schema with a type
    list: `{"anyOf": [{"type": "string"}, {"type": "null"}]}` is `{"type": ["string", "null"]}`.
    Any other `anyOf` stays as it is."""
    options = node.get("anyOf")
    if not isinstance(options, list) or not options:
        return node
    if not all(isinstance(o, dict) and o.keys() <= _TYPE_BOUND for o in options):
        return node
    types: list[str] = []
    merged: dict[str, Any] = {}
    for option in options:
        kind = option.get("type")
        if not isinstance(kind, str) or kind in types:
            return node
        types.append(kind)
        for key, value in option.items():
            if key == "type":
                continue
            if key in merged:
                return node
            merged[key] = value
    if "enum" in merged:
        if len(set(types) - {"null"}) > 1:
            return node
        if "null" in types:
            merged["enum"] = [*merged["enum"], None]
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    return {**rest, "type": types, **merged}


def arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's compacted input schema with its optional parameters' types given without
    "null" (leaving one out says the same, and a model need not weigh sending null; the tool
    still takes it) and no `"default": false` (what leaving out a flag means anyway)."""
    node = compact(schema)
    required = set(node.get("required", ()))
    params = {}
    for name, param in node.get("properties", {}).items():
        kind = param.get("type")
        if param.get("default") is False:
            param = {key: value for key, value in param.items() if key != "default"}
        if name not in required and isinstance(kind, list) and "null" in kind:
            rest = [k for k in kind if k != "null"]
            param = {**param, "type": rest[0] if len(rest) == 1 else rest}
        if name not in required and None in param.get("enum", ()):
            param = {**param, "enum": [value for value in param["enum"] if value is not None]}
        params[name] = param
    return {**node, "properties": params} if params else node


def results(schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """A tool's compacted output schema without what a program reading results needs least:
    descriptions (README.md's tools table says what each field holds), defaults and
    `required` (every field listed is always there)."""
    if schema is None:
        return None
    return cast(dict[str, Any], _walked(compact(schema), _pruned))
