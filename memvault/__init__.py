"""memvault: long-term memory for AI assistants, kept as a folder of markdown files."""

__version__ = "0.1.0"
