"""Model calls time out and are retried by the harness itself, each retry a visible event; an
unreachable provider ends the run with `ModelCallFailed` instead of a silent half-minute hang.

The provider is the real Gemini client pointed at a local socket that refuses connections or
accepts them and never answers (`GOOGLE_GEMINI_BASE_URL`, which the Google SDK reads).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from langchain_core.exceptions import (
    ContextOverflowError,
    ModelAPIError,
    ModelAuthenticationError,
)
from langchain_core.messages import HumanMessage
from notebook_shell import Notebook, notebook  # noqa: F401

from jupyter_deepagent import ModelCallFailed, create_research_agent, trace_run
from jupyter_deepagent._exceptions import ReplayMismatch
from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy, is_transient
from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel
from jupyter_deepagent.project.settings.agent_config import coerce_setting

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
FAKE_KEY = "AIza" + "FAKE-retry-test-key-5150"  # split: no key-shaped literal in the repo


def ask(text: str) -> dict:
    return {"messages": [HumanMessage(content=text)]}


def test_two_transient_failures_then_success_is_a_run_with_two_retry_events() -> None:
    model = ScriptedChatModel(script=[
        {"raise": "error", "message": "503 Service Unavailable"},
        {"raise": "rate_limit", "message": "429 quota"},
        "All good.",
    ])
    trace = trace_run(create_research_agent(model, model_retry_wait=0.01), ask("hi"))

    assert trace.final_text == "All good."
    retries = trace.of_type("model_retry")
    assert [(e["attempt"], e["attempts"], e["wait"]) for e in retries] == [(1, 3, 0.01),
                                                                          (2, 3, 0.02)]
    assert retries[0]["error"] == "ModelAPIError: 503 Service Unavailable"
    assert retries[1]["error"] == "ModelRateLimitError: 429 quota"
    assert {e["model"] for e in retries} == {"scripted:scripted"}
    assert len(trace.of_type("model_call")) == 1  # the call that answered
    sent = [r.messages for r in model.requests]
    assert len(sent) == 3 and sent[0] == sent[1] == sent[2]  # the same request each time


def test_a_key_in_a_retried_error_is_masked_in_the_retry_event() -> None:
    model = ScriptedChatModel(script=[
        {"raise": "error", "message": f"503 (sent key {FAKE_KEY})"}, "ok"])
    trace = trace_run(create_research_agent(model, model_retry_wait=0), ask("hi"),
                      redact=lambda text: text.replace(FAKE_KEY, "***"))
    [retry] = trace.of_type("model_retry")
    assert retry["error"] == "ModelAPIError: 503 (sent key ***)"
    assert FAKE_KEY not in json.dumps(trace.events)


def test_the_last_failure_is_raised_once_the_retries_are_spent() -> None:
    model = ScriptedChatModel(script=[{"raise": "timeout", "message": f"t{i}"} for i in range(3)])
    with pytest.raises(Exception, match="t2") as raised:
        trace_run(create_research_agent(model, model_retries=2, model_retry_wait=0), ask("hi"))
    trace = raised.value.trace  # type: ignore[attr-defined]
    assert [e["attempt"] for e in trace.of_type("model_retry")] == [1, 2]
    assert trace.events[-1]["status"] == "error"


def test_an_error_that_would_fail_again_is_not_retried() -> None:
    model = ScriptedChatModel(script=[{"raise": "error", "message": "down"}, "never sent"])
    with pytest.raises(ModelAPIError):
        trace_run(create_research_agent(model, model_retries=0), ask("hi"))
    assert len(model.requests) == 1

    assert not is_transient(ModelAuthenticationError("401 bad key"))
    assert not is_transient(ContextOverflowError("too long"))
    assert not is_transient(ReplayMismatch("differs", cell="cell 1", step=1))
    assert not is_transient(ValueError("a bug"))
    assert is_transient(ConnectionError("refused"))
    assert is_transient(TimeoutError("timed out"))

    class ServerError(Exception):
        code = 503

    wrapped = RuntimeError("Error calling model")
    wrapped.__cause__ = ServerError("unavailable")
    assert is_transient(wrapped)


def test_the_stop_button_ends_a_run_during_a_retry_wait() -> None:
    model = ScriptedChatModel(script=[{"raise": "error", "message": "down"}, "late"])
    agent = create_research_agent(model, model_retry_wait=30)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            trace_run(agent, ask("hi"))
    finally:
        timer.cancel()
    assert time.monotonic() - started < 10  # a hang check: the wait was 30 s
    trace = raised.value.trace  # type: ignore[attr-defined]
    assert [e["wait"] for e in trace.of_type("model_retry")] == [30]
    assert trace.events[-1]["status"] == "stopped"
    assert len(model.requests) == 1


def test_the_policy_reaches_the_provider_client_and_the_settings_are_checked() -> None:
    policy = ModelCallPolicy(timeout=5, retries=1)
    assert policy.client_options("google_genai") == {"max_retries": 1, "timeout": 5}
    assert policy.client_options("openai") == {"max_retries": 0, "timeout": 5}
    assert policy.client_options("ollama") == {}
    assert [policy.wait_after(n) for n in (1, 2, 3)] == [2.0, 4.0, 8.0]
    assert coerce_setting("model_timeout", "2.5", "%agent config") == 2.5
    assert coerce_setting("model_timeout", "none", "%agent config") is None
    assert coerce_setting("model_retries", "0", "%agent config") == 0
    assert coerce_setting("model_retry_wait", 0, ".deepagent.toml") == 0
    for name, value in (("model_timeout", "0"), ("model_retries", "-1"),
                        ("model_retry_wait", "soon")):
        with pytest.raises(ValueError, match=name):
            coerce_setting(name, value, "%agent config")


# -- a real provider client against a local socket -------------------------------------------------


@pytest.fixture
def refusing_port() -> int:
    """A loopback port nothing listens on: connections are refused."""
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@pytest.fixture
def stalling_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """A loopback server that accepts connections and never answers; yields its port and the
    connections it accepted."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            accepted.append(connection)

    threading.Thread(target=accept, daemon=True).start()
    yield server.getsockname()[1], accepted
    server.close()
    for connection in accepted:
        connection.close()


def _gemini_at(notebook: Notebook, monkeypatch: pytest.MonkeyPatch, port: int, **settings):
    pytest.importorskip("langchain_google_genai")
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", f"http://127.0.0.1:{port}")
    notebook.session.configure(model="google_genai:gemini-2.5-flash", **settings)


def _shown(cell) -> str:
    return json.dumps([o.data for o in cell.outputs]) + cell.stdout + cell.stderr + str(cell.error)


@LOOPBACK_ONLY
def test_a_refused_connection_shows_each_retry_then_fails_in_one_line(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, refusing_port: int
) -> None:
    _gemini_at(notebook, monkeypatch, refusing_port, model_retries=2, model_retry_wait=0.2)
    started = time.monotonic()
    cell = notebook.run("%%agent\nhello")
    elapsed = time.monotonic() - started

    assert isinstance(cell.error, ModelCallFailed)
    assert "ConnectError" in str(cell.error)
    assert elapsed < 20  # a hang check (the provider client's own retries took over 30 s)
    lines = [line for line in cell.live_text.splitlines() if "retrying" in line]
    assert len(lines) == 2
    assert "↻ retrying in 200 ms (attempt 2 of 3): ConnectError" in lines[0]
    assert "↻ retrying in 400 ms (attempt 3 of 3): ConnectError" in lines[1]
    assert cell.live_text.splitlines()[-1].startswith("failed: ModelCallFailed")
    assert FAKE_KEY not in _shown(cell)
    trace = notebook.shell.user_ns["_agent"]
    assert FAKE_KEY not in json.dumps(trace.events)


@LOOPBACK_ONLY
def test_a_provider_that_never_answers_times_out_on_every_attempt(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch,
    stalling_server: tuple[int, list[socket.socket]],
) -> None:
    port, accepted = stalling_server
    _gemini_at(notebook, monkeypatch, port, model_timeout=1, model_retries=1,
               model_retry_wait=0.1)
    started = time.monotonic()
    cell = notebook.run("%%agent\nhello")
    elapsed = time.monotonic() - started

    assert isinstance(cell.error, ModelCallFailed)
    assert "Timeout" in cell.error.error_type
    # timeout x attempts + waits is about 2.1 s; a generous bound, as a hang check
    assert elapsed < 20
    [line] = [line for line in cell.live_text.splitlines() if "retrying" in line]
    assert "retrying in 100 ms (attempt 2 of 2): ReadTimeout" in line
    assert len(accepted) == 2  # our two attempts, none of the client's own
    assert FAKE_KEY not in _shown(cell)


def test_the_summarizers_call_is_retried_too() -> None:
    from test_summarize import SUMMARY, fetches, run

    summarizer = ScriptedChatModel(
        script=[{"raise": "error", "message": "503 busy"}, *[SUMMARY] * 5])
    keys = [f"n{i}" for i in range(6)]
    _, trace = run([*(fetches(k) for k in keys), "done"], summarizer=summarizer,
                   model_retry_wait=0)

    assert trace.final_text == "done"
    [retry] = trace.of_type("model_retry")
    assert (retry["purpose"], retry["error"]) == ("summarize", "ModelAPIError: 503 busy")
    summaries = trace.of_type("summarized")
    assert summaries and len(summarizer.requests) == len(summaries) + 1
    assert summarizer.requests[0].messages == summarizer.requests[1].messages
