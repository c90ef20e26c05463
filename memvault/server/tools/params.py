"""The parameters several tools share, each with the few words a model needs to use it.

Every session pays for `tools/list` in context tokens, so a description says what the schema
cannot; the longer guidance is in the server's instructions (mcp_server.py) and
docs/assistant.md.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import WithJsonSchema

# A scope or category parameter: one name or several (any of them).
Names = str | list[str] | None
Mode = Literal["hybrid", "keyword", "semantic"]

# A property's value: text, a number, true/false (a checkbox), a date as YYYY-MM-DD text, a list
# of those, or null (edit_mem: remove the property). Published as a plain object with these
# words: the full union costs a model 170 characters a tool and says less.
Scalar = str | int | float | bool
Properties = Annotated[
    dict[str, Scalar | list[Scalar] | None],
    WithJsonSchema({"type": "object"}),
]
Where = Annotated[
    dict[str, Scalar],
    WithJsonSchema({"type": "object"}),
]
