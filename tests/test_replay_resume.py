"""A run paused for approval and resumed with `%agent resume` or a button is part of the research
log: the resume's model calls and the human decision are recorded, replayed offline, verified and
shown in the timeline; under strict replay a changed decision is a mismatch."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import nbformat
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401
from test_cli import LOOPBACK_ONLY, _cli
from test_replay import _fresh_kernel, _records, _shown

from jupyter_deepagent import ReplayMismatch
from jupyter_deepagent.trace.research_log.log import log_path_for

CONFIG = "%agent config interrupt_on=write_file"
ASK = "%%agent\nWrite a short note to /outputs/note.md."


def _script(**fields: Any) -> Any:
    return scripted(
        call("write_file", file_path="/outputs/note.md", content="# Note\n\nAll quiet."),
        "The note is in `/outputs/note.md`.",
        name="field-notes",
        **fields,
    )


def _session(nb: Notebook, model: Any, decision: str = "%agent resume approve") -> list[Any]:
    nb.session.configure(model=model)
    runs = [nb.run(CONFIG), nb.run(ASK), nb.run(decision)]
    for run in runs:
        assert run.error is None, run.error
    return runs


def _save(nb: Notebook) -> None:
    """The notebook file itself, as Jupyter saves it (no cell ids sent: keyed by source)."""
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(s) for s in (CONFIG, ASK, "%agent resume approve")]
    nbformat.write(book, nb.path)


def test_an_approved_resume_replays_in_a_fresh_kernel_with_no_model_call(
    notebook: Notebook,
) -> None:
    live = _script()
    _, paused, resumed = _session(notebook, live)
    assert "waiting for approval" in paused.live_text
    assert len(live.requests) == 2
    assert resumed.live_text.splitlines()[0].endswith(
        "agent · resume approve · thread analysis · scripted:field-notes · scripted")

    logged = log_path_for(notebook.path).read_bytes()
    _fresh_kernel(notebook)
    silent = scripted(name="field-notes")  # would raise "script is exhausted" if asked
    _, paused_again, resumed_again = _session(notebook, silent)

    assert silent.requests == []
    assert _shown(paused_again) == _shown(paused)
    assert _shown(resumed_again) == _shown(resumed)
    assert "The note is in `/outputs/note.md`." in resumed_again.markdown
    assert resumed_again.live_text.splitlines()[0].endswith(
        "agent · resume approve · thread analysis · scripted:field-notes · replayed")
    assert log_path_for(notebook.path).read_bytes() == logged  # the replay appended nothing
    records = _records(notebook)
    assert [(r["kind"], r["replay"]) for r in records] == [("run", "scripted"), ("resume", "scripted")]
    resume = records[1]
    assert resume["resume"] == 1 and resume["source_key"] == records[0]["source_key"]
    assert resume["decision"]["decision"] == "approve"
    assert resume["decision"]["via"] == "%agent resume"
    assert resume["decision"]["tools"] == ["write_file"]
    assert resumed_again.rendered[0].metadata["jupyter_deepagent"]["run"]["log_hash"] == (
        resume["hash"])


def test_the_decision_is_in_the_timeline_and_verify_accepts_the_resume(
    notebook: Notebook,
) -> None:
    _session(notebook, _script())
    _save(notebook)

    shown = _cli(notebook.folder, "log", str(notebook.path))
    checked = _cli(notebook.folder, "verify", str(notebook.path), "--chain-only")

    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert "   decision: approve write_file (via %agent resume)" in lines
    assert lines.index("   decision: approve write_file (via %agent resume)") > lines.index(
        "   Write a short note to /outputs/note.md.")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "the research log is intact" in checked.stdout


def test_verify_finds_a_resume_that_lost_a_model_response(notebook: Notebook) -> None:
    from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

    _session(notebook, _script())
    _save(notebook)
    log = ResearchLog(log_path_for(notebook.path))
    records = log.records()
    log.path.unlink()
    for record in records:  # rewritten with a valid chain, the resume's calls gone
        if record["kind"] == "resume":
            record["calls"] = []
        log.append({k: v for k, v in record.items() if k not in ("prev", "hash")})

    checked = _cli(notebook.folder, "verify", str(notebook.path))

    assert checked.returncode == 1
    assert "the resume 1 of cell" in checked.stdout and "lacks model responses" in checked.stdout


def test_strict_replay_with_a_changed_decision_is_a_mismatch_naming_both(
    notebook: Notebook,
) -> None:
    _session(notebook, _script())
    _fresh_kernel(notebook)
    silent = scripted(name="field-notes")
    notebook.session.configure(model=silent, replay="strict")
    assert notebook.run(CONFIG).error is None
    assert notebook.run(ASK).error is None

    rejected = notebook.run("%agent resume reject not now")

    assert isinstance(rejected.error, ReplayMismatch)
    message = str(rejected.error)
    assert ('the cell "Write a short note to /outputs/note.md." (resume 1): the decision '
            "differs from the research log (strict replay)") in message
    assert "recorded decision 'approve'" in message
    assert "now decision 'reject', message 'not now'" in message
    assert "--replay auto" in message
    assert silent.requests == []


def test_without_the_decision_check_a_changed_decision_still_cannot_reach_a_model(
    notebook: Notebook,
) -> None:
    """Auto replay with no usable model: the rejected run's request differs, so it fails with
    the difference instead of calling a model."""
    _session(notebook, _script())
    _fresh_kernel(notebook)
    silent = scripted(name="field-notes")
    notebook.session.configure(model=silent)
    notebook.run(CONFIG)
    notebook.run(ASK)

    rejected = notebook.run("%agent resume reject not now")

    assert rejected.error is not None
    assert len(silent.requests) <= 1  # asked live once (auto), and the empty script refused
    records = _records(notebook)
    assert records[-1]["kind"] == "resume" and records[-1]["decision"]["decision"] == "reject"
    assert records[-1]["status"] != "ok"


def test_a_button_decision_is_recorded_as_the_cells_resume(notebook: Notebook) -> None:
    from test_approval_buttons import click, paused

    _, prompt = paused(notebook)
    click(prompt.button("Approve"))

    run, resume = _records(notebook)
    assert notebook.shell.user_ns["total"] == 45
    assert (run["kind"], resume["kind"], resume["resume"]) == ("run", "resume", 1)
    assert resume["source_key"] == run["source_key"]
    assert resume["decision"]["decision"] == "approve" and resume["decision"]["via"] == "button"
    assert resume["decision"]["tools"] == ["python"] and len(resume["calls"]) == 1


SUMS = """\
profile: {max_input_tokens: 100000}
script:
  - tool_calls: [{name: python, args: {code: "total = sum(range(10))\\nprint('total', total)"}}]
  - The total is 45.
"""


@LOOPBACK_ONLY
def test_run_replays_a_resume_cell_headless_and_exits_1_when_its_decision_changed(
    tmp_path: Path,
) -> None:
    (tmp_path / "sums.yaml").write_text(SUMS)
    path = tmp_path / "sums.ipynb"
    sources = ["%load_ext jupyter_deepagent", "%%agent -m scripted:sums.yaml --python\nadd up",
               "%agent resume approve", "print(total)"]

    def save(decision: str) -> None:
        book = nbformat.v4.new_notebook()
        book.cells = [nbformat.v4.new_code_cell(s) for s in sources]
        book.cells[2].source = decision
        nbformat.write(book, path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        shutil.rmtree(tmp_path / ".deepagent", ignore_errors=True)  # a fresh clone
        return _cli(tmp_path, "run", str(path), "--no-progress", *args)

    save("%agent resume approve")
    recorded = run()
    replayed = run("--replay", "strict", "--approve-recorded", "--output",
                   str(tmp_path / "out.ipynb"))
    save("%agent resume reject no")
    changed = run("--replay", "strict")

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    rows = [line.split() for line in replayed.stdout.splitlines()[1:3]]
    assert [row[-6] for row in rows] == ["replayed", "replayed"]
    assert "%agent resume approve" in replayed.stdout
    assert "code from the research log" in replayed.stderr  # printed as it ran
    assert "total = sum(range(10))" in replayed.stderr
    out = nbformat.read(tmp_path / "out.ipynb", as_version=4)
    assert out.cells[3].outputs[0]["text"] == "45\n"
    assert changed.returncode == 1, changed.stdout + changed.stderr
    assert "mismatch" in changed.stdout and "the decision differs" in changed.stderr
