"""The research log file: hash chained lines, tampering found, a cell's last good recording."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_deepagent.jupyter.session.recording import replay_mode
from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for


def _log(tmp_path: Path) -> ResearchLog:
    log = ResearchLog(log_path_for(tmp_path / "study.ipynb"))
    log.append({"kind": "run", "cell_id": "a", "source_key": "source:1", "status": "ok", "n": 1})
    log.append({"kind": "run", "cell_id": None, "source_key": "source:2", "status": "ok", "n": 2})
    log.append({"kind": "run", "cell_id": "a", "source_key": "source:9", "status": "error", "n": 3})
    return log


def test_the_log_sits_beside_the_notebook_and_an_intact_chain_verifies(tmp_path: Path) -> None:
    log = _log(tmp_path)

    assert log.path == tmp_path / "study.ipynb.agentlog.jsonl"
    assert log.verify() == []
    records = log.records()
    assert [r["prev"] for r in records[1:]] == [r["hash"] for r in records[:-1]]


def test_a_removed_line_and_an_edited_line_are_found(tmp_path: Path) -> None:
    log = _log(tmp_path)
    lines = log.path.read_text(encoding="utf-8").splitlines()

    log.path.write_text("\n".join([lines[0], lines[2]]) + "\n", encoding="utf-8")
    removed = [str(problem) for problem in log.verify()]
    log.path.write_text("\n".join([lines[0], lines[1].replace('"n":2', '"n":5'), lines[2]]) + "\n",
                        encoding="utf-8")
    edited = [str(problem) for problem in log.verify()]

    assert removed == ["line 2: the chain is broken: it does not follow the line before "
                       "(a line was removed, inserted or reordered)"]
    assert edited == ["line 2: its content does not match its hash (the line was edited)"]


def test_a_cells_recording_is_found_by_its_id_else_its_text_and_failed_runs_do_not_count(
    tmp_path: Path,
) -> None:
    log = _log(tmp_path)

    assert log.latest_for("a", "source:other")["n"] == 1  # n=3 failed
    assert log.latest_for("b", "source:2")["n"] == 2
    assert log.latest_for(None, "source:none") is None


def test_every_complete_recording_of_a_cell_is_found_the_latest_first(tmp_path: Path) -> None:
    log = _log(tmp_path)
    log.append({"kind": "run", "cell_id": "a", "source_key": "source:3", "status": "ok", "n": 4})

    assert [r["n"] for r in log.recordings_for("a", "source:2")] == [4, 1, 2]
    assert [r["n"] for r in log.recordings_for(None, "source:2")] == [2]
    assert log.recordings_for("a", "source:1", resume=1) == []


def test_a_run_reads_the_log_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _log(tmp_path)
    reads: list[Path] = []
    read_bytes = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda path: reads.append(path) or read_bytes(path))
    log = ResearchLog(log_path_for(tmp_path / "study.ipynb"))

    log.recordings_for("a", "source:1")  # what a run does: find the cell's recordings,
    log.damage()  # warn about damaged lines,
    log.append({"kind": "run", "cell_id": "a", "source_key": "source:1", "status": "ok", "n": 5})
    after = log.recordings_for("a", "source:1")  # and (a second run) find them again

    assert len(reads) == 1
    assert [r["n"] for r in after] == [5, 1]
    assert ResearchLog(log.path).records() == log.records()  # what it holds is what is on disk


def test_the_replay_mode_is_the_cells_option_then_the_environment_then_the_setting() -> None:
    assert replay_mode("strict", "off", {"JUPYTER_DEEPAGENT_REPLAY": "auto"}) == "strict"
    assert replay_mode(None, "off", {"JUPYTER_DEEPAGENT_REPLAY": "auto"}) == "auto"
    assert replay_mode(None, "off", {}) == "off"
    with pytest.raises(ValueError, match="JUPYTER_DEEPAGENT_REPLAY='sometimes': use auto"):
        replay_mode(None, "auto", {"JUPYTER_DEEPAGENT_REPLAY": "sometimes"})
