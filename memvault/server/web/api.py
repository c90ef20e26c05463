"""The web page's JSON API over VaultService: parse the request, call the service, answer
JSON. A service error is one line with the HTTP status that fits it. Every answer passes the
secret mask (web_secrets.py), and a memory is shown from at most the size a write may store of
its file (a hand-made note can be far bigger), so no request reads or scans a big note whole."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, cast, get_args

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from memvault.core.body_edits import BodyEdit
from memvault.core.drafts import Revision, WriteOptions
from memvault.core.memory import Memory, human_size
from memvault.core.properties import where_pairs
from memvault.core.records import Filter, SearchHit, SearchMode
from memvault.errors import Conflict, Duplicate, Invalid, MemvaultError, NotFound, ReadOnly, TooSlow
from memvault.features.review import PAGE, QUEUES, graph, overview, queue, review
from memvault.presentation.output import LinkEnd, MemoryFields
from memvault.server.attribution import page_person
from memvault.server.tools.common import one_line
from memvault.server.web.secrets import (
    MARGIN,
    Mask,
    anchors,
    core,
    masked_snippet,
    refuse_marker_over_secret,
    secrets_shown_masked,
    unmarked,
)
from memvault.service.vault import VaultService

MODES = get_args(SearchMode)
# Past any queue's last row: an offset beyond it is an empty page.
EVERY_ROW = 1 << 40
# The fields of a write that name a memory: the page may send a handle there (web_secrets).
NAMED = ("id", "source", "target", "keep", "other")
STATUS: tuple[tuple[type[MemvaultError], int], ...] = (
    (NotFound, 404),
    (Conflict, 409),
    (Invalid, 400),
    (ReadOnly, 503),
    (TooSlow, 503),
)


class Failed(Exception):
    """A request the API answers with an error: its status and one line."""

    def __init__(self, status: int, text: str):
        super().__init__(text)
        self.status = status


@contextmanager
def answered() -> Iterator[None]:
    """Turn a service error into a Failed with the status that fits it."""
    try:
        yield
    except MemvaultError as exc:
        status = next((code for kind, code in STATUS if isinstance(exc, kind)), 500)
        raise Failed(status, one_line(exc)) from exc


def plain(value: Any) -> Any:
    """A record as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def memory_json(memory: Memory, shown: int, cut: bool = False) -> dict[str, Any]:
    """A memory as every face shows it (presentation's `MemoryFields`), its content within
    `shown` characters, with any problem reading it, which secrets the page shows masked in
    it (None when it holds none), and `cut`: why the page has only the start of it (a
    hand-made note of any size: read so, or cut here); the page cannot save it then."""
    content = memory.body[:shown]
    cut = cut or len(memory.body) > shown
    data: dict[str, Any] = MemoryFields.from_memory(memory, content).model_dump(mode="json")
    data["problem"] = memory.problem
    data["secrets"] = secrets_shown_masked(memory, content)
    data["cut"] = (
        f"the page shows the first {human_size(shown)} of this note; read or edit the rest in "
        f"its file, {memory.path}"
        if cut
        else None
    )
    return data


def where_of(params: QueryParams) -> Filter:
    """search_mem's filters from the query string: `since`/`until` as search_mem takes them
    (7d, last week, an ISO date), `where` as `key=value` pairs separated by commas."""
    tags = tuple(t for t in params.get("tags", "").replace(",", " ").split() if t)
    return Filter(
        params.get("category") or None,
        tags,
        params.get("scope") or None,
        params.get("only_scope") == "true",
        params.get("archived") == "true",
        params.get("since") or None,
        params.get("until") or None,
        where=properties_wanted(params.get("where", "")),
    )


def properties_wanted(text: str) -> tuple[tuple[str, str], ...]:
    """`status=open, owner=ana` as search_mem's where pairs."""
    wanted: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",")):
        key, equals, value = part.partition("=")
        if part and not (equals and key.strip() and value.strip()):
            raise Failed(400, f"where takes key=value pairs separated by commas, not {part!r}")
        if part:
            wanted[key.strip()] = value.strip()
    with answered():
        return where_pairs(wanted)


def number(params: QueryParams, name: str, default: int, top: int, bottom: int = 1) -> int:
    """A whole-number query parameter within bottom..top."""
    raw = params.get(name)
    try:
        value = default if raw is None else int(raw)
    except ValueError:
        raise Failed(400, f"{name} must be a whole number, not {raw!r}") from None
    return max(bottom, min(value, top))


async def body_of(request: Request) -> dict[str, Any]:
    """A write's JSON object."""
    try:
        data = await request.json()
    except ValueError:
        raise Failed(400, "the request body must be JSON") from None
    if not isinstance(data, dict):
        raise Failed(400, "the request body must be a JSON object")
    return data


def _texts(value: object) -> bool:
    """Whether a JSON value is a list of texts."""
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def text(data: dict[str, Any], name: str) -> str:
    """A required, non-empty text field of a write's JSON object."""
    value = data.get(name)
    if not isinstance(value, str) or not value:
        raise Failed(400, f"{name} is required (text)")
    return value


class WebApi:
    """The routes of /api over one vault."""

    def __init__(self, vault: VaultService):
        self.vault = vault
        self.mask = Mask()
        # The most of a memory's file the page shows and scans for secrets: what a write may
        # store, so every memory the page can edit is shown whole.
        self.shown = vault.limits.max_content

    def routes(self) -> list[Route]:
        """GET routes for the reads, POST routes (JSON bodies) for the writes."""
        reads: dict[str, Callable[[QueryParams], Any]] = {
            "/api/search": self.search,
            "/api/memory": self.memory,
            "/api/review": self.review,
            "/api/overview": self.overview,
            "/api/graph": self.graph,
            "/api/changes": self.changes,
        }
        writes: dict[str, Callable[[dict[str, Any], str], Any]] = {
            "/api/save": self.save,
            "/api/verify": self.verify,
            "/api/archive": self.archive,
            "/api/delete": self.delete,
            "/api/link": self.link,
            "/api/unlink": self.unlink,
            "/api/merge": self.merge,
        }
        return [
            *(Route(path, self.reading(call), methods=["GET"]) for path, call in reads.items()),
            *(Route(path, self.writing(call), methods=["POST"]) for path, call in writes.items()),
        ]

    def reading(self, call: Callable[[QueryParams], Any]) -> Callable[[Request], Any]:
        """A GET endpoint: the call's answer as JSON, or its error (run on a worker thread); a
        handle the page sends in place of a name is taken back as that name."""

        def endpoint(request: Request) -> JSONResponse:
            """The read, answered."""
            params = QueryParams(
                [
                    (key, self.mask.resolved(value))
                    for key, value in request.query_params.multi_items()
                ]
            )
            try:
                with answered():
                    return self.answer(call(params))
            except Failed as exc:
                return self.answer({"error": str(exc)}, exc.status)

        return endpoint

    def answer(self, data: Any, status: int = 200) -> JSONResponse:
        """JSON with every text masked: the page never shows a secret."""
        return JSONResponse(self.mask.answer(data), status)

    def writing(self, call: Callable[[dict[str, Any], str], Any]) -> Callable[[Request], Any]:
        """A POST endpoint taking a JSON object and the page's person, who the write records
        (attribution.page_person); the service and the mask of its answer run on a worker
        thread (masking a memory of 1 MiB takes about 0.1 s: on the event loop, it held up
        every other request, /mcp's too)."""

        async def endpoint(request: Request) -> JSONResponse:
            """The write, answered."""
            try:
                data = await body_of(request)
                for name in NAMED:
                    if isinstance(data.get(name), str):
                        data[name] = self.mask.resolved(data[name])
                person = page_person(request.headers)
                with answered():
                    shown = await run_in_threadpool(lambda: self.mask.answer(call(data, person)))
                return JSONResponse(shown)
            except Failed as exc:
                return self.answer({"error": str(exc)}, exc.status)

        return endpoint

    # -- reads -----------------------------------------------------------------------------

    def search(self, params: QueryParams) -> dict[str, Any]:
        """Search as you type: hits with snippets and scores, and the `mode` that ran; no words
        lists the newest. Without `mode`, search_mem's default (hybrid once the vault's notes
        are embedded and loaded, by words before), so the page finds what an assistant does."""
        query = params.get("q", "").strip()
        limit = number(params, "limit", 20, 100)
        where = where_of(params)
        if not query:
            rows, total = self.vault.list_memories(where, "updated", limit)
            return {"total": total, "results": [plain(r) for r in rows], "listed": True}
        mode = params.get("mode") or None
        if mode is not None and mode not in MODES:
            raise Failed(400, f"mode must be one of {', '.join(MODES)}, not {mode!r}")
        page = self.vault.search(
            query, limit, 0, where, cast(SearchMode | None, mode), count_use=False
        )
        hits = [{**plain(h), "snippet": self.snippet(h)} for h in page.results]
        return {
            "total": page.total,
            "total_capped": page.total_capped,
            "results": hits,
            "listed": False,
            "mode": page.mode,
        }

    def snippet(self, hit: SearchHit) -> str:
        """A hit's snippet with its secrets masked, checked against the text it was cut from:
        its title, or the places of its body the index holds it, never the whole file (nothing
        when neither holds it any more: its secrets cannot be checked)."""
        plain, _marks = unmarked(hit.snippet)
        start, end = core(plain)
        if start == end:
            return ""
        around: list[str] = []
        for text in anchors(hit.snippet):
            around = self.vault.passages(hit.path, text, MARGIN)
            if around:
                break
        if plain[start:end] in hit.title:
            around.append(hit.title)
        return masked_snippet(hit.snippet, around) if around else ""

    def memory(self, params: QueryParams) -> dict[str, Any]:
        """One memory, read fresh from at most the size the page shows of its file, with its
        links both ways and its usage."""
        identifier = params.get("id", "")
        if not identifier:
            raise Failed(400, "id is required")
        head = self.vault.head(identifier, self.shown)
        memory = head.memory
        usage = self.vault.usage().get(memory.id)
        succession = self.vault.succession(memory)
        return {
            "memory": memory_json(memory, self.shown, head.cut),
            "supersedes": [LinkEnd.named(raw, m).model_dump() for raw, m in succession.supersedes],
            "superseded_by": [
                LinkEnd.named(raw, m).model_dump() for raw, m in succession.superseded_by
            ],
            "outgoing": [plain(r) for r in self.vault.outgoing(memory)],
            "backlinks": [plain(r) for r in self.vault.backlinks(memory)],
            "usage": plain(usage) if usage else {"access_count": 0, "last_access": None},
        }

    def review(self, params: QueryParams) -> dict[str, Any]:
        """The review queues, each counted with its first `limit` rows; with `queue`, that
        queue's rows from `offset` on (its next page). `days` since the last review makes a
        memory stale (by default the vault's policies' stale_days, as for the briefing)."""
        days = number(params, "days", 1, 100_000) if "days" in params else None
        limit = number(params, "limit", PAGE, 500)
        name = params.get("queue")
        if name is None:
            return dataclasses.asdict(review(self.vault, days, limit))
        if name not in QUEUES:
            raise Failed(400, f"queue must be one of {', '.join(QUEUES)}, not {name!r}")
        offset = number(params, "offset", 0, EVERY_ROW, bottom=0)
        page = queue(self.vault, name, days, offset, limit)
        return {"queue": name, **dataclasses.asdict(page)}

    def overview(self, params: QueryParams) -> dict[str, Any]:
        """Counts, growth and use per month, size and health."""
        return dataclasses.asdict(overview(self.vault))

    def graph(self, params: QueryParams) -> dict[str, Any]:
        """A memory's neighbourhood (`id`, `depth` 1 or 2), or the vault by category."""
        identifier = params.get("id") or None
        return dataclasses.asdict(graph(self.vault, identifier, number(params, "depth", 1, 2)))

    def changes(self, params: QueryParams) -> dict[str, str]:
        """The change fingerprint the page polls to follow edits made elsewhere."""
        return {"changes": self.vault.changes()}

    # -- writes ----------------------------------------------------------------------------

    def save(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """A new text (and title, tags) for a memory, refused with the file as it is now when
        it changed since the version the page edited: the page keeps both, nothing is lost.
        The refusal is an answer (200, `conflict`), not an HTTP error: it is expected, and
        the browser logs every HTTP error as a console error."""
        identifier, version = text(data, "id"), text(data, "version")
        content = data.get("content")
        if not isinstance(content, str):
            raise Failed(400, "content is required (text)")
        tags = data.get("tags")
        if tags is not None and not _texts(tags):
            raise Failed(400, "tags must be a list of texts")
        head = self.vault.head(identifier, self.shown)
        if head.cut:
            raise Failed(
                400,
                f"not saved: {head.memory.path} is bigger than the page shows "
                f"({human_size(head.size)}; the page has its first {human_size(self.shown)}), "
                "and saving would drop the rest: edit it in its file",
            )
        refuse_marker_over_secret(head.memory, data.get("title"), content)
        try:
            revision = Revision(data.get("title") or None, BodyEdit(content=content), tags)
            options = WriteOptions(agent=person, expected_version=version)
            memory = self.vault.update(identifier, revision, options)
        except Conflict as exc:
            if isinstance(exc, Duplicate):
                raise
            now = self.vault.head(identifier, self.shown)
            return {
                "conflict": one_line(exc),
                "memory": memory_json(now.memory, self.shown, now.cut),
            }
        return {"memory": memory_json(memory, self.shown)}

    def verify(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Mark a memory as reviewed now."""
        return {
            "memory": memory_json(self.vault.verify(text(data, "id"), agent=person), self.shown)
        }

    def archive(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Move a memory into the archive (out of searches; links follow it)."""
        return {
            "memory": memory_json(self.vault.archive(text(data, "id"), agent=person), self.shown)
        }

    def delete(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Delete a memory and every link to it (the page asked the person first)."""
        gone = self.vault.delete(text(data, "id"), agent=person)
        return {"deleted": gone.memory.path, "changed": gone.changed}

    def link(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Link two memories both ways (each in the other's Related list)."""
        change = self.vault.link(text(data, "source"), text(data, "target"), agent=person)
        return {"changed": change.changed, "markdown": change.markdown}

    def unlink(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Take two memories out of each other's Related list."""
        change = self.vault.unlink(text(data, "source"), text(data, "target"), agent=person)
        return {"changed": change.changed}

    def merge(self, data: dict[str, Any], person: str) -> dict[str, Any]:
        """Fold the memory `other` into `keep` (near duplicates)."""
        merged = self.vault.merge(text(data, "keep"), text(data, "other"), agent=person)
        return {"memory": memory_json(merged, self.shown)}
