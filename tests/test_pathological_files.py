"""Files no ordinary tool writes, written by an untrusted model: each is a shown result or a tool
error, never an exception that ends the cell."""

from __future__ import annotations

from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_json_nested_too_deeply_is_shown_as_text_and_the_cell_ends_normally(
    notebook: Notebook,
) -> None:
    model = scripted(
        call("write_file", file_path="/outputs/deep.json", content=DEEP_JSON),
        call("write_file", file_path="/outputs/fine.json", content='{"n": 1}'),
        "Both written.",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nwrite the files")
    assert cell.error is None
    shown = {o.metadata["jupyter_deepagent"]["path"]: o.data for o in cell.displays
             if "path" in o.metadata.get("jupyter_deepagent", {})}
    deep = shown["/outputs/deep.json"]
    assert "application/json" not in deep
    assert deep["text/plain"].startswith("[/outputs/deep.json: JSON nested too deeply")
    assert deep["text/plain"].endswith(DEEP_JSON)  # the file itself, not lost
    assert shown["/outputs/fine.json"]["application/json"] == {"n": 1}  # the next file still shows
