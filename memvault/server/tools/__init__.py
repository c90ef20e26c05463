"""The MCP tools, resources and prompts, by group.

- `memories`, `links`, `search`, `context`, `resources`, `prompts`: the tools by group, the
  resources, the prompts.
- `common`: annotations, replies, errors turned into one-line tool errors.
- `arguments`: an argument a tool does not take, named with the one it likely meant.
- `params`: the parameters several tools share (a scope or category, properties, filters).
- `schemas`: the tools' JSON schemas compacted for tools/list (same values, fewer characters).
"""
