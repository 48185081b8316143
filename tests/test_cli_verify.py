"""`jupyter-deepagent verify` dry-runs the notebook against its log and names the cell strict
replay would reject, as Lab shows it; `run` names cells by execution count; a notebook written
by `run --output` keeps the static inspector in nbconvert HTML. A tiny notebook with a scripted
model, in real kernels, offline."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter
from test_cli import _cli

from jupyter_deepagent.trace.research_log.log import log_path_for

SCRIPT = "profile: {max_input_tokens: 100000}\nscript:\n  - Twice x is 42.\n"
ASK = "%%agent -m scripted:tiny.yaml\nWhat is twice x?"


def _tiny(tmp_path: Path) -> Path:
    """A notebook whose agent cell is the 4th cell and the 3rd to run (`In [3]`)."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "tiny.yaml").write_text(SCRIPT)
    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_markdown_cell("# A tiny study"),
        nbformat.v4.new_code_cell("%load_ext jupyter_deepagent"),
        nbformat.v4.new_code_cell("x = 21\nopen('ran.txt', 'w').write('the notebook ran')"),
        nbformat.v4.new_code_cell(ASK),
    ]
    path = folder / "tiny.ipynb"
    nbformat.write(book, path)
    return path


def _recorded(tmp_path: Path) -> tuple[Path, str]:
    """The tiny notebook recorded by `run --output` (its own file), then cloned fresh."""
    path = _tiny(tmp_path)
    recorded = _cli(tmp_path, "run", str(path), "--no-progress", "--output", str(path))
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    shutil.rmtree(path.parent / ".deepagent")
    (path.parent / "ran.txt").unlink()
    return path, recorded.stdout


def _bytes(path: Path) -> tuple[bytes, bytes]:
    return path.read_bytes(), log_path_for(path).read_bytes()


def test_verify_dry_runs_the_notebook_passes_when_it_replays_and_changes_nothing(
    tmp_path: Path,
) -> None:
    path, _ = _recorded(tmp_path)
    before = _bytes(path)

    checked = _cli(tmp_path, "verify", str(path), "--no-progress")

    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "1 of 1 cells that run the agent replayed from the log" in checked.stdout
    # it ran the notebook's code, in a copy of the folder: nothing was written here
    assert not (path.parent / "ran.txt").exists()
    assert not (path.parent / ".deepagent").exists()  # in a state folder of its own
    assert _bytes(path) == before  # the notebook and its log as they were


def test_verify_fails_naming_the_cell_whose_recording_strict_replay_would_reject(
    tmp_path: Path,
) -> None:
    path, _ = _recorded(tmp_path)
    book = nbformat.read(path, as_version=4)
    book.cells[3].source = ASK.replace("twice", "thrice")  # same cell id, a new request
    nbformat.write(book, path)
    (path.parent / "ran.txt").unlink(missing_ok=True)
    before = _bytes(path)

    chain_only = _cli(tmp_path, "verify", str(path), "--chain-only")
    checked = _cli(tmp_path, "verify", str(path), "--no-progress")

    assert chain_only.returncode == 0, chain_only.stdout  # the chain and the recording are fine
    assert "dry run" not in chain_only.stdout
    assert checked.returncode == 1, checked.stdout + checked.stderr
    rejected = next(line for line in checked.stdout.splitlines() if "rejects" in line)
    assert rejected.startswith('In [3] ("What is thrice x?"): strict replay rejects')
    assert "thrice" in checked.stdout and "twice" in checked.stdout  # what differs
    assert "stopped at In [3]: strict replay would reject the research log" in checked.stdout
    assert _bytes(path) == before  # strict replay never writes


def test_verify_makes_no_dry_run_of_a_cell_whose_own_replay_option_would_go_live(
    tmp_path: Path,
) -> None:
    path, _ = _recorded(tmp_path)
    book = nbformat.read(path, as_version=4)
    book.cells[3].source = ASK.replace("yaml\n", "yaml --replay auto\n")
    nbformat.write(book, path)
    before = _bytes(path)

    checked = _cli(tmp_path, "verify", str(path), "--no-progress")

    assert checked.returncode == 2, checked.stdout
    assert 'dry run not made: In [3] ("What is twice x?") set --replay' in checked.stdout
    assert _bytes(path) == before


def test_run_names_cells_by_execution_count_and_a_cell_that_did_not_run_by_its_place(
    tmp_path: Path,
) -> None:
    path, recorded = _recorded(tmp_path)
    shown = _cli(tmp_path, "log", str(path))
    book = nbformat.read(path, as_version=4)
    book.cells.insert(3, nbformat.v4.new_code_cell("raise RuntimeError('broken data')"))
    nbformat.write(book, path)

    stopped = _cli(tmp_path, "run", str(path), "--no-progress", "--replay", "strict")

    row = next(line for line in recorded.splitlines() if "What is twice x?" in line)
    assert row.startswith("In [3] ") and " live " in row
    assert shown.stdout.startswith("In [3] · ")
    assert stopped.returncode == 2
    row = next(line for line in stopped.stdout.splitlines() if "What is twice x?" in line)
    assert row.startswith("cell 5 of 5, not run ")
    assert ('stopped at In [3] ("raise RuntimeError(\'broken data\')"): RuntimeError: broken data'
            in stopped.stderr)


def test_a_notebook_written_by_run_output_shows_the_static_inspector_in_nbconvert_html(
    tmp_path: Path,
) -> None:
    path, _ = _recorded(tmp_path)
    book = nbformat.read(path, as_version=4)

    page, _ = HTMLExporter().from_notebook_node(book)

    assert "widgets" not in book.metadata  # no saved widget state to prefer over the fallback
    assert "application/vnd.jupyter.widget-view+json" in str(book.cells[3].outputs)
    assert 'class="jdi jdi-static"' in page and "Inspector" in page
    for section in ("system_prompt", "filesystem", "subagents"):
        assert f'data-section="{section}"' in page
    assert 'type="application/vnd.jupyter.widget-view+json"' not in page


def test_verify_says_a_notebook_has_no_log_and_how_to_record_one(tmp_path: Path) -> None:
    path = _tiny(tmp_path)

    checked = _cli(tmp_path, "verify", str(path))

    assert checked.returncode == 1
    assert "tiny.ipynb has no research log: tiny.ipynb.agentlog.jsonl is not beside it" in (
        checked.stdout
    )
    assert "jupyter-deepagent run" in checked.stdout and "--replay auto" in checked.stdout
    assert "dry run:" not in checked.stdout
