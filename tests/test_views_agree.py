"""One run, every view: the cell's header, the inspector (widget fallback HTML and text), the
sidebar's snapshot, the research log and `jupyter-deepagent log` name the same model, give the
same duration, say "tokens in" and "tokens out" alike, and the same word for what answered."""

from __future__ import annotations

import re
from typing import Any

from notebook_shell import Notebook, notebook  # noqa: F401  (the fixture)

from jupyter_deepagent.cli import main
from jupyter_deepagent.harness.models.label import answered_by
from jupyter_deepagent.jupyter.sidebar.channel import SidebarChannel
from jupyter_deepagent.trace.inspector import duration, figures_text
from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

SCRIPT = """\
name: field-notes
profile: {max_input_tokens: 100000}
script:
  - tool_calls:
      - name: ls
        args: {path: /notebook/}
  - All quiet.
"""
ASK = "%%agent\nLook around the notebook."
LABEL = "scripted:field-notes"
"""What the model calls itself: its provider and the name its script gives."""


def _text(html: str) -> str:
    """An HTML view's words, tags taken out."""
    return " ".join(re.sub(r"<style>.*?</style>|<[^>]+>", " ", html, flags=re.S).split())


def _views(nb: Notebook, capsys: Any) -> dict[str, str]:
    """Run `ASK` and gather what each view shows of it, as text."""
    capsys.readouterr()
    cell = nb.run(ASK)
    assert cell.error is None, cell.error
    inspector = next(
        o for o in cell.displays if "application/vnd.jupyter.widget-view+json" in o.data
    )
    html = inspector.data["text/html"]
    sidebar = SidebarChannel(nb.session).snapshot_message(nb.session.thread, -1, None)
    assert main(["log", str(nb.path)]) == 0
    timeline = [line for line in capsys.readouterr().out.splitlines() if " · record " in line]
    return {
        "header": cell.live_text,
        "inspector": _text(html.split("</summary>", 1)[0]),
        "inspector text": inspector.data["text/plain"].splitlines()[0],
        "sidebar": _text(sidebar["html"].split("</summary>", 1)[0]),
        "log": timeline[-1] if timeline else "",
    }


def _last_record(nb: Notebook) -> dict[str, Any]:
    return ResearchLog(log_path_for(nb.path)).records()[-1]


def test_every_view_names_the_model_as_the_research_log_does(
    notebook: Notebook,
    capsys: Any,  # noqa: F811
) -> None:
    (notebook.folder / "notes.yaml").write_text(SCRIPT)
    notebook.session.configure(model="scripted:notes.yaml")

    views = _views(notebook, capsys)

    record = _last_record(notebook)
    assert record["model"] == LABEL
    for name, shown in views.items():
        assert LABEL in shown, (name, shown)
        assert "notes.yaml" not in shown, (name, shown)  # not the spec in one view only
    assert views["header"].splitlines()[0] == f"agent · thread analysis · {LABEL} · scripted"


def test_every_view_gives_the_runs_duration_and_its_tokens_in_and_out(
    notebook: Notebook,
    capsys: Any,  # noqa: F811
) -> None:
    (notebook.folder / "notes.yaml").write_text(SCRIPT)
    notebook.session.configure(model="scripted:notes.yaml")

    views = _views(notebook, capsys)

    trace = notebook.session.runs.last_trace
    started, finished = trace.of_type("run_started")[0], trace.of_type("run_finished")[-1]
    # the run's wall time, from its first event to its last
    assert abs(finished["time"] - started["time"] - finished["seconds"]) < 0.25
    record = _last_record(notebook)
    assert record["seconds"] == finished["seconds"]
    took = duration(finished["seconds"])
    # "2 model calls · 7.1k tokens in · 9 tokens out · price unknown · 35 ms"
    figures = figures_text(finished)
    assert figures.endswith(f" tokens out · price unknown · {took}")
    for name, shown in views.items():
        assert figures in shown, (name, shown)
    assert views["header"].splitlines()[-1] == f"done · {figures}"


def test_a_scripted_run_is_scripted_and_its_replay_replayed_in_every_view(
    notebook: Notebook,
    capsys: Any,  # noqa: F811
) -> None:
    (notebook.folder / "notes.yaml").write_text(SCRIPT)
    notebook.session.configure(model="scripted:notes.yaml")
    first = _views(notebook, capsys)
    notebook.restart()
    notebook.session.configure(model="scripted:notes.yaml")
    second = _views(notebook, capsys)

    [record] = ResearchLog(log_path_for(notebook.path)).records()  # the replay appended nothing
    assert record["replay"] == "scripted"
    assert first["header"].splitlines()[0].endswith(" · scripted")
    assert second["header"].splitlines()[0].endswith(" · replayed")
    assert " · scripted · " in first["log"] and " · live · " not in first["log"]
    assert " · scripted · " in second["log"]  # the log's one record, as it was recorded


def test_answered_by_tells_a_scripted_model_from_a_live_one() -> None:
    assert answered_by("live", "scripted:field-notes") == "scripted"
    assert answered_by("live", "google_genai:gemini-2.5-flash") == "live"
    assert answered_by("replayed", "scripted:field-notes") == "replayed"
    assert answered_by("mixed", "scripted:field-notes") == "mixed"


def test_an_older_log_that_said_live_for_a_scripted_model_reads_scripted() -> None:
    from jupyter_deepagent.cli.timeline import timeline

    record = {"kind": "run", "replay": "live", "model": "scripted:x", "events": [], "calls": []}
    [entry] = timeline([record])
    assert entry["replay"] == "scripted"


def test_a_model_renamed_between_runs_is_labelled_by_its_new_name() -> None:
    from jupyter_deepagent import ScriptedChatModel
    from jupyter_deepagent.harness.models.label import model_label

    model = ScriptedChatModel(script=["ok"], name="first")
    assert model_label(model) == model_label(model.bind_tools([])) == "scripted:first"
    model.name = "second"  # the label is remembered per model, but not past a rename
    assert model_label(model) == "scripted:second"

    class Deployed:  # a label from a field that is not a name (as Azure's deployment is)
        def __init__(self, deployment: str) -> None:
            self.deployment = deployment

        def _get_ls_params(self) -> dict[str, str]:
            return {"ls_provider": "azure", "ls_model_name": self.deployment}

    deployed = Deployed("dep-a")
    assert model_label(deployed) == "azure:dep-a"
    deployed.deployment = "dep-b"
    assert model_label(deployed) == "azure:dep-b"
