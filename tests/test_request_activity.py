"""A server's request activity (memvault/activity.py): what its background embedding waits on,
shared by the copies of `serve --processes`."""

from __future__ import annotations

import multiprocessing
from multiprocessing.synchronize import Event

import pytest
from starlette.testclient import TestClient

from memvault.activity import Activity
from memvault.server import busy
from memvault.server.transport import security_for
from memvault.server.web.app import web_app
from memvault.service.vault import VaultService

from .conftest import patience


def _answering(activity: Activity, copy: int, started: Event, done: Event) -> None:
    """A server copy answering one request until told to stop."""
    activity.own(copy)
    with activity.request():
        started.set()
        done.wait(patience(60))


@pytest.mark.processes
def test_the_copies_of_a_server_share_their_requests() -> None:
    """`serve --processes`: the copy that embeds sees the requests another copy answers."""
    activity = Activity()
    assert activity.quiet_for() == float("inf")
    context = multiprocessing.get_context("fork")
    started, done = context.Event(), context.Event()
    copy = context.Process(target=_answering, args=(activity, 1, started, done))
    copy.start()
    try:
        assert started.wait(patience(60))
        assert activity.quiet_for() == 0.0
    finally:
        done.set()
        copy.join(patience(60))
    assert 0.0 < activity.quiet_for() < float("inf")
    with activity.request():
        assert activity.quiet_for() == 0.0


def test_the_web_page_s_requests_count_as_the_server_s(
    vault: VaultService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A person searching as they type on the web page keeps a first embedding waiting, as an
    MCP client's calls do (tests/test_embedding_throttle.py)."""
    activity = Activity()
    monkeypatch.setattr(busy, "REQUESTS", activity)
    app = web_app(vault, security_for("127.0.0.1"), None)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        assert client.get("/api/search", params={"q": "deploy"}).status_code == 200
    assert 0.0 < activity.quiet_for() < float("inf")
