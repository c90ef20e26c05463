"""PyYAML's errors in a person's words, at the line of the file: what `check`, `read` and
`reindex` say of frontmatter memvault cannot parse, instead of `in "<unicode string>", line 3,
column 5`."""

from __future__ import annotations

import yaml

# The line of the file the frontmatter starts on: the opening `---` is line 1.
FIRST_LINE = 2

# PyYAML's problems (by how each starts) in plain words, and whether the line that matters is
# where PyYAML's context began (the `[` or quote never closed) rather than where it noticed.
_PLAIN: tuple[tuple[str, str, bool], ...] = (
    (
        "mapping values are not allowed",
        "a ':' is not allowed here (a ': ' inside a value that is not in quotes?)",
        False,
    ),
    ("could not find expected ':'", "a key with no ':' after it", True),
    ("did not find expected ',' or ']'", "a [ list ] that is never closed", True),
    ("did not find expected ',' or '}'", "a { mapping } that is never closed", True),
    (
        "found unexpected end of stream",
        "the frontmatter ends inside a value (a quote not closed?)",
        True,
    ),
    ("found a tab character", "a tab where YAML wants spaces", False),
    ("found character '\\t'", "a tab where YAML wants spaces", False),
    (
        "found character that cannot start any token",
        "a value starting with a character YAML keeps for itself (put the value in quotes)",
        False,
    ),
    (
        "did not find expected key",
        "a line that is not `key: value` (a wrong indent, or text after a quoted value?)",
        False,
    ),
)


def yaml_problem(error: yaml.YAMLError, frontmatter: str) -> str:
    """What is wrong with the YAML `frontmatter`, in plain words at the file's line:
    `frontmatter line 3 is not valid YAML: a ':' is not allowed here (...)`; PyYAML's own
    words for a problem this module does not know."""
    if isinstance(error, yaml.reader.ReaderError):
        line = frontmatter.count("\n", 0, error.position) + FIRST_LINE
        return (
            f"frontmatter line {line} is not valid YAML: a character YAML does not allow "
            f"(#x{error.character:04X}: {error.reason})"
        )
    if isinstance(error, yaml.MarkedYAMLError) and error.problem and error.problem_mark:
        problem = error.problem
        words, at_start = next(
            ((plain, start) for known, plain, start in _PLAIN if problem.startswith(known)),
            (problem, False),
        )
        mark = error.context_mark if at_start and error.context_mark else error.problem_mark
        return f"frontmatter line {mark.line + FIRST_LINE} is not valid YAML: {words}"
    return f"frontmatter is not valid YAML: {' '.join(str(error).split())}"
