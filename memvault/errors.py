"""The error hierarchy: services raise these; the faces turn them into tool errors or CLI lines."""

from memvault.words import Face, Message, said


class MemvaultError(Exception):
    """Base of every error memvault raises on purpose; the message says what to do next. Its
    text (`str`) names parameters as the tools do; `in_words("cli")` as the CLI does."""

    def __init__(self, message: Message = ""):
        super().__init__(said(message, "tool"))
        self.message = message

    def in_words(self, face: Face) -> str:
        """The message in the words of `face` (see words.Term)."""
        return said(self.message, face)


class NotFound(MemvaultError):
    """No memory matches an identifier exactly."""

    def __init__(self, message: Message, suggestions: list[tuple[str, str, float]] | None = None):
        super().__init__(message)
        self.suggestions = suggestions or []


class NotAVault(MemvaultError):
    """A command that needs a vault was pointed at a folder that is not one (nothing was
    created there)."""


class Invalid(MemvaultError):
    """The caller's input is malformed, out of bounds or unsafe."""


class TooLarge(Invalid):
    """A title, body or tag list exceeds its configured limit."""


class Conflict(MemvaultError):
    """The file changed since the caller saw it, or the request clashes with the vault."""


class Unreadable(MemvaultError):
    """A file or the vault itself cannot be read."""


class ReadOnly(MemvaultError):
    """The vault cannot be written (read-only media, no permission); reads still work."""


class Changed(Conflict):
    """A file changed on disk between memvault's read and its write (the write was not made)."""


class Unwritable(MemvaultError):
    """A file could not be written (disk full, permissions); nothing was changed."""


class TooSlow(MemvaultError):
    """A query ran past the time limit and was stopped."""


class Duplicate(Conflict):
    """A new memory would repeat an existing one (same title or near-identical content)."""

    def __init__(self, message: Message, existing_id: str):
        super().__init__(message)
        self.existing_id = existing_id
