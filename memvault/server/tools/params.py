"""The parameters several tools share, each with the few words a model needs to use it.

Every session pays for `tools/list` in context tokens, so a description says what the schema
cannot; the longer guidance is in the server's instructions (mcp_server.py) and
docs/assistant.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import JsonValue, WithJsonSchema

# A scope or category parameter: one name or several (any of them).
Names = str | list[str] | None
Mode = Literal["hybrid", "keyword", "semantic"]

# A property's value: text, a number, true/false (a checkbox), a date as YYYY-MM-DD text, an
# object or a list of those, nested, or null (edit_mem: remove the property); the service
# checks it (core/properties.py). Published as a plain object: the full union costs a model
# 170 characters a tool and says less.
Properties = Annotated[dict[str, JsonValue], WithJsonSchema({"type": "object"})]
# A filter on properties: a name, or a dotted path into objects, to one value.
Where = Properties
# edit_mem's add_to / remove_from: a list property (or tags) to one item or a list of items.
Items = Properties
