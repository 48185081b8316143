"""Inside a notebook, hints and warnings name the magic's options (`%%agent -m ...`,
`%agent config ...`), never Python arguments; a `scripted:` model does not warn about a window it
cannot have, and an edited script is played from its start at the next run."""

from __future__ import annotations

import os

from notebook_shell import Notebook, notebook  # noqa: F401

from jupyter_deepagent import MissingAPIKey, ScriptedChatModel


def test_the_missing_key_hint_names_the_magics_options(notebook: Notebook) -> None:
    cell = notebook.run("%%agent -m google_genai:gemini-2.5-flash\nhello")
    assert isinstance(cell.error, MissingAPIKey)
    message = str(cell.error)
    assert "`%%agent -m scripted:path/to/script.yaml`" in message
    assert "`%%agent -m ollama:<model>`" in message
    assert "model='" not in message and "ScriptedChatModel" not in message
    assert "GOOGLE_API_KEY" in message


def test_the_missing_key_hint_names_the_configured_env_file(notebook: Notebook) -> None:
    notebook.run("%agent config env_file=keys.env")
    cell = notebook.run("%%agent -m google_genai:gemini-2.5-flash\nhello")
    assert isinstance(cell.error, MissingAPIKey)
    assert "keys.env" in str(cell.error)


def test_the_unknown_window_warning_names_agent_config(notebook: Notebook) -> None:
    notebook.session.configure(model=ScriptedChatModel(script=["one"]))  # no window
    cell = notebook.run("%%agent\nfirst")
    assert "no context window" in cell.live_text
    assert "`%agent config context_window=<tokens>`" in cell.live_text
    assert "create_research_agent" not in cell.live_text


def test_a_scripted_file_without_a_window_does_not_warn(notebook: Notebook) -> None:
    (notebook.folder / "play.yaml").write_text("- Hello from the script.\n")
    cell = notebook.run("%%agent -m scripted:play.yaml\nhi")
    assert cell.error is None
    assert cell.markdown[-1] == "Hello from the script."
    assert "context window" not in cell.live_text


def test_a_window_the_script_sets_is_kept(notebook: Notebook) -> None:
    (notebook.folder / "small.yaml").write_text(
        "profile: {max_input_tokens: 8000}\nscript:\n  - Small.\n"
    )
    model = notebook.session._models.get("scripted:small.yaml", notebook.folder, ".env")
    assert model.profile["max_input_tokens"] == 8000


def test_an_edited_script_is_played_from_its_start_at_the_next_run(notebook: Notebook) -> None:
    script = notebook.folder / "play.yaml"
    script.write_text("- First version, step one.\n- First version, step two.\n")
    assert notebook.run("%%agent -m scripted:play.yaml\na").markdown[-1] == (
        "First version, step one."
    )
    assert notebook.run("%%agent -m scripted:play.yaml\nb").markdown[-1] == (
        "First version, step two."
    )
    script.write_text("- Second version.\n")
    stat = script.stat()
    os.utime(script, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # a later save
    cell = notebook.run("%%agent -m scripted:play.yaml\nc")
    assert cell.error is None
    assert cell.markdown[-1] == "Second version."


def test_an_unchanged_script_plays_on_from_cell_to_cell(notebook: Notebook) -> None:
    (notebook.folder / "play.yaml").write_text("- One.\n- Two.\n")
    first = notebook.run("%%agent -m scripted:play.yaml\na").markdown[-1]
    second = notebook.run("%%agent -m scripted:play.yaml\nb").markdown[-1]
    assert (first, second) == ("One.", "Two.")


def test_a_script_file_deleted_after_use_is_a_clear_error(notebook: Notebook) -> None:
    script = notebook.folder / "gone.yaml"
    script.write_text("- Once.\n")
    assert notebook.run("%%agent -m scripted:gone.yaml\na").error is None
    script.unlink()
    cell = notebook.run("%%agent -m scripted:gone.yaml\nb")
    assert cell.error is not None
    assert "gone.yaml" in str(cell.error)

