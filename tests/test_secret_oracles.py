"""No sequence of tool calls reveals a masked secret: an attacker model that reacts to what its
tools return tries the edit trick and a regex binary search through grep, on a key from `.env`
(in a workspace file), a key printed in a saved notebook in the workspace, and a key printed in
a live cell; the key reaches neither the model, nor the checkpoint, nor `_agent`, nor the cell.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Generator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from notebook_shell import Notebook, call, notebook  # noqa: F401
from pydantic import PrivateAttr

from jupyter_deepagent import PermissionDenied, ScriptedChatModel
from jupyter_deepagent.harness.models._script_format import compile_step

ENV_KEY = "AIza" + "SyD3mo-EnvKey_0123456789abcdefghij"  # 39 characters, Google's shape
SAVED_KEY = "AIza" + "SyS4ved-NotebookKey_98765432zyxwvu"  # printed by an old notebook only
ALPHABET = string.ascii_letters + string.digits + "_-"

Plan = Generator[Any, str, None]


class AttackerModel(ScriptedChatModel):
    """A model whose next step is computed from the last tool result by `plan`, a generator
    that receives each result's text (the first step is taken before any result)."""

    plan: Any = None
    _started: bool = PrivateAttr(default=False)

    def _pick(self, request: Any) -> Any:
        last = str(request.last.text) if request.messages else ""
        try:
            if not self._started:
                self._started = True
                step = next(self.plan)
            else:
                step = self.plan.send(last)
        except StopIteration:
            step = "I give up."
        return compile_step(step, "attacker step")


def attacker(plan: Plan | list[Any]) -> AttackerModel:
    """The attacker playing `plan` (a list is played in order, whatever the results)."""
    if isinstance(plan, list):
        plan = (yield_ for yield_ in plan)
    return AttackerModel(plan=plan, profile={"max_input_tokens": 1_000_000})


def binary_search(path: str, known: str, unknown: int, found: list[str]) -> Plan:
    """Recover `unknown` characters after `known` by asking grep which half of the alphabet
    the next character is in (6 calls a character); the guess goes to `found`, a file, and
    the answer."""
    guess = known
    for _ in range(unknown):
        chars = ALPHABET
        while len(chars) > 1:
            half = chars[: len(chars) // 2]
            cls = "".join(re.escape(c) for c in half)
            result = yield call(
                "grep", pattern=re.escape(guess) + f"[{cls}]", path=path, regex=True
            )
            chars = chars[len(half) :] if result.startswith("No matches") else half
        guess += chars
    found.append(guess)
    yield call("write_file", file_path="/outputs/stolen.md", content=f"key: {guess}")
    yield f"The key starts {guess}"


def edit_trick(path: str, results: list[str]) -> Plan:
    """Break the key's spelling with a replace-all edit, then look for it in every way."""
    results.append((yield call("read_file", file_path=path)))
    results.append(
        (yield call("edit_file", file_path=path, old_string="AIza", new_string="AIza~",
                    replace_all=True))
    )
    results.append(
        (yield call("edit_file", file_path=path, old_string="Sy", new_string="S~y",
                    replace_all=True))
    )
    results.append((yield call("edit_file", file_path=path, old_string="key used: ",
                               new_string="k: ")))
    results.append((yield call("grep", pattern="AIza", path="/workspace/",
                               output_mode="content")))
    results.append((yield call("grep", pattern="~", path="/workspace/", output_mode="content")))
    results.append((yield call("read_file", file_path=path)))
    yield "done"


def _save_old_notebook(folder: Path) -> None:
    cell = nbformat.v4.new_code_cell("print(maps_key)", execution_count=3)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{SAVED_KEY}\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), folder / "old_analysis.ipynb")


@pytest.fixture
def keyed(notebook: Notebook, monkeypatch: pytest.MonkeyPatch) -> Notebook:
    """A notebook whose folder holds a `.env` key, a file that logged it, and an old notebook
    that printed another key; a live cell printed the `.env` key too."""
    monkeypatch.delenv("MAPS_API_KEY", raising=False)
    (notebook.folder / ".env").write_text(f"MAPS_API_KEY={ENV_KEY}\n")
    (notebook.folder / "run.log").write_text(f"starting\nkey used: {ENV_KEY}\nfinished\n")
    _save_old_notebook(notebook.folder)
    notebook.session.configure(model=attacker(["hello"]))
    assert notebook.run("%%agent\nhello").error is None  # reads .env into the environment
    notebook.run("import os\nprint(os.environ['MAPS_API_KEY'])")
    return notebook


def _everything_recorded(notebook: Notebook, cells: list[Any], models: list[Any]) -> str:
    """Every text a key could have landed in: requests, state folder, `_agent`, cell output."""
    texts = []
    for model in models:
        for request in model.requests:
            texts += [json.dumps(m.model_dump(), default=str) for m in request.messages]
    for path in (notebook.folder / ".deepagent").rglob("*"):
        if path.is_file():
            texts.append(path.read_bytes().decode("latin-1"))
    trace = notebook.shell.user_ns["_agent"]
    texts.append(json.dumps(trace.events, default=str))
    for cell in cells:
        texts += [cell.stdout, cell.stderr, repr([o.data for o in cell.outputs])]
    return "\n".join(texts)


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("/workspace/run.log", ENV_KEY),
        ("/workspace/old_analysis.ipynb", SAVED_KEY),
        ("/notebook/outputs/", ENV_KEY),
        ("/notebook/saved/", ENV_KEY),
    ],
)
def test_a_grep_binary_search_learns_nothing_about_a_key(
    keyed: Notebook, path: str, key: str
) -> None:
    if path == "/notebook/saved/":  # the notebook itself was saved with the key in an output
        cell = nbformat.v4.new_code_cell("print(key)", execution_count=1)
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{key}\n")]
        nbformat.write(nbformat.v4.new_notebook(cells=[cell]), keyed.path)
    found: list[str] = []
    model = attacker(binary_search(path, "AIzaSy", 6, found))
    keyed.session.configure(model=model)
    cell = keyed.run("%%agent\nfind the key")
    assert cell.error is None
    assert len(model.requests) == 6 * 6 + 2  # every probe answered, then write and answer
    assert found and found[0] != key[: len(found[0])]
    recorded = _everything_recorded(keyed, [cell], [model])
    assert key not in recorded
    assert key[:12] not in recorded  # not even the recovered start of it


def test_a_regex_binary_search_would_work_without_the_mask(
    keyed: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker is real: matching on the unmasked text hands it the key's start."""
    from jupyter_deepagent.project.secrets import masked_text as masked_files

    monkeypatch.setattr(masked_files, "masked_text",
                        lambda raw, redact: masked_files.MaskedText(raw, [], raw))
    found: list[str] = []
    keyed.session.configure(model=attacker(binary_search("/workspace/run.log", "AIzaSy", 4,
                                                         found)))
    assert keyed.run("%%agent\nfind the key").error is None
    assert found == [ENV_KEY[:10]]


@pytest.mark.parametrize(
    ("path", "key"),
    [("/workspace/run.log", ENV_KEY), ("/workspace/old_analysis.ipynb", SAVED_KEY)],
)
def test_the_edit_trick_is_refused_and_the_file_keeps_its_key(
    keyed: Notebook, path: str, key: str
) -> None:
    on_disk = keyed.folder / path.removeprefix("/workspace/")
    before = on_disk.read_text()
    results: list[str] = []
    model = attacker(edit_trick(path, results))
    keyed.session.configure(model=model)
    cell = keyed.run("%%agent\nfix the file")
    assert cell.error is None
    first_read, replace_all, part, context, grep_key, grep_tilde, last_read = results
    assert "***" in first_read and first_read == last_read
    # an edit finds no text with the key in it; a notebook is refused before it is looked at
    refusal = "it is a notebook" if path.endswith(".ipynb") else "not found"
    assert refusal in replace_all and refusal in part
    if path.endswith(".log"):
        assert "holds a secret shown as ***" in context
    assert grep_key.startswith("No matches") and grep_tilde.startswith("No matches")
    assert on_disk.read_text() == before
    assert key not in _everything_recorded(keyed, [cell], [model])


def test_an_edit_beside_a_masked_line_still_works(keyed: Notebook) -> None:
    model = attacker([
        call("edit_file", file_path="/workspace/run.log", old_string="finished",
             new_string="finished cleanly"),
        "done",
    ])
    keyed.session.configure(model=model)
    assert keyed.run("%%agent\nedit").error is None
    assert (keyed.folder / "run.log").read_text() == (
        f"starting\nkey used: {ENV_KEY}\nfinished cleanly\n"
    )


def test_renaming_the_name_that_marks_a_password_is_refused(keyed: Notebook) -> None:
    (keyed.folder / "settings.py").write_text('db_password = "hunter2-horse"\nretries = 3\n')
    results: list[str] = []

    def plan() -> Plan:
        results.append((yield call("edit_file", file_path="/workspace/settings.py",
                                   old_string="db_password", new_string="db_value")))
        results.append((yield call("read_file", file_path="/workspace/settings.py")))
        yield "done"

    model = attacker(plan())
    keyed.session.configure(model=model)
    assert keyed.run("%%agent\nrename").error is None
    assert "holds a secret shown as ***" in results[0]
    assert 'db_password = "***"' in results[1]
    assert "hunter2-horse" not in _everything_recorded(keyed, [], [model])


def test_edits_between_masked_lines_land_where_the_agent_saw_them(tmp_path: Path) -> None:
    from jupyter_deepagent import EditConflict, PermissionDenied
    from jupyter_deepagent.backends import DiskBackend
    from jupyter_deepagent.project.workspace import GuardedFolder
    from jupyter_deepagent.project.secrets.redaction import Redactor

    text = (
        "a: x\r\n"
        f"k1 {ENV_KEY} k1\r\n"
        "b: x\n"
        f"{SAVED_KEY}{ENV_KEY}\n"
        "c: x and x\n"
    )
    (tmp_path / "f.txt").write_bytes(text.encode())
    guard = GuardedFolder(DiskBackend(tmp_path), redact=Redactor(lambda: [ENV_KEY], environ={}))
    assert guard.read("/f.txt").lines == ["a: x", "k1 *** k1", "b: x", "***", "c: x and x"]
    with pytest.raises(EditConflict, match="found 4 times"):  # not the x inside a key
        guard.edit("/f.txt", "x", "Y")
    assert guard.edit("/f.txt", "x", "Y", replace_all=True).replacements == 4
    with pytest.raises(PermissionDenied, match="holds a secret"):
        guard.edit("/f.txt", "k1", "k2", replace_all=True)
    with pytest.raises(EditConflict, match="not found"):
        guard.edit("/f.txt", ENV_KEY[:8], "z")
    assert (tmp_path / "f.txt").read_bytes().decode() == (
        f"a: Y\r\nk1 {ENV_KEY} k1\r\nb: Y\n{SAVED_KEY}{ENV_KEY}\nc: Y and Y\n"
    )


WORDS = ["root", "admin", "guest", "postgres", "hunter2", "letmein", "dragon", "qwerty123",
         "correct-horse-battery-staple", "trustno1"]
"""A word list: the `.env` below holds three of these (a user name, a short password, and a
long but famous passphrase)."""


@pytest.fixture
def with_db_env(notebook: Notebook, monkeypatch: pytest.MonkeyPatch) -> Notebook:
    for name in ("DB_USER", "DB_PASSWORD", "DB_PASSPHRASE"):
        monkeypatch.delenv(name, raising=False)
    (notebook.folder / ".env").write_text(
        "DB_USER=admin\nDB_PASSWORD=hunter2\nDB_PASSPHRASE=correct-horse-battery-staple\n"
    )
    notebook.session.configure(model=attacker(["hello"]), python_approval=False)
    assert notebook.run("%%agent\nhello").error is None  # reads .env into the environment
    return notebook


def word_list_attack(path: str, results: list[str], recovered: list[str]) -> Plan:
    """Write the word list, grep it for the mask, read it back; a word shown as *** is in use."""
    results.append((yield call("write_file", file_path=path, content="\n".join(WORDS) + "\n")))
    grep = yield call("grep", pattern="***", path=path, output_mode="content")
    results.append(grep)
    read = yield call("read_file", file_path=path)
    results.append(read)
    for shown in (grep, read):  # `path:2: ***` and `     2\t***`: line 2 is in use
        numbers = {int(n) for n in re.findall(r"(\d+)(?::\s|\t)\*\*\*", shown)}
        recovered += [WORDS[n - 1] for n in sorted(numbers) if WORDS[n - 1] not in recovered]
    for word in WORDS:  # grep each word: one that is in use would give no match
        results.append((yield call("grep", pattern=word, path=path, output_mode="content")))
    yield "done"


@pytest.mark.parametrize("path", ["/workspace/words.txt", "/outputs/words.txt", "/words.txt"])
def test_a_word_list_and_grep_learn_nothing_about_the_env_values(
    with_db_env: Notebook, path: str
) -> None:
    results: list[str] = []
    recovered: list[str] = []
    model = attacker(word_list_attack(path, results, recovered))
    with_db_env.session.configure(model=model)
    assert with_db_env.run("%%agent\nguess the password").error is None
    written, grep, read, *per_word = results
    assert recovered == []
    assert grep.startswith("No matches")
    assert all(word in read for word in WORDS)
    assert len(per_word) == len(WORDS)
    shapes = {re.sub(r":\d+:", ":N:", result.replace(word, "WORD"))
              for word, result in zip(WORDS, per_word, strict=True)}
    assert len(shapes) == 1  # every word greps the same
    assert all("***" not in result for result in (read, *per_word))


def test_a_word_list_read_back_through_another_path_learns_nothing(
    with_db_env: Notebook,
) -> None:
    """The same file under a second name (a link the user made, or another spelling on a
    case-insensitive disk) is still the text the agent wrote: reading it there masks nothing."""
    (with_db_env.folder / "mirror").symlink_to(".")
    model = attacker([
        call("write_file", file_path="/workspace/words.txt", content="\n".join(WORDS) + "\n"),
        call("read_file", file_path="/workspace/mirror/words.txt"),
        call("grep", pattern="***", path="/workspace/mirror/words.txt", output_mode="content"),
        "done",
    ])
    with_db_env.session.configure(model=model)
    assert with_db_env.run("%%agent\nguess the password").error is None
    read, grep = [str(m.content) for m in model.requests[-1].messages if m.type == "tool"][1:]
    assert "***" not in read and all(word in read for word in WORDS)
    assert grep.startswith("No matches")


def test_python_output_of_a_word_list_masks_no_guessable_value(with_db_env: Notebook) -> None:
    """What the python tool prints is masked by value too: only values too long and random to
    guess are, so printing a word list tells nothing."""
    model = attacker([call("python", code=f"for word in {WORDS!r}:\n    print(word)"), "done"])
    with_db_env.session.configure(model=model)
    assert with_db_env.run("%%agent --python\nprint them").error is None
    printed = str(model.requests[-1].messages[-1].content)
    for word in WORDS[:-2]:  # the passphrase is long enough to be masked by value here
        assert word in printed
    assert "hunter2" in printed and "admin" in printed


def test_a_short_password_is_still_masked_where_it_is_assigned(with_db_env: Notebook) -> None:
    """Masking by its name still applies: a printed `DB_PASSWORD=hunter2` line shows ***."""
    with_db_env.run("import os\nprint(f\"DB_PASSWORD={os.environ['DB_PASSWORD']}\")")
    model = attacker([call("grep", pattern="DB_PASSWORD", path="/notebook/outputs/",
                           output_mode="content"), "done"])
    with_db_env.session.configure(model=model)
    assert with_db_env.run("%%agent\nfind it").error is None
    shown = str(model.requests[-1].messages[-1].content)
    assert "DB_PASSWORD=***" in shown and "hunter2" not in shown


def test_only_text_exactly_as_the_agent_wrote_it_is_read_back_unmasked(tmp_path: Path) -> None:
    """The agent's own text cannot hide anything from it; anything else is masked, also a file
    the agent edited but did not write, and its own file once someone else changed it."""
    from jupyter_deepagent.backends import DiskBackend
    from jupyter_deepagent.project.secrets.masked_folder import MaskedFolder
    from jupyter_deepagent.project.workspace import GuardedFolder
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
    from jupyter_deepagent.project.secrets.redaction import Redactor

    redact = Redactor(lambda: [ENV_KEY], environ={})
    guard = GuardedFolder(DiskBackend(tmp_path), redact=redact)
    guard.write("/mine.txt", f"note\n{ENV_KEY}\n")
    guard.edit("/mine.txt", "note", "my note")
    assert guard.read("/mine.txt").lines == ["my note", ENV_KEY]
    assert [m.line for m in guard.grep(ENV_KEY[:8], "/")] == [ENV_KEY]
    (tmp_path / "mine.txt").write_text(f"my note\n{ENV_KEY}\nadded by the user\n")
    assert guard.read("/mine.txt").lines == ["my note", "***", "added by the user"]
    (tmp_path / "theirs.txt").write_text(f"a\n{ENV_KEY}\n")
    guard.edit("/theirs.txt", "a", "b")
    assert guard.read("/theirs.txt").lines == ["b", "***"]
    guard.write("/gone.txt", f"{ENV_KEY}\n")
    guard.delete("/gone.txt")
    (tmp_path / "gone.txt").write_text(f"{ENV_KEY}\nmore\n")  # not the agent's text
    assert guard.read("/gone.txt").lines == ["***", "more"]
    (tmp_path / "copy.txt").write_text(f"{ENV_KEY}\n")  # the agent's text, in a file it did not write
    assert guard.read("/copy.txt").lines == ["***"]
    (tmp_path / "link.txt").symlink_to(tmp_path / "mine2.txt")
    guard.write("/mine2.txt", f"{ENV_KEY}\n")
    assert guard.read("/link.txt").lines == [ENV_KEY]  # its own file, under another name

    outputs = MaskedFolder(OutputsBackend(), redact)
    outputs.save_output("/display-1.json", f'{{"in_use": "{ENV_KEY}"}}')  # the kernel's
    assert outputs.read("/display-1.json").lines == ['{"in_use": "***"}']
    assert outputs.grep(ENV_KEY[:8], "/") == []
    outputs.write("/notes.md", f"key {ENV_KEY}")
    assert outputs.read("/notes.md").lines == [f"key {ENV_KEY}"]
    # a guess written where the kernel's next display will be saved, then deleted: the display
    # is the kernel's, masked whether the guess was right or not
    outputs.write("/display-2.json", f'{{"in_use": "{ENV_KEY}"}}')
    outputs.delete("/display-2.json")
    outputs.save_output("/display-2.json", f'{{"in_use": "{ENV_KEY}"}}')
    assert outputs.read("/display-2.json").lines == ['{"in_use": "***"}']
    outputs.write("/display-3.json", f'{{"in_use": "{ENV_KEY}"}}')
    outputs.save_output("/display-3.json", f'{{"in_use": "{ENV_KEY}"}}')  # over the agent's
    assert outputs.read("/display-3.json").lines == ['{"in_use": "***"}']


def test_a_guess_written_elsewhere_neither_unmasks_a_file_nor_unlocks_a_notebook(
    tmp_path: Path,
) -> None:
    """Writing a guess of a whole file to a scratch file tells nothing: the file stays masked
    whether the guess is right or not, and a notebook copied that way stays the user's."""
    from jupyter_deepagent.backends import DiskBackend
    from jupyter_deepagent.project.workspace import GuardedFolder
    from jupyter_deepagent.project.secrets.redaction import Redactor

    settings = 'DB_PASSWORD = "Summer2024"\n'
    (tmp_path / "settings.py").write_text(settings)
    (tmp_path / "analysis.ipynb").write_text('{"cells": [], "nbformat": 4}\n')
    guard = GuardedFolder(DiskBackend(tmp_path), redact=Redactor(lambda: [], environ={}))
    shown = []
    for guess in ("Winter2023", "Summer2024"):
        guard.write("/guess.txt", f'DB_PASSWORD = "{guess}"\n')
        shown.append(guard.read("/settings.py").lines)

    notebook = guard.read("/analysis.ipynb").lines
    guard.write("/notes.txt", "\n".join(notebook) + "\n")
    with pytest.raises(PermissionDenied, match="it is a notebook"):
        guard.write("/analysis.ipynb", "planted")
    with pytest.raises(PermissionDenied, match="it is a notebook"):
        guard.edit("/analysis.ipynb", '"cells": []', '"cells": [1]')

    assert shown == [['DB_PASSWORD = "***"']] * 2
    assert (tmp_path / "analysis.ipynb").read_text() == '{"cells": [], "nbformat": 4}\n'

    # the file a guess was written to, replaced: the disk may give its identity to the next file
    # made, the kernel's, which must not pass for the agent's however alike they are
    for step in range(20):
        guard.write(f"/reuse{step}.txt", settings)
        guard.write(f"/reuse{step}.txt", "something else\n")
        (tmp_path / f"kernel{step}.txt").write_text(settings)
        assert guard.read(f"/kernel{step}.txt").lines == ['DB_PASSWORD = "***"']


def test_a_word_list_written_in_an_earlier_run_is_still_the_agents_own(
    with_db_env: Notebook,
) -> None:
    writer = attacker([call("write_file", file_path="/workspace/words.txt",
                            content="\n".join(WORDS) + "\n"), "written"])
    with_db_env.session.configure(model=writer)
    assert with_db_env.run("%%agent\nwrite the list").error is None
    reader = attacker([call("grep", pattern="***", path="/workspace/words.txt",
                            output_mode="content"),
                       call("read_file", file_path="/workspace/words.txt"), "done"])
    with_db_env.session.configure(model=reader)
    assert with_db_env.run("%%agent\nlook at it").error is None
    grep, read = [str(m.content) for m in reader.requests[-1].messages if m.type == "tool"][-2:]
    assert grep.startswith("No matches")
    assert "***" not in read and all(word in read for word in WORDS)
