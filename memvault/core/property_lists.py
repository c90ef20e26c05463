"""Items added to and taken out of a list property (or the tags) by an edit, without the caller
restating the list: `add_to={"reviewers": {"name": "ann"}}`, `remove_from={"tags": "old"}`.

An item already in the list is not added again, so a retried edit changes nothing. An item
given to take out removes every item equal to it; an object removes every object holding all
its fields with those values (`{"name": "ann"}` removes Ann's entry whatever else it says).
Removals apply before additions, so one edit can swap an item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvault.core.properties import MAX_ITEMS, clean_properties, clean_value
from memvault.errors import Invalid, TooLarge

TAGS = "tags"
Items = dict[str, list[Any]]


def clean_items(given: Mapping[str, Any] | None, what: str) -> Items:
    """`add_to` or `remove_from` checked: property names (or `tags`) to the items to add or
    take out, one item or a list of them (a list is always its items, never one item)."""
    if not given:
        return {}
    if not isinstance(given, Mapping):
        raise Invalid(f"{what} must be an object of property names to items")
    tags = given.get(TAGS)
    others = clean_properties({key: value for key, value in given.items() if key != TAGS})
    items = {TAGS: tags} if tags is not None else {}
    items.update(others)
    found: Items = {}
    for key, value in items.items():
        listed = value if isinstance(value, list | tuple) else [value]
        if not listed or any(item is None for item in listed):
            raise Invalid(f"{what}: {key!r} names no item (null is no item)")
        found[key] = [clean_value(key, item, 1) for item in listed]
    return found


def check_apart(properties: Mapping[str, Any] | None, tags: object, *edits: Items) -> None:
    """Refuse an edit that sets a property (or the tags) whole and edits its items too."""
    whole = set(properties or ()) | ({TAGS} if tags is not None else set())
    both = sorted(whole & {key for edit in edits for key in edit})
    if both:
        raise Invalid(
            f"{', '.join(both)}: set a value whole, or add and remove items, not both at once"
        )


def edited_list(key: str, value: Any, add: list[Any], remove: list[Any]) -> list[Any] | None:
    """A property's list with `remove`'s items taken out and `add`'s put at its end (a single
    value counts as a list of one, an absent one, None, as an empty list); None when that
    leaves it as it is."""
    if isinstance(value, Mapping):
        raise Invalid(
            f"property {key!r} is an object, not a list: set it whole with properties instead"
        )
    items = [] if value is None else list(value) if isinstance(value, list) else [value]
    kept = [item for item in items if not any(_matches(item, gone) for gone in remove)]
    added = 0
    for item in add:
        if not any(_same(item, present) for present in kept):
            kept.append(item)
            added += 1
    if not added and len(kept) == len(items):
        return None
    if len(kept) > MAX_ITEMS:
        raise TooLarge(f"property {key!r} would have {len(kept)} items; the limit is {MAX_ITEMS}")
    return kept


def edited_tags(tags: list[str], add: list[Any], remove: list[Any]) -> list[str]:
    """The tags with `remove`'s taken out (case and a leading '#' aside) and `add`'s after."""
    gone = {_tag(item) for item in remove}
    return [tag for tag in tags if _tag(tag) not in gone] + [str(item) for item in add]


def _tag(value: object) -> str:
    return str(value).strip().lstrip("#").lower()


def _matches(item: Any, given: Any) -> bool:
    """Whether a list's item is one `given` names: an object holding all its fields with
    those values, anything else equal."""
    if isinstance(given, Mapping) and given:
        return isinstance(item, Mapping) and all(
            name in item and _matches(item[name], value) for name, value in given.items()
        )
    return _same(item, given)


def _same(one: Any, other: Any) -> bool:
    """Equal, a checkbox never equal to a number (True == 1 in Python)."""
    if isinstance(one, bool) != isinstance(other, bool):
        return False
    if isinstance(one, list) and isinstance(other, list):
        return len(one) == len(other) and all(map(_same, one, other))
    if isinstance(one, Mapping) and isinstance(other, Mapping):
        return one.keys() == other.keys() and all(_same(one[k], other[k]) for k in one)
    return bool(one == other)
