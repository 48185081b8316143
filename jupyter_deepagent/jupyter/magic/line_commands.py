"""The `%agent` commands that read or change the session without running the agent: `config`,
`threads`, `show`, `reset` and `notebook`.

Each takes the kernel's session and shows its answer (a Markdown table, the prompt, a line of
text). Their errors are the user's (a bad setting, a damaged state folder, another user's
thread): the magic shows them as usage errors, in one place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from jupyter_deepagent.jupyter.magic.options import ConfigCommand
from jupyter_deepagent.jupyter.session.run_options import RunOptions
from jupyter_deepagent.jupyter.views.render import markdown, show
from jupyter_deepagent.project.settings.agent_config import shown_value
from jupyter_deepagent.project.storage.database_url import DATABASE_URL_VARIABLE

if TYPE_CHECKING:
    from jupyter_deepagent.harness.prompt.sections import PromptAssembly
    from jupyter_deepagent.jupyter.session.session import Session

__all__ = ["reset", "show_config", "show_notebook", "show_prompt", "show_threads"]


def show_config(session: Session, command: ConfigCommand) -> None:
    """`%agent config [KEY=VALUE ...]`: set the given defaults, then show every setting and where
    its value comes from.

    Raises:
        ValueError: An unknown setting, a value of the wrong type, an invalid configuration file.
    """
    if command.assignments:
        session.configure(**command.assignments)
    config, sources = session.config, session.config_sources()
    if "database_url" in command.assignments and sources["database_url"] != "%agent config":
        print(
            f"database_url is set by {DATABASE_URL_VARIABLE} in the environment, which "
            "wins: unset it there (and restart the kernel) to use another database."
        )
    rows = ["| setting | value | from |", "|---|---|---|"]
    for name, source in sources.items():
        value = shown_value(name, getattr(config, name))
        if isinstance(value, tuple):
            value = ", ".join(value)
        elif isinstance(value, dict):  # the model's keywords
            value = ", ".join(f"{key}={item!r}" for key, item in value.items())
        elif isinstance(value, float):
            value = f"{value:g}"  # 60.0 seconds as 60
        elif not isinstance(value, (str, int, bool, type(None))):
            value = f"a {type(value).__name__} object"
        shown = f"`{value}`" if value != "" else "—"
        rows.append(f"| {name} | {shown} | {source} |")
    show(markdown("\n".join(rows)))


def show_notebook(session: Session, path: str | None = None) -> None:
    """`%agent notebook [PATH]`: name the notebook this kernel runs (`PATH`), then say which it
    is, how that is known, and where its runs are recorded; or why it cannot be told.

    Raises:
        InputError: `PATH` is not an existing `.ipynb` file.
    """
    from jupyter_deepagent.trace.research_log.log import log_path_for

    if path is not None:
        session.notebook.name(path)
    location = session.notebook.locate()
    if location.path is None:
        names = ", ".join(f"`{p.name}`" for p in location.candidates)
        text = (
            f"This kernel cannot tell which notebook it runs ({location.how}"
            f"{': ' + names if names else ''}): agent cells are not recorded, and run on thread "
            f"`{session.default_thread}`, this kernel's own. Name it with "
            "`%agent notebook PATH`, or set JUPYTER_DEEPAGENT_NOTEBOOK=PATH in the environment "
            "of the program running the notebook."
        )
    else:
        text = (
            f"This kernel runs `{location.path}` ({location.how}). Agent cells replay from and "
            f"record to `{log_path_for(location.path).name}` beside it; the conversation is "
            f"thread `{session.default_thread}`."
        )
    show(markdown(text))


def show_threads(session: Session, *, every_user: bool = False) -> None:
    """`%agent threads [--all]`: this user's conversations (`--all`: the project's).

    Raises:
        ValueError: The state folder is misconfigured or cannot be opened.
    """
    infos = session.threads(every_user=every_user)
    current, owner = session.thread, session.owner
    if not infos:
        text = f"No conversations yet. The next `%%agent` cell starts thread `{current}`."
        if every_user:
            text = f"No conversations yet in project `{owner.project}`."
        show(markdown(text))
        return
    if not every_user:
        rows = ["| thread | messages | last update |", "|---|---|---|"]
        for info in infos:
            name = f"**{info.name}** (current)" if info.name == current else info.name
            rows.append(f"| {name} | {info.messages} | {info.updated} |")
        show(markdown("\n".join(rows)))
        return
    rows = [
        f"Project `{owner.project}`: others' threads are read-only (listed as "
        "`user/thread`; only their owner may continue or reset them).",
        "",
        "| thread | owner | messages | last update |",
        "|---|---|---|---|",
    ]
    for info in infos:
        mine = info.owner == owner.user
        name = info.name if mine else f"{info.owner}/{info.name}"
        name = f"**{name}** (current)" if mine and info.name == current else name
        who = f"{info.owner} (you)" if mine else info.owner
        rows.append(f"| {name} | {who} | {info.messages} | {info.updated} |")
    show(markdown("\n".join(rows)))


def show_prompt(session: Session, thread: str | None) -> None:
    """`%agent show [-t NAME]`: a thread's system prompt, by section (see `_prompt_for`).

    Raises:
        ValueError: The thread is another user's, or the configuration or state folder is invalid.
    """
    from jupyter_deepagent.jupyter.views.render import prompt_markdown

    name = session.own_thread(thread or session.thread)  # not another user's
    assembly, label = _prompt_for(session, name)
    show(prompt_markdown(assembly, label, name, _conversation_size(session, name)))


def _prompt_for(session: Session, thread: str | None = None) -> tuple[PromptAssembly, str]:
    """The system prompt of a thread, and what it is: the last one sent, or the next one.

    After a run on `thread` in this kernel, the prompt its last model call received;
    otherwise the prompt the next run will send with the current configuration.

    Raises:
        ValueError: A configuration file or the state folder is invalid.
    """
    from jupyter_deepagent.harness.agent import assemble_prompt
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
    from jupyter_deepagent.jupyter.session.execution import agent_arguments
    from jupyter_deepagent.jupyter.session.runs import run_settings

    name = thread or session.thread
    runs = session.runs
    if runs.last_thread == name and runs.last_trace is not None and runs.last_trace.prompts:
        return runs.last_trace.prompts[-1], "as sent in the last model call"
    settings = run_settings(session.config, RunOptions())
    backend = session.filesystem(OutputsBackend(), settings)
    arguments = agent_arguments(
        session.shell, settings, backend, session.tools, session.recorded_code, session.redactor()
    )
    return assemble_prompt(**arguments), "as the next run sends it"


def _conversation_size(session: Session, thread: str | None = None) -> tuple[int, int]:
    """Messages kept in a thread and their approximate tokens.

    Raises:
        ValueError: The state folder is misconfigured or cannot be opened.
    """
    from jupyter_deepagent.harness.compression.tokens import messages_tokens

    saved = session.storage.checkpointer.get_tuple(
        {"configurable": {"thread_id": thread or session.thread}}
    )
    if saved is None:
        return 0, 0
    messages = saved.checkpoint.get("channel_values", {}).get("messages", [])
    return len(messages), messages_tokens(messages)


def reset(session: Session, thread: str | None = None) -> tuple[str, bool]:
    """`%agent reset [-t NAME]`: forget a thread's conversation (the current one by default);
    returns its name, and whether it had one (a thread never run has nothing to forget).

    Its checkpoints go, and so does its transcript `/conversation_history/<thread>.md` (the
    user's own: another user's thread of the same name keeps its transcript). Files
    the agent wrote elsewhere stay: `/large_tool_results/`, `/subagents/` (shared by every
    thread), `/memories/`, `/workspace/`.

    Raises:
        ValueError: The state folder is misconfigured or cannot be opened, or the thread is
            another user's.
        ThreadBusy: Another process is running the thread.
    """
    from jupyter_deepagent.project.storage.artifacts import artifact_folder

    name = session.own_thread(thread or session.thread)
    storage = session.storage
    existed = storage.thread_info(name) is not None
    with storage.writing(name):
        storage.delete_thread(name)
    history = artifact_folder(session.state_dir, "conversation_history", storage.owner.user)
    (history / f"{name}.md").unlink(missing_ok=True)
    return name, existed
