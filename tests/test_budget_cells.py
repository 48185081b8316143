"""Cost and budget in the notebook: a scripted `%%agent --budget` run pauses at the right call with
Continue / Raise budget / Stop buttons (clicks simulated as the frontend sends them), `%agent
resume` answers it in a terminal, the cell's header says what the run cost ("price unknown" for a
model without a price), and the inspector says it per call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_shell import Notebook, notebook  # noqa: F401
from test_approval_buttons import WIDGET_VIEW, Prompt, click, texts, type_into

from jupyter_deepagent.trace.inspector.snapshot import build_snapshot


def _note(number: int) -> str:
    return (
        f"  - tool_calls: [{{name: write_file, args: {{file_path: /n{number}.md, content: x}}}}]\n"
        "    usage: {input_tokens: 1000, output_tokens: 100}\n"
    )


# five calls of 1,100 tokens; at "8k tokens" three go through and the fourth would pass it (its
# estimate: its input as the third sent it plus what came since, plus 4,000 output tokens)
SCRIPT = (
    "name: NAME\nprofile: {max_input_tokens: 100000}\nscript:\n"
    + "".join(_note(n) for n in range(1, 5))
    + "  - content: All written.\n    usage: {input_tokens: 1000, output_tokens: 100}\n"
)
PRICES = '[prices."scripted:priced"]\ninput = 2.0\noutput = 10.0\n'
"""$2 and $10 per million tokens: a call of 1,000 in and 100 out costs $0.003."""


def _model(notebook: Notebook, name: str = "notes") -> str:
    (notebook.folder / f"{name}.yaml").write_text(SCRIPT.replace("NAME", name))
    return f"scripted:{name}.yaml"


def _paused(notebook: Notebook, budget: str = "8k tokens") -> tuple[Any, Prompt]:
    cell = notebook.run(f'%%agent -m {_model(notebook)} --budget "{budget}"\nWrite four notes.')
    assert cell.error is None, cell.error
    assert "paused at budget" in cell.live_text
    [bundle] = [
        o.data[WIDGET_VIEW]
        for o in cell.displays
        if WIDGET_VIEW in o.data
        and o.metadata.get("jupyter_deepagent", {}).get("kind") == "budget-buttons"
    ]
    return cell, Prompt(bundle)


def _calls(notebook: Notebook) -> int:
    return len(notebook.shell.user_ns["_agent"].of_type("model_call"))


def test_a_budget_pauses_the_cell_at_the_right_call_with_its_buttons(notebook: Notebook) -> None:
    cell, prompt = _paused(notebook)

    assert _calls(notebook) == 3
    text = "\n".join(cell.markdown)
    assert "Paused at the budget" in text and "8,000 tokens" in text
    assert "3,300 tokens (main 3,300 tokens / subagents 0 tokens / summarizer 0 tokens)" in text
    assert "the next call (main agent, on `scripted:notes`)" in text
    assert "%agent resume continue" in text
    labels = {b.description for b in prompt.widgets if hasattr(b, "on_click")}
    assert {"Continue", "Raise budget", "Stop"} <= labels


def test_continue_resumes_the_run_and_the_next_call_asks_again(notebook: Notebook) -> None:
    _, prompt = _paused(notebook)
    click(prompt.button("Continue"))

    assert "continued" in prompt.status
    assert "paused at budget" in texts(prompt.output)  # the fifth call would pass it too
    trace = notebook.shell.user_ns["_agent"]
    assert [e["action"] for e in trace.of_type("budget_decided")] == ["continue"]
    assert _calls(notebook) == 1  # this run's own: the fourth call


def test_raise_takes_the_budget_typed_beside_it_and_the_run_finishes(notebook: Notebook) -> None:
    _, prompt = _paused(notebook)
    type_into(prompt.of(__import__("ipywidgets").Text), "50k tokens")
    click(prompt.button("Raise budget"))

    assert "budget raised" in prompt.status and "50k tokens" in prompt.status
    trace = notebook.shell.user_ns["_agent"]
    assert trace.of_type("budget_decided")[0]["budget"] == "50,000 tokens"
    assert trace.status == "ok" and trace.final_text == "All written."


def test_stop_ends_the_run_and_the_next_cell_runs_on_the_thread(notebook: Notebook) -> None:
    _, prompt = _paused(notebook)
    click(prompt.button("Stop"))

    assert "stopped" in prompt.status
    assert "Stopped at budget" in texts(prompt.output)
    assert _calls(notebook) == 0
    (notebook.folder / "after.yaml").write_text("name: after\nscript:\n  - Still here.\n")
    after = notebook.run("%%agent -m scripted:after.yaml\nAre you there?")
    assert after.error is None, after.error
    assert notebook.shell.user_ns["_agent"].final_text == "Still here."


def test_agent_resume_answers_a_budget_pause_in_a_terminal(notebook: Notebook) -> None:
    _paused(notebook)
    resumed = notebook.run('%agent resume raise "20k tokens"')
    assert resumed.error is None, resumed.error
    assert notebook.shell.user_ns["_agent"].status == "ok"

    refused = notebook.run("%agent resume continue")
    assert "nothing is waiting at its budget" in str(refused.error)
    wrong = notebook.run("%agent resume approve")
    assert "nothing is waiting for approval" in str(wrong.error)


def test_a_raise_in_another_unit_is_refused_and_the_pause_stays(notebook: Notebook) -> None:
    _paused(notebook)
    refused = notebook.run('%agent resume raise "$1"')
    assert "same unit" in str(refused.error)
    assert notebook.shell.user_ns["_agent"].interrupts  # still paused


@pytest.mark.parametrize(
    ("model", "cost"),
    [("priced", "$0.0150"), ("notes", "price unknown")],
)
def test_the_cell_header_says_what_the_run_cost(notebook: Notebook, model: str, cost: str) -> None:
    (notebook.folder / ".deepagent.toml").write_text(PRICES)
    cell = notebook.run(f"%%agent -m {_model(notebook, model)}\nWrite four notes.")
    assert cell.error is None, cell.error
    assert f"5.5k tokens out · {cost}" not in cell.live_text  # tokens out are 500
    assert f"500 tokens out · {cost}" in cell.live_text


def test_the_inspector_shows_each_calls_cost_and_the_total_by_part(notebook: Notebook) -> None:
    (notebook.folder / ".deepagent.toml").write_text(PRICES)
    notebook.run(f"%%agent -m {_model(notebook, 'priced')}\nWrite four notes.")
    snap = build_snapshot(notebook.shell.user_ns["_agent"].events)

    assert [call["cost"] for call in snap["calls"]] == [0.003] * 5
    assert snap["run"]["cost"] == pytest.approx(0.015)
    assert snap["run"]["cost_by_part"] == {"main": 0.015, "subagents": 0.0, "summarizer": 0.0}
    from jupyter_deepagent.trace.inspector.html import static_html

    html = static_html(snap)
    assert "$0.0030" in html and "main $0.0150" in html


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "JUPYTER_DEEPAGENT_REPLAY"}
    return subprocess.run(
        [sys.executable, "-m", "jupyter_deepagent.cli", *args],
        capture_output=True,
        text=True,
        env={**env, "IPYTHONDIR": str(tmp_path / "ipython")},
        timeout=600,
        check=False,
    )


def test_headless_run_stops_at_the_budget_exits_3_and_log_shows_the_cost(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "priced.yaml").write_text(SCRIPT.replace("NAME", "priced"))
    (folder / ".deepagent.toml").write_text(PRICES)
    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_code_cell("%load_ext jupyter_deepagent"),
        nbformat.v4.new_code_cell('%%agent -m scripted:priced.yaml --budget "$0.05"\nWrite notes.'),
    ]
    path, out = folder / "spend.ipynb", folder / "out.ipynb"
    nbformat.write(book, path)

    ran = _cli(tmp_path, "run", str(path), "--output", str(out), "--no-progress")

    assert ran.returncode == 3, ran.stderr
    said = json.dumps(nbformat.read(out, as_version=4).cells[1].outputs)
    assert "Stopped at budget $0.05" in said and "No one could answer a pause here" in said
    timeline = _cli(tmp_path, "log", str(path))
    assert timeline.returncode == 0, timeline.stderr
    # each call is estimated at its input plus 4,000 output tokens ($0.042); three calls of
    # $0.003 go through, the fourth would pass $0.05
    assert "3 model calls" in timeline.stdout and "$0.0090" in timeline.stdout
    assert "(stopped at budget)" in timeline.stdout
    assert "Notebook total: $0.0090 over 1 run" in timeline.stdout


def test_the_answer_is_recorded_so_a_replay_pauses_and_resumes_the_same_way(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    from test_replay import _fresh_kernel, _records

    from jupyter_deepagent import ReplayMismatch

    model = _model(notebook)
    ask = f'%%agent -m {model} --budget "8k tokens"\nWrite four notes.'
    first = [notebook.run(ask), notebook.run('%agent resume raise "20k tokens"')]
    assert all(cell.error is None for cell in first)
    records = _records(notebook)
    assert [r["kind"] for r in records] == ["run", "resume"]
    assert records[0]["budget"] == "paused"
    assert records[1]["decision"] == {
        "decision": "raise",
        "budget": "20,000 tokens",
        "via": "%agent resume",
    }

    _fresh_kernel(notebook)
    (notebook.folder / "notes.yaml").write_text("name: notes\nscript: []\n")  # asked: it fails
    again = notebook.run(ask)
    assert again.error is None, again.error
    assert "paused at budget" in again.live_text and _calls(notebook) == 3
    resumed = notebook.run('%agent resume raise "20k tokens"')
    assert resumed.error is None, resumed.error
    assert " · replayed" in resumed.live_text.splitlines()[0]
    assert notebook.shell.user_ns["_agent"].final_text == "All written."
    assert len(_records(notebook)) == 2  # the replay appended nothing

    _fresh_kernel(notebook)
    monkeypatch.setenv("JUPYTER_DEEPAGENT_REPLAY", "strict")
    assert "paused at budget" in notebook.run(ask).live_text
    refused = notebook.run("%agent resume stop")
    assert isinstance(refused.error, ReplayMismatch)
    assert "recorded 'raise' 20,000 tokens; now 'stop'" in str(refused.error)
