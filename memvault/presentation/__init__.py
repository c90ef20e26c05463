"""How results read to a caller.

- `output`: one pydantic output model per tool result (its output schema); the CLI's `--json`.
- `lines`: the one-line texts of a search hit and a listed memory, shared by both faces.
"""
