"""Logs survive crashes: a line left incomplete by a kill -9 (or a full disk) mid-append, or cut
inside a multi-byte character, is skipped and named by `verify`; the next record starts on a
fresh line; every intact record is still read and replayed."""

from __future__ import annotations

import errno
import itertools
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401
from test_cli import _cli
from test_replay import _fresh_kernel

from jupyter_deepagent import ResearchLogNotWritten
from jupyter_deepagent.trace.research_log.log import ResearchLog, _line_hash, log_path_for

FIRST = "%%agent\nList the notebook."
SECOND = "%%agent\nRésumé des données, s'il vous plaît."


def _record(n: int, text: str = "plain") -> dict[str, Any]:
    return {"v": 1, "kind": "run", "cell_id": f"c{n}", "source_key": f"s{n}", "status": "ok",
            "n": n, "text": text}


def _cut_last_line(path: Path, at: bytes | None = None) -> None:
    """What a kill -9 mid-append leaves: the last line cut short, with no newline; `at` cuts it
    right after the first byte of that (multi-byte) character."""
    data = path.read_bytes()
    start = data.rstrip(b"\n").rfind(b"\n") + 1
    line = data[start:]
    cut = line.index(at) + 1 if at else len(line) // 2
    path.write_bytes(data[: start + cut])


def test_an_append_after_a_fragment_starts_a_fresh_line_and_the_chain_resumes(
    tmp_path: Path,
) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    log.append(_record(2))
    _cut_last_line(log.path)

    log.append(_record(3))

    assert [r["n"] for r in log.records()] == [1, 3]
    assert log.latest_for("c3", "s3")["n"] == 3
    [problem] = log.verify()
    assert problem.line == 2
    assert "damaged, skipped" in problem.message and "stopped mid-append" in problem.message
    assert "the chain resumes at line 3" in problem.message
    assert log.path.read_bytes().count(b"\n") == 3  # the fragment stays on its own line


def test_a_record_holding_a_lone_surrogate_is_written_readable_and_intact(tmp_path: Path) -> None:
    # a model's text can hold half of a surrogate pair; written raw it was not UTF-8, and the
    # next read took the record for a damaged line and dropped it from the replay
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1, text="half a pair: \ud83d, then more"))
    log.append(_record(2))
    assert [r["text"] for r in log.records()] == ["half a pair: \ud83d, then more", "plain"]
    assert log.verify() == []
    log.path.read_bytes().decode("utf-8")  # the file stays valid UTF-8


def test_a_line_cut_inside_a_multibyte_character_is_named_and_every_other_record_reads(
    tmp_path: Path,
) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    log.append(_record(2, "Résumé"))
    _cut_last_line(log.path, at="é".encode())
    log.append(_record(3, "ça va"))

    assert [r["n"] for r in log.records()] == [1, 3]
    [problem] = log.verify()
    assert problem.line == 2 and "not UTF-8 text at byte" in problem.message
    assert "the chain resumes at line 3" in problem.message


def test_a_record_an_older_writer_glued_to_a_fragment_is_recovered(tmp_path: Path) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    first = log.append(_record(1))
    log.append(_record(2, "Résumé"))
    _cut_last_line(log.path, at="é".encode())
    # the old append: chained to the last record it could read, written right after the fragment
    elsewhere = ResearchLog(tmp_path / "elsewhere.jsonl")
    elsewhere.append(_record(1))
    third = elsewhere.append(_record(3))
    assert third["prev"] == first["hash"]
    log.path.write_bytes(log.path.read_bytes() + elsewhere.path.read_bytes().split(b"\n")[1]
                         + b"\n")

    assert [r["n"] for r in log.records()] == [1, 3]
    [problem] = log.verify()
    assert problem.line == 2 and "the complete record glued after it was recovered" in str(problem)


def test_a_glued_record_of_another_shape_is_skipped_and_named_not_read(tmp_path: Path) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    log.append(_record(2, "Résumé"))
    _cut_last_line(log.path, at="é".encode())
    edited = {**_record(3), "events": 5, "prev": ""}  # an older writer's line, then edited
    edited["hash"] = _line_hash(edited)  # and its hash made to hold again
    glued = json.dumps(edited, separators=(",", ":"))
    log.path.write_bytes(log.path.read_bytes() + glued.encode() + b"\n")

    assert [r["n"] for r in log.records()] == [1]  # read, not a crash on events that are 5
    [problem] = log.damage()
    assert problem.line == 2 and "the record glued after it was skipped too" in str(problem)
    assert "'events' holds int" in str(problem)


def test_a_record_missing_only_its_newline_is_intact_and_the_next_one_starts_a_line(
    tmp_path: Path,
) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    log.path.write_bytes(log.path.read_bytes().rstrip(b"\n"))

    log.append(_record(2))

    assert [r["n"] for r in log.records()] == [1, 2]
    assert log.verify() == []


def _two_cells(nb: Notebook) -> None:
    nb.session.configure(model=scripted(call("ls", path="/notebook/"), "Nothing yet.",
                                        "En bref : rien.", name="notes"))
    book = nbformat.v4.new_notebook()  # the file, as Jupyter saves it (cells keyed by source)
    book.cells = [nbformat.v4.new_code_cell(source) for source in (FIRST, SECOND)]
    nbformat.write(book, nb.path)  # before the run, as Jupyter has: /notebook/ names by it
    for source in (FIRST, SECOND):
        assert nb.run(source).error is None


def _replays_both(nb: Notebook) -> list[Any]:
    _fresh_kernel(nb)
    silent = scripted(name="notes")
    nb.session.configure(model=silent, replay="strict")
    runs = [nb.run(FIRST), nb.run(SECOND)]
    for run in runs:
        assert run.error is None, run.error
        assert run.live_text.splitlines()[0].endswith(" · replayed")
    assert silent.requests == []
    return runs


def _rerun_second(nb: Notebook) -> Any:
    """The next run after the crash: the cell again, answered live and appended."""
    nb.session.configure(model=scripted("En bref : rien.", name="notes"))
    return nb.run(SECOND)


def test_a_notebook_whose_log_was_cut_by_a_kill_replays_every_intact_record(
    notebook: Notebook,
) -> None:
    _two_cells(notebook)
    _cut_last_line(log_path_for(notebook.path))  # killed while appending the second cell's run

    again = _rerun_second(notebook)

    assert again.error is None, again.error
    assert "line 2: damaged, skipped" in again.live_text  # the next run warns
    _replays_both(notebook)


def test_a_notebook_whose_log_has_a_cut_character_still_runs_replays_and_verifies(
    notebook: Notebook,
) -> None:
    _two_cells(notebook)
    path = log_path_for(notebook.path)
    _cut_last_line(path, at="é".encode())

    again = _rerun_second(notebook)
    runs = _replays_both(notebook)
    checked = _cli(notebook.folder, "verify", str(notebook.path))
    shown = _cli(notebook.folder, "log", str(notebook.path))

    assert again.error is None and "not UTF-8 text" in again.live_text
    assert "line 2: damaged" in runs[0].live_text
    assert checked.returncode == 1
    assert "line 2: damaged, skipped: not UTF-8 text at byte" in checked.stdout
    assert "the chain resumes at line 3" in checked.stdout
    assert shown.returncode == 0 and "Résumé des données" in shown.stdout
    assert "line 2: damaged" in shown.stderr


def test_verify_says_what_the_chain_proves_and_what_it_does_not(notebook: Notebook) -> None:
    from jupyter_deepagent.trace.research_log.log import VERIFY_SCOPE

    _two_cells(notebook)

    checked = _cli(notebook.folder, "verify", str(notebook.path), "--chain-only")

    assert checked.returncode == 0, checked.stdout
    assert VERIFY_SCOPE in checked.stdout
    assert "not prove who wrote it" in VERIFY_SCOPE


def test_a_log_that_cannot_be_written_shows_the_runs_results_then_one_clear_error(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full_disk(self: ResearchLog, record: dict[str, Any]) -> dict[str, Any]:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(ResearchLog, "append", full_disk)
    report = call("write_file", file_path="/outputs/report.md", content="# Findings\n\nAll good.")
    notebook.session.configure(model=scripted(report, "The report is in /outputs/report.md."))

    cell = notebook.run("%%agent\nWrite the report.")

    assert isinstance(cell.error, ResearchLogNotWritten)
    said = str(cell.error)
    assert "The run finished (its results are above)" in said and "No space left" in said
    assert "re-running the cell asks the model again" in said and "Free disk space" in said
    assert "Traceback" not in cell.stdout + cell.stderr  # one line, not a traceback
    shown = "\n".join(cell.markdown)
    assert "All good." in shown  # the /outputs/ file, so it is saved with the notebook
    assert "The report is in /outputs/report.md." in shown  # the answer
    assert notebook.shell.user_ns["_agent"].final_text == "The report is in /outputs/report.md."


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        ({"v": "3"}, "its field 'v' holds str, not a number"),
        ({"events": 5}, "its field 'events' holds int, not a list"),
        ({"calls": [1, 2]}, "its 'calls' are not all objects"),
        ({"messages": "x"}, "its field 'messages' holds str, not an object"),
        ({"v": 99}, "record format 99 by a newer jupyter-deepagent"),
    ],
)
def test_a_record_edited_into_another_shape_is_skipped_and_named_not_a_crash(
    tmp_path: Path, edit: dict[str, Any], said: str
) -> None:
    notebook = tmp_path / "study.ipynb"
    nbformat.write(nbformat.v4.new_notebook(), notebook)
    log = ResearchLog(log_path_for(notebook))
    log.append(_record(1))
    log.append(_record(2))
    lines = log.path.read_text().splitlines()
    edited = json.loads(lines[0]) | edit
    log.path.write_text("\n".join([json.dumps(edited), lines[1]]) + "\n")

    fresh = ResearchLog(log.path)
    assert [r["n"] for r in fresh.records()] == [2]  # the other record still reads
    [problem] = fresh.damage()
    assert problem.line == 1 and said in problem.message
    timeline = _cli(tmp_path, "log", str(notebook))
    assert timeline.returncode == 0, timeline.stderr
    assert "Traceback" not in timeline.stderr and said in timeline.stderr
    checked = _cli(tmp_path, "verify", str(notebook), "--chain-only")
    assert "Traceback" not in checked.stdout + checked.stderr
    assert "line 1: skipped: " in checked.stdout and said in checked.stdout


def test_two_processes_appending_at_once_keep_one_chain(tmp_path: Path) -> None:
    # two kernels of one notebook (two threads, or JupyterLab and `jupyter-deepagent run`)
    path = tmp_path / "study.ipynb.agentlog.jsonl"
    writer = (
        "import sys\nfrom jupyter_deepagent.trace.research_log.log import ResearchLog\n"
        "log = ResearchLog(sys.argv[1])\n"
        "for n in range(60):\n"
        "    log.append({'v': 2, 'kind': 'run', 'writer': sys.argv[2], 'n': n, 'text': 'x' * 2000})\n"
    )
    writers = [
        subprocess.Popen([sys.executable, "-c", writer, str(path), name]) for name in "ab"
    ]
    assert [w.wait(120) for w in writers] == [0, 0]

    log = ResearchLog(path)
    records = log.records()
    assert len(records) == 120 and log.damage() == []
    assert all(r["prev"] == before["hash"] for before, r in itertools.pairwise(records))
    assert {r["writer"] for r in records} == {"a", "b"}


def test_a_filesystem_without_locks_still_takes_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lustre without `-o flock`, NFS mounted `nolock`: flock says ENOSYS or ENOLCK
    from jupyter_deepagent.trace.research_log import log as research_log

    def no_locks(descriptor: int, operation: int) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(research_log.fcntl, "flock", no_locks)
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    log.append(_record(2))
    assert [r["n"] for r in ResearchLog(log.path).records()] == [1, 2]


def test_a_record_from_a_newer_version_is_skipped_but_the_next_one_chains_to_it(
    tmp_path: Path,
) -> None:
    log = ResearchLog(tmp_path / "study.ipynb.agentlog.jsonl")
    log.append(_record(1))
    newer = {**_record(2), "v": 99}
    log.append(newer)  # as the newer version wrote it: its hash, chained to record 1

    older = ResearchLog(log.path)  # this version, reading it afterwards
    assert [r["n"] for r in older.records()] == [1]
    third = older.append(_record(3))
    lines = [json.loads(line) for line in log.path.read_text().splitlines()]
    assert third["prev"] == lines[1]["hash"]  # the newer version's chain still holds


def test_a_strict_replay_of_a_renamed_notebook_points_at_the_log_beside_it(
    notebook: Notebook,
) -> None:
    (notebook.folder / "quickstart.ipynb.agentlog.jsonl").write_text(
        json.dumps(_record(1)) + "\n"
    )
    notebook.session.configure(model=scripted("An answer."))
    cell = notebook.run("%%agent --replay strict\nWhat is there?")
    said = str(cell.error)
    assert "has no recording" in said
    assert (
        f"There is no {notebook.path.name}.agentlog.jsonl beside the notebook, but "
        "quickstart.ipynb.agentlog.jsonl is: if the notebook was renamed or copied" in said
    )
