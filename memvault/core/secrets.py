"""Secrets in text: private keys, cloud access keys, API tokens with known prefixes, JWTs,
passwords in assignments and connection strings, found by high-confidence rules (a known
prefix or shape, never entropy alone, so a commit hash, a uuid or a base64 image is no secret).

memvault's own rules rather than a detector library: detect-secrets 1.5 took 0.2-0.4 s on a
100 KB note (and 0.18 s to import) where these take milliseconds; see the README.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Literal

from memvault.core.body_edits import BodyEdit
from memvault.errors import Invalid
from memvault.words import Part, Term, param

# What a write does with a secret it finds: refuse it (the default), or store it redacted.
SecretPolicy = Literal["refuse", "redact"]
POLICIES: tuple[SecretPolicy, ...] = ("refuse", "redact")


@dataclass(frozen=True)
class Secret:
    """One secret found: its kind, the 1-based line it starts on, and where its value lies in
    the text (the part a redaction replaces)."""

    kind: str
    line: int
    start: int
    end: int


@dataclass(frozen=True)
class _Rule:
    """A kind of secret: a pattern whose group `value` (or whole match) is the secret, a
    check that the value is real rather than a placeholder, and whether the match must start
    a word (checked here, not in the pattern: a leading look-behind makes a search 30 times
    slower)."""

    kind: str
    pattern: re.Pattern[str]
    real: Callable[[str], bool] = lambda value: True
    word: bool = True


_END = r"(?![A-Za-z0-9_])"
_WORD = re.compile(r"[A-Za-z0-9_]")
# A placeholder, a reference to where the secret lives, or a redaction: never a secret.
_PLACEHOLDER = re.compile(
    r"^(?:[$%<\[{(]|\*+$|x+$|\.+$)|os\.environ|process\.env|getenv|\(|^(?:password|passwd|"
    r"pass|secret|token|changeme|example|none|null)$",
    re.IGNORECASE,
)
_SYMBOL_OR_DIGIT = re.compile(r"[0-9!@#$%^&*+=/?~|\\]")


def _mixed(value: str) -> bool:
    """A token with upper case, lower case and digits: a generated key, not a slug."""
    return all(re.search(letters, value) for letters in ("[a-z]", "[A-Z]", "[0-9]"))


def _password(value: str) -> bool:
    """An assigned value that looks like a password: 6+ characters with a digit or a symbol,
    and no placeholder (`${DB_PASSWORD}`, `<password>`, `os.environ[...]`, `****`)."""
    value = value.strip().strip("\"'")
    return (
        len(value) >= 6 and not _PLACEHOLDER.search(value) and bool(_SYMBOL_OR_DIGIT.search(value))
    )


def _assigned(keyword: str) -> re.Pattern[str]:
    """`key = value`, `key: value`, `"key": "value"` (also `**Key**: value`) where the key
    ends with `keyword`; the group `value` is the value, with its quotes."""
    return re.compile(
        keyword + r"[*_`\"']{0,2}[ \t]*(?::=|=>|:|=)"
        r"[ \t]*(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s,;'\"`]+)",
        re.IGNORECASE,
    )


_RULES = (
    _Rule(
        "private key",
        re.compile(
            r"(?P<value>-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----(?:.*?"
            r"-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|(?:\n[A-Za-z0-9+/=]{16,})*))",
            re.DOTALL,
        ),
        word=False,
    ),
    _Rule("AWS access key", re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}" + _END)),
    _Rule(
        "AWS secret key",
        re.compile(
            r"aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9/+=]{40})"
            + r"(?![A-Za-z0-9/+=])",
            re.IGNORECASE,
        ),
        word=False,
    ),
    _Rule("Anthropic API key", re.compile(r"sk-ant-[a-z]+[0-9]*-[A-Za-z0-9_-]{32,}" + _END)),
    _Rule(
        "OpenAI API key",
        re.compile(r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}" + _END),
        _mixed,
    ),
    _Rule("Stripe key", re.compile(r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}" + _END)),
    _Rule(
        "GitHub token",
        re.compile(r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})" + _END),
    ),
    _Rule("GitLab token", re.compile(r"glpat-[A-Za-z0-9_-]{20,}" + _END)),
    _Rule("Slack token", re.compile(r"xox[abposr]-[A-Za-z0-9-]{10,}" + _END)),
    _Rule(
        "Slack webhook",
        re.compile(r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]+/B[A-Za-z0-9_]+/\w+"),
        word=False,
    ),
    _Rule("Google API key", re.compile(r"AIza[0-9A-Za-z_-]{35}" + _END)),
    _Rule(
        "SendGrid API key",
        re.compile(r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}" + _END),
    ),
    _Rule("npm token", re.compile(r"npm_[A-Za-z0-9]{36}" + _END)),
    _Rule("PyPI token", re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,}" + _END)),
    _Rule("Hugging Face token", re.compile(r"hf_[A-Za-z0-9]{34,}" + _END), _mixed),
    _Rule(
        "Azure storage key",
        re.compile(r"AccountKey=(?P<value>[A-Za-z0-9+/]{40,}={0,2})", re.IGNORECASE),
        word=False,
    ),
    _Rule(
        "JWT",
        re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}" + _END),
    ),
    _Rule(
        "password in a connection string",
        re.compile(r"://[^\s:/@]+:(?P<value>[^\s:/@]+)@"),
        lambda value: not _PLACEHOLDER.search(value),
        word=False,
    ),
    _Rule("password", _assigned(r"(?:password|passwd|passphrase)"), _password, word=False),
    _Rule(
        "secret",
        _assigned(r"(?:secret|api[_-]?key|access[_-]?key|private[_-]?key|token)"),
        _password,
        word=False,
    ),
)


def find_secrets(text: str) -> list[Secret]:
    """Every secret in `text`, in order, none overlapping another (the first rule wins)."""
    found: list[Secret] = []
    taken: list[tuple[int, int]] = []
    for rule in _RULES:
        for match in rule.pattern.finditer(text):
            group = "value" if "value" in rule.pattern.groupindex else 0
            start, end = match.span(group)
            value = match.group(group)
            if value.startswith(('"', "'")):
                start, end = start + 1, end - 1
            joined = rule.word and _WORD.match(text, max(match.start() - 1, 0), match.start())
            if joined or not rule.real(value) or any(s < end and start < e for s, e in taken):
                continue
            taken.append((start, end))
            found.append(Secret(rule.kind, text.count("\n", 0, start) + 1, start, end))
    return sorted(found, key=lambda secret: secret.start)


def found_under(key: str, value: str) -> list[Secret]:
    """The secrets in a value read with its key before it, as its frontmatter line reads
    (`password: ...`) and as `check --secrets` finds them in the file: their spans in `value`."""
    line = f"{key}: "
    return [
        replace(s, start=max(s.start - len(line), 0), end=s.end - len(line))
        for s in find_secrets(line + value)
        if s.end > len(line)
    ]


def redact(text: str, secrets: list[Secret]) -> str:
    """`text` with each secret replaced by `[redacted: KIND]`."""
    parts = []
    last = 0
    for secret in sorted(secrets, key=lambda s: s.start):
        parts.append(text[last : secret.start] + f"[redacted: {secret.kind}]")
        last = secret.end
    return "".join(parts) + text[last:]


def redacted(text: str) -> str:
    """`text` with every secret it holds replaced by `[redacted: KIND]` (what a briefing
    shows of a hand-written note)."""
    return redact(text, find_secrets(text))


def described(secrets: list[Secret]) -> str:
    """Which secrets and where, never what: "AWS access key on line 3, JWT on line 9"."""
    return ", ".join(f"{s.kind} on line {s.line}" for s in secrets)


# How each face asks for redaction: the tools' parameter and the CLI's option.
REDACT = Term('secrets="redact"', "--secrets redact")


def screened(text: str, policy: SecretPolicy, where: Part) -> str:
    """`text` as a write may store it: unchanged when it holds no secret, redacted under
    `redact`; under `refuse`, Invalid naming each secret's kind and line (never the secret),
    in the words of the caller's face (`where` may be a parameter: `append`, `--append`)."""
    found = find_secrets(text)
    if not found:
        return text
    if policy == "redact":
        return redact(text, found)
    raise Invalid(
        (
            where,
            f" holds a secret ({described(found)}); nothing was saved. Keep secrets where they "
            "belong (a password manager, a secrets vault, an environment variable) and save "
            "only where to find them, or pass ",
            REDACT,
            " to store it with each secret replaced by [redacted: KIND]",
        )
    )


def screened_edit(edit: BodyEdit, secrets: SecretPolicy) -> BodyEdit:
    """The edit with the text it adds screened for secrets (`find` is not: it names text the
    memory holds already)."""
    section = edit.section
    if section is not None:
        section = (section[0], screened(section[1], secrets, "replace_section"))
    return replace(
        edit,
        content=_screened_part(edit.content, secrets, "the content"),
        replace=_screened_part(edit.replace, secrets, param("replace")),
        prepend=_screened_part(edit.prepend, secrets, param("prepend")),
        append=_screened_part(edit.append, secrets, param("append")),
        section=section,
    )


def _screened_part(text: str | None, secrets: SecretPolicy, where: Part) -> str | None:
    """One part of an edit screened, where the edit has it."""
    return None if text is None else screened(text, secrets, where)


def screened_fields(fields: dict[str, Any], secrets: SecretPolicy) -> dict[str, Any]:
    """Frontmatter with its text values (and the texts in its lists and objects) screened
    for secrets."""

    def one(key: str, value: Any) -> Any:
        """A value screened, where it is text."""
        if isinstance(value, str):
            return screened(value, secrets, f"the property {key}")
        if isinstance(value, list):
            return [one(key, item) for item in value]
        if isinstance(value, dict):
            return {name: one(f"{key}.{name}", item) for name, item in value.items()}
        return value

    return {key: one(key, value) for key, value in fields.items()}
