"""Record and replay: a notebook's agent cells re-run offline from its research log, identically."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import ReplayMismatch, ScriptedChatModel
from jupyter_deepagent.jupyter.magic import magics
from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for
from jupyter_deepagent.trace.research_log.recorded import Recording

ASK = "%%agent\nLook around the notebook and write a note."


def _script(**fields: Any) -> ScriptedChatModel:
    return scripted(
        call("ls", path="/notebook/"),
        call("write_file", file_path="/outputs/note.md", content="# Note\n\nAll quiet."),
        "All quiet; the note is in `/outputs/note.md`.",
        name="field-notes",
        **fields,
    )


_COST = r"replayed, \$0 \(would cost [^)]*\)|<?\$\d+(\.\d+)?( \+ price unknown for \d+ calls?)?|price unknown"


def _shown(run: Any) -> list[Any]:
    """The cell's displays as a notebook saves them, with durations, the header's replay word,
    costs (a replay spends nothing: its calls cost $0; so the static inspector's tab ids, made from
    what it shows, differ too) and the live inspector's widget id taken out (they are the only
    parts that may differ)."""
    shown = []
    for display in run.displays:
        data = {k: re.sub(r"\d+(\.\d+)? (ms|s)\b", "T", str(v)) for k, v in display.data.items()}
        data = {k: re.sub(r" · (live|scripted|replayed|mixed)\n", "\n", v) for k, v in data.items()}
        data = {k: re.sub(_COST, "C", v) for k, v in data.items()}
        data = {k: re.sub(r"jdi-[0-9a-f]{8}", "jdi-ID", v) for k, v in data.items()}  # of the above
        data.pop("application/vnd.jupyter.widget-view+json", None)  # a new widget id each run
        metadata = json.loads(json.dumps(display.metadata))
        metadata.get("jupyter_deepagent", {}).pop("run", None)
        shown.append((data, metadata))
    return shown


def _records(nb: Notebook) -> list[dict[str, Any]]:
    return ResearchLog(log_path_for(nb.path)).records()


def _fresh_kernel(nb: Notebook) -> None:
    """A restart on a fresh clone: the research log is there, the conversations are not."""
    nb.restart()
    shutil.rmtree(nb.folder / ".deepagent")


def test_a_replay_in_a_fresh_kernel_shows_the_same_outputs_and_calls_no_model(
    notebook: Notebook,
) -> None:
    notebook.session.configure(model=_script())
    notebook.run("numbers = [1, 2, 3]")
    recorded = notebook.run(ASK)
    logged = log_path_for(notebook.path).read_bytes()

    _fresh_kernel(notebook)
    silent = scripted(name="field-notes")  # would raise "script is exhausted" if asked
    notebook.session.configure(model=silent)
    notebook.run("numbers = [1, 2, 3]")
    replayed = notebook.run(ASK)

    assert recorded.error is None and replayed.error is None
    assert silent.requests == []
    assert _shown(replayed) == _shown(recorded)
    assert recorded.live_text.splitlines()[0].endswith("scripted:field-notes · scripted")
    assert replayed.live_text.splitlines()[0].endswith("scripted:field-notes · replayed")
    [answer] = replayed.rendered[:1]
    summary = answer.metadata["jupyter_deepagent"]["run"]
    assert summary["replay"] == "replayed" and summary["calls"] == 3 and summary["tokens_in"] > 0
    assert log_path_for(notebook.path).read_bytes() == logged  # the replay changed nothing
    [first] = _records(notebook)
    assert first["replay"] == "scripted" and summary["log_hash"] == first["hash"]
    assert set(first["versions"]) >= {"python", "jupyter-deepagent", "langchain", "langgraph"}


EDITED = "%%agent\nLook around the notebook and write two notes."
"""The cell of `ASK` (the same cell id), its request edited."""


def _edit_prompt_with_a_cell_id(nb: Notebook, monkeypatch: pytest.MonkeyPatch) -> ScriptedChatModel:
    """`ASK` recorded in the cell "ask-cell", then a fresh kernel whose model is a live script
    (returned, to count what it is asked)."""
    monkeypatch.setattr(magics, "_parent", lambda shell: {"metadata": {"cellId": "ask-cell"}})
    nb.session.configure(model=_script())
    assert nb.run(ASK).error is None
    _fresh_kernel(nb)
    live = _script()
    nb.session.configure(model=live)
    return live


def test_strict_replay_of_an_edited_prompt_names_the_cell_the_step_and_the_difference(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _edit_prompt_with_a_cell_id(notebook, monkeypatch)
    logged = log_path_for(notebook.path).read_bytes()

    run = notebook.run("%%agent --replay strict\nLook around the notebook and write two notes.")

    assert isinstance(run.error, ReplayMismatch)
    message = str(run.error)
    assert 'the cell "Look around the notebook and write two notes."' in message
    assert "model call 1" in message and "(strict replay)" in message
    assert "-[human] Look around the notebook and write a note." in message
    assert "+[human] Look around the notebook and write two notes." in message
    assert "--replay auto" in message  # the way out
    assert live.requests == []
    assert log_path_for(notebook.path).read_bytes() == logged  # a strict replay never writes


def test_auto_replay_asks_the_live_model_for_an_edited_prompt_and_records_the_new_call(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _edit_prompt_with_a_cell_id(notebook, monkeypatch)
    edited = EDITED

    first = notebook.run(edited)
    live_calls = len(live.requests)
    again = notebook.run(edited)

    assert first.error is None and again.error is None
    assert live_calls == 3 and len(live.requests) == 3  # the re-run was answered from the log
    records = _records(notebook)
    assert [r["replay"] for r in records] == ["scripted", "scripted"]  # the replay appended nothing
    assert records[1]["cell_id"] == "ask-cell"
    [request] = [c.request() for c in Recording(records[1]).calls[:1]]
    assert "write two notes" in request["messages"][1]["content"]
    assert again.rendered[0].metadata["jupyter_deepagent"]["run"]["log_hash"] == records[1]["hash"]


def test_a_changed_cell_goes_live_once_then_its_old_and_new_text_both_replay(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = _edit_prompt_with_a_cell_id(notebook, monkeypatch)
    edited = EDITED
    # the cell as first written, then edited (this shell sends no cell ids with its executions,
    # so /notebook/ keeps both texts as cells: each pass below runs the same two)
    assert notebook.run(ASK).error is None and live.requests == []  # replayed
    assert notebook.run(edited).error is None
    assert len(live.requests) == 3  # the changed request went live
    logged = log_path_for(notebook.path).read_bytes()

    for _ in range(2):  # Restart and Run All, twice, each text in turn
        _fresh_kernel(notebook)
        silent = scripted(name="field-notes")
        notebook.session.configure(model=silent)
        runs = [notebook.run(ASK), notebook.run(edited)]
        assert [run.error for run in runs] == [None, None]
        assert silent.requests == []
        assert all(r.live_text.splitlines()[0].endswith(" · replayed") for r in runs)

    assert log_path_for(notebook.path).read_bytes() == logged
    assert [r["replay"] for r in _records(notebook)] == ["scripted", "scripted"]


def test_a_recording_replays_without_the_models_api_key_and_a_change_then_says_what_to_do(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "fake-google-key-0000000")
    notebook.session.configure(model=_script())
    notebook.run(ASK)
    records = _records(notebook)
    _fresh_kernel(notebook)
    monkeypatch.delenv("GOOGLE_API_KEY")
    notebook.session.configure(model="google_genai:gemini-2.5-flash")

    # the recording was made with another model: the model is part of the request
    run = notebook.run(ASK)

    assert isinstance(run.error, ReplayMismatch), run.error
    assert "model: recorded 'scripted:field-notes', now 'google_genai:gemini-2.5-flash'" in str(
        run.error
    )
    assert "No usable model" in str(run.error) and "GOOGLE_API_KEY" in str(run.error)
    assert records[0]["model"] == "scripted:field-notes"


class _LeakyProvider(BaseChatModel):
    """A provider whose error message carries its request headers, key included."""

    model_name: str = "demo:leaky"

    @property
    def _llm_type(self) -> str:
        return "leaky"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> Any:
        raise ConnectionError("refused; sent headers {'x-api-key': 'sk-fake-provider-4242424242'}")


def test_secrets_never_reach_the_research_log_or_the_cell_outputs(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_API_KEY", "sk-fake-env-1313131313")
    monkeypatch.setenv("DEMO_PROVIDER_TOKEN", "sk-fake-provider-4242424242")
    notebook.run("import os\nprint('key is', os.environ['DEMO_API_KEY'])")
    model = scripted(
        call("read_file", file_path="/notebook/outputs/1.txt"),
        "The cell printed the key, masked.",
        name="field-notes",
    )
    notebook.session.configure(model=model)
    told = notebook.run("%%agent\nWhat did the cell print?")
    notebook.session.configure(model=_LeakyProvider(), model_retry_wait=0)
    failed = notebook.run("%%agent\nTry the other provider.")

    assert isinstance(failed.error, Exception)
    log = log_path_for(notebook.path).read_text(encoding="utf-8")
    assert len(_records(notebook)) == 2
    for secret in ("sk-fake-env-1313131313", "sk-fake-provider-4242424242"):
        assert secret not in log
        for run in (told, failed):
            shown = json.dumps([d.data for d in run.displays]) + run.stdout + str(run.error)
            assert secret not in shown
    assert "***" in log
    assert ResearchLog(log_path_for(notebook.path)).verify() == []
