"""The harness's advice, said in the notebook's words: the magic's options instead of Python
arguments.

The harness runs in scripts too, so its errors and warnings name Python arguments
(`model='scripted:...'`, `context_window=` on `create_research_agent`). A notebook user sets the
same things with `%%agent -m ...` and `%agent config ...`; `notebook_words` rewrites the known
phrases, once, here, for every hint and warning the notebook shows.

An error is shown as one "Name: message" line in the cell's error box, whose text JupyterLab and
Notebook 7 break anywhere once it reaches the box's edge (`word-break: break-all` on output text),
so a long message wrapped mid-word. `boxed` breaks it between words, at `BOX_COLUMNS`, first
(the magic shows every error through it); the exception's own message stays one line.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from jupyter_deepagent._exceptions import MissingAPIKey, ModelConfigurationError

__all__ = [
    "BOX_COLUMNS",
    "boxed",
    "model_errors_in_notebook_words",
    "notebook_changed_note",
    "notebook_warning",
    "notebook_words",
    "strict_replay_without_notebook",
    "unknown_notebook_note",
]

BOX_COLUMNS = 76
"""The widest line of an error message in the cell's error box: narrower than a cell's output
area at JupyterLab's default code font."""

_WINDOW = "`%agent config context_window=<tokens>`"

_PHRASES = (
    (
        "model='scripted:path/to/script.yaml' (a ScriptedChatModel that plays a script)",
        "`%%agent -m scripted:path/to/script.yaml` (a scripted model that plays a script, offline)",
    ),
    ("model='ollama:<model>'", "`%%agent -m ollama:<model>`"),
    (
        "Pass context_window= to create_research_agent to set the real one.",
        f"Set the real one with {_WINDOW}.",
    ),
    (
        "Set a smaller context_window= on create_research_agent",
        f"Set a smaller window with {_WINDOW}",
    ),
)


def notebook_words(text: str, *, env_file: str = ".env") -> str:
    """Rewrite the harness's Python advice in `text` as the magic's options.

    Args:
        text: An error message or warning from the harness.
        env_file: The env file the session reads keys from (the `env_file` setting).

    Returns:
        The text with every known phrase replaced; other text is unchanged.
    """
    for harness, notebook in _PHRASES:
        text = text.replace(harness, notebook)
    if env_file != ".env":
        text = text.replace("in a .env file beside the notebook", f"in {env_file} (env_file)")
    return text


def boxed(name: str, text: str) -> str:
    """`text`, the message of an error of type `name`, broken between words into lines of at most
    `BOX_COLUMNS` characters (the first after "Name: "), so the error box never breaks a word. A
    message of several lines (one that shows code) is left as it is written."""
    if "\n" in text.strip():
        return text
    prefix = f"{name}: "
    lines = textwrap.wrap(
        prefix + text.strip(),
        BOX_COLUMNS,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return "\n".join(lines).removeprefix(prefix)


@contextmanager
def model_errors_in_notebook_words(env_file: str) -> Iterator[None]:
    """A missing key or a model that cannot be made, raised inside, has its advice rewritten
    (`notebook_words`); every model a kernel makes is made inside this."""
    try:
        yield
    except MissingAPIKey as exc:
        text = notebook_words(str(exc), env_file=env_file)
        raise MissingAPIKey(text, variables=exc.variables) from None
    except ModelConfigurationError as exc:
        raise ModelConfigurationError(notebook_words(str(exc), env_file=env_file)) from exc


def notebook_warning(event: Mapping[str, object]) -> str:
    """The text of a `warning` run event as the notebook shows it."""
    return notebook_words(str(event.get("message", "")))


_NAME_THE_NOTEBOOK = (
    "name it: `%agent notebook PATH` in a cell before this one, or "
    "JUPYTER_DEEPAGENT_NOTEBOOK=PATH in the environment of the program running the notebook"
)


def _why(how: str, candidates: Sequence[Path]) -> str:
    return how + (f": {', '.join(path.name for path in candidates)}" if candidates else "")


def unknown_notebook_note(
    how: str,
    candidates: Sequence[Path],
    thread: str | None,
    *,
    own: bool = True,
    again: bool = False,
) -> str:
    """The note a run's header shows when the kernel cannot tell which notebook it runs.

    Args:
        how: Why not ("no notebook in FOLDER holds this cell"...).
        candidates: The notebooks equally likely, if several.
        thread: The thread the run goes on (None: a new one).
        own: The thread is the kernel's own (else one the user chose with `-t`).
        again: The kernel said it in full before: a short reminder.
    """
    if again:
        return "not recorded: this kernel's notebook is still unknown (`%agent notebook PATH`)"
    if not own:
        where = f"on thread {thread}, as chosen"
    elif thread:
        where = f"on thread {thread}, this kernel's own, shared with no notebook"
    else:
        where = "on a new thread of this kernel's own, shared with no notebook"
    return (
        f"this kernel cannot tell which notebook it runs ({_why(how, candidates)}), so this run "
        f"is not recorded in a research log nor replayed from one, and it runs {where}. "
        f"To record and replay, {_NAME_THE_NOTEBOOK}."
    )


def notebook_changed_note(before: Path, now: Path) -> str:
    """The note a run's header shows when its cell is no longer in the notebook the kernel found
    by its cells, but in another."""
    return (
        f"this cell is not in {before.name}, the notebook this kernel found before, but in "
        f"{now.name}: the kernel runs {now.name} now (its research log, its thread). If that is "
        f"wrong, {_NAME_THE_NOTEBOOK}."
    )


def strict_replay_without_notebook(how: str, candidates: Sequence[Path]) -> str:
    """Why strict replay refuses a run whose notebook (so research log) is unknown."""
    return (
        "strict replay needs the notebook's research log, but this kernel cannot tell which "
        f"notebook it runs ({_why(how, candidates)}); {_NAME_THE_NOTEBOOK}."
    )
