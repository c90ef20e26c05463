"""The MCP tools, resources and prompts, by group.

- `memories`, `links`, `search`, `context`, `resources`, `prompts`: the tools by group, the
  resources, the prompts.
- `common`: annotations, replies, errors turned into one-line tool errors.
- `arguments`: an argument a tool does not take, named with the one it likely meant.
"""
