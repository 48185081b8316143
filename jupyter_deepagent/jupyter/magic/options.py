"""What a `%%agent` or `%agent` line says, parsed into typed objects before anything runs.

Parsing never touches the agent: a bad option raises `ValueError` with a message that names it,
and the magic shows that message with the usage (`with_usage`) and runs nothing. Light on purpose (argparse and
shlex only), since it loads with `%load_ext`.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import shlex
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.jupyter.session.run_options import RunOptions
from jupyter_deepagent.project.names import check_thread_name, check_variable_name
from jupyter_deepagent.project.settings.spending import budget_option

__all__ = [
    "CELL_USAGE",
    "HELP",
    "LINE_USAGE",
    "ConfigCommand",
    "LineCommand",
    "NotebookCommand",
    "ResumeCommand",
    "ThreadCommand",
    "interpolate",
    "parse_line",
    "parse_run_options",
    "with_usage",
]

CELL_USAGE = """\
usage: %%agent [-m MODEL] [-t NAME | --new] [--system TEXT] [--skills DIR]... [--memory FILE]...
               [--into VAR] [--context KEY=VALUE]... [--tools NAME[,NAME...]] [--python]
               [--cells] [--budget LIMIT] [--replay auto|strict|off] [--quiet] [--help]
       <your request on the following lines; {name} inserts a variable, {{ and }} are braces>"""

LINE_USAGE = """\
usage: %agent config [KEY=VALUE ...]     show or set this notebook's defaults
       %agent threads [--all]            list your conversations (--all: the project's)
       %agent show [-t NAME]             the system prompt the next run sends, by section
       %agent inspect [-t NAME] [--run N] the inspector of an earlier run (N: 1 first, -1 last)
       %agent reset [-t NAME]            forget a conversation and its transcript
       %agent notebook [PATH]            which notebook this kernel runs (PATH: name it, for
                                         clients that do not say: papermill, nbconvert...)
       %agent resume approve [CODE_ID]   run the tool call waiting for approval (CODE_ID:
                                         for code from a research log, the id it shows)
       %agent resume reject [MESSAGE]    refuse it, telling the agent why
       %agent resume edit KEY=VALUE ...  change its arguments, then run it
       %agent resume continue|stop       answer a budget pause: let the next call go, or stop
       %agent resume raise LIMIT         answer a budget pause with a new budget ("$1")
       %agent help                       this help"""

HELP = f"""\
{CELL_USAGE}

Options of %%agent:
  -m, --model MODEL      "provider:model" (e.g. google_genai:gemini-2.5-flash),
                         scripted:path.yaml for a scripted offline model, or the
                         name of a notebook variable holding a chat model
  -t, --thread NAME      continue the conversation NAME (it becomes the current one)
  --new                  start a fresh conversation (it becomes the current one)
  --system TEXT          extra instructions for this run, before the built-in ones
  --skills DIR           a skills folder (repeatable); relative paths are in /workspace/
  --memory FILE          an AGENTS.md-style memory file (repeatable); relative as above
  --into VAR             variable for this run's subagent results (default agent_results)
  --context KEY=VALUE    runtime context for tools, never shown to the model (repeatable)
  --tools NAME[,NAME]    offer these notebook functions as tools (besides @agent_tool ones)
  --python               offer the python tool: code runs in this kernel, after your approval
  --cells                let the agent propose code and Markdown cells, inserted below this
                         cell and never run (a re-run replaces those you have not edited)
  --budget LIMIT         this run's budget: "$0.50", 0.5 or "200k tokens" ("none": no limit);
                         the run pauses before a model call that would pass it
  --replay MODE          auto (recorded answers from the notebook's research log, live calls
                         for what changed), strict (a change is an error) or off (always live)
  --quiet                show only the answer and the /outputs/ files, not the live steps

{LINE_USAGE}

The agent's files: /notebook/ (this notebook's cells, outputs and variables, read-only),
/outputs/ (shown under the cell when the run ends), /workspace/ (the notebook's folder),
/memories/ (kept across conversations and restarts); anything else is scratch for the thread.
`_agent` holds the last run's RunTrace. API keys come from the environment or a .env file
beside the notebook (read again at each run); the agent never sees .env files, and keys in the
notebook's cells, outputs and variables reach it as ***. Only you can change the settings:
the agent cannot write .deepagent.toml or pyproject.toml.
%agent reset deletes the thread's checkpoints and its /conversation_history/ transcript; what
the agent wrote to /memories/, /workspace/, /large_tool_results/ and /subagents/ stays (the
last two under .deepagent/artifacts/, shared by every thread: delete them by hand)."""

_INTERPOLATION = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\}")


@dataclass(frozen=True)
class ConfigCommand:
    """`%agent config [key=value ...]`: show the defaults, or set some."""

    assignments: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ThreadCommand:
    """`%agent threads|show|reset|help`, optionally for one thread."""

    name: str
    thread: str | None = None
    all: bool = False
    """`threads --all`: every user's threads of the project."""


@dataclass(frozen=True)
class ResumeCommand:
    """`%agent resume approve|reject [message]|edit key=value ...`, or the answer to a budget
    pause: `continue`, `raise LIMIT`, `stop`."""

    decision: str
    message: str = ""
    edits: Mapping[str, object] = field(default_factory=dict)
    thread: str | None = None
    budget: str | None = None
    """`raise LIMIT`: the new budget of a budget pause, as written."""
    code_id: str | None = None
    """`approve CODE_ID`: the id of the code from a research log being approved (see
    `recorded_code`), as the refusal showed it."""


@dataclass(frozen=True)
class NotebookCommand:
    """`%agent notebook [PATH]`: say which notebook this kernel runs, or name it."""

    path: str | None = None


LineCommand = ConfigCommand | ThreadCommand | ResumeCommand | NotebookCommand


class _Parser(argparse.ArgumentParser):
    """argparse that raises ValueError instead of printing the usage and exiting."""

    def error(self, message: str) -> NoReturn:
        raise ValueError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise ValueError(message or f"exit {status}")


def _cell_parser() -> _Parser:
    parser = _Parser(prog="%%agent", add_help=False, allow_abbrev=False)
    parser.add_argument("-m", "--model")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-t", "--thread")
    group.add_argument("--new", action="store_true")
    parser.add_argument("--system")
    parser.add_argument("--skills", action="append", default=[])
    parser.add_argument("--memory", action="append", default=[])
    parser.add_argument("--into")
    parser.add_argument("--context", action="append", default=[])
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--tools", action="append", default=[])
    parser.add_argument("--python", action="store_true")
    parser.add_argument("--cells", action="store_true")
    parser.add_argument("--budget")
    parser.add_argument("--replay", choices=("auto", "strict", "off"))
    parser.add_argument("-h", "--help", action="store_true")
    return parser


def _split(line: str) -> list[str]:
    try:
        return shlex.split(line)
    except ValueError as exc:
        msg = f"cannot split the options {line.strip()!r}: {exc} (check the quotes)"
        raise ValueError(msg) from exc


def parse_run_options(line: str) -> RunOptions:
    """Parse the options after `%%agent`.

    Raises:
        ValueError: An unknown or malformed option; the message names it.
    """
    namespace = _cell_parser().parse_args(_split(line))
    context = _assignments(namespace.context, "--context takes KEY=VALUE")
    if namespace.into is not None:
        check_variable_name(namespace.into)
    if namespace.thread is not None:
        check_thread_name(namespace.thread)
    if namespace.budget is not None:
        budget_option(namespace.budget)  # checked now: a bad budget runs nothing
    return RunOptions(
        model=namespace.model,
        thread=namespace.thread,
        new=namespace.new,
        system=namespace.system,
        skills=tuple(namespace.skills),
        memory=tuple(namespace.memory),
        into=namespace.into,
        context=context,
        quiet=namespace.quiet,
        help=namespace.help,
        tools=_tool_names(namespace.tools),
        python=namespace.python,
        cells=namespace.cells,
        replay=namespace.replay,
        budget=namespace.budget,
    )


def _tool_names(words: list[str]) -> tuple[str, ...]:
    """`--tools a,b --tools c` as ("a", "b", "c"); each must be a Python name.

    Raises:
        ValueError: A name is not a Python identifier.
    """
    names = [name.strip() for word in words for name in word.split(",") if name.strip()]
    for name in names:
        if not name.isidentifier() or keyword.iskeyword(name):
            msg = f"--tools takes names of notebook functions, got {name!r}"
            raise ValueError(msg)
    return tuple(dict.fromkeys(names))


def _thread_option(words: list[str], command: str) -> tuple[str | None, list[str]]:
    """Take a leading `-t NAME`/`--thread NAME` off `words`."""
    if words and words[0] in ("-t", "--thread"):
        if len(words) < 2:
            msg = f"%agent {command}: -t needs a thread name"
            raise ValueError(msg)
        return check_thread_name(words[1]), words[2:]
    return None, words


def _edit_value(text: str) -> Any:
    """A value of `%agent resume edit key=value`: JSON when it parses (numbers, lists), else text."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def _assignments(words: list[str], usage: str) -> dict[str, str]:
    """`KEY=VALUE` words as a dict; a malformed word raises `ValueError` opening with `usage`."""
    pairs: dict[str, str] = {}
    for word in words:
        key, equals, value = word.partition("=")
        if not equals or not key.strip():
            msg = f"{usage}, got {word!r}"
            raise ValueError(msg)
        pairs[key.strip()] = value
    return pairs


def _parse_resume(rest: str) -> ResumeCommand:
    thread = None
    decision, _, remainder = rest.strip().partition(" ")
    if decision in ("-t", "--thread"):
        name, _, remainder = remainder.strip().partition(" ")
        if not name:
            msg = "%agent resume: -t needs a thread name"
            raise ValueError(msg)
        thread = check_thread_name(name)
        decision, _, remainder = remainder.strip().partition(" ")
    if not decision:
        msg = (
            "%agent resume needs a decision: approve, reject [message] or edit KEY=VALUE ...; "
            "at a budget pause: continue, raise LIMIT or stop"
        )
        raise ValueError(msg)
    if decision in ("continue", "stop"):
        if remainder.strip():
            msg = f"%agent resume {decision} takes nothing more, got {remainder.strip()!r}"
            raise ValueError(msg)
        return ResumeCommand(decision, thread=thread)
    if decision == "raise":
        text = remainder.strip().strip("'\"")
        if not text or budget_option(text, "%agent resume raise") is None:
            msg = '%agent resume raise needs the new budget, e.g. %agent resume raise "$1"'
            raise ValueError(msg)
        return ResumeCommand("raise", thread=thread, budget=text)
    if decision == "approve":
        code_id = remainder.strip() or None
        if code_id is not None and not re.fullmatch(r"[0-9a-f]{16}", code_id):
            msg = (
                f"%agent resume approve takes nothing more, or the id of the code it approves "
                f"(16 hex digits, as shown when it was refused), got {code_id!r}"
            )
            raise ValueError(msg)
        return ResumeCommand("approve", thread=thread, code_id=code_id)
    if decision == "reject":
        return ResumeCommand("reject", message=remainder.strip(), thread=thread)
    if decision == "edit":
        pairs = _assignments(_split(remainder), "%agent resume edit takes KEY=VALUE pairs")
        if not pairs:
            msg = "%agent resume edit needs KEY=VALUE pairs, e.g. file_path=/outputs/notes.md"
            raise ValueError(msg)
        edits = {key: _edit_value(value) for key, value in pairs.items()}
        return ResumeCommand("edit", edits=edits, thread=thread)
    msg = (
        f"%agent resume: unknown decision {decision!r}; use approve, reject or edit (at a "
        "budget pause: continue, raise or stop)"
    )
    raise ValueError(msg)


def parse_line(line: str) -> LineCommand:
    """Parse a `%agent ...` line magic.

    Raises:
        ValueError: An unknown command or malformed arguments; the message names them.
    """
    command, _, rest = line.strip().partition(" ")
    if command in ("", "help", "-h", "--help"):
        return ThreadCommand("help")
    if command == "resume":
        return _parse_resume(rest)
    words = _split(rest)
    if command == "config":
        return ConfigCommand(_assignments(words, "%agent config takes KEY=VALUE pairs"))
    if command == "notebook":
        if len(words) > 1:
            msg = "%agent notebook takes one path (quote a path with spaces)"
            raise ValueError(msg)
        return NotebookCommand(words[0] if words else None)
    if command in ("threads", "show", "reset"):
        thread, words = _thread_option(words, command)
        every = command == "threads" and words == ["--all"]
        if (words and not every) or (command == "threads" and thread is not None):
            msg = f"%agent {command}: unexpected {' '.join(words) or '-t'!r}"
            raise ValueError(msg)
        return ThreadCommand(command, thread, all=every)
    msg = (
        f"unknown %agent command {command!r}. Write a request as a cell starting with %%agent, "
        "or use one of: config, threads, show, inspect, reset, resume, notebook, help"
    )
    raise ValueError(msg)


def interpolate(
    text: str,
    namespace: Mapping[str, object],
    shown: Callable[[str, Any], str] | None = None,
) -> str:
    """Replace `{name}` (or `{name.attr}`) with the variable's `str()`; `{{`/`}}` are braces.

    Braces around anything else (JSON, code) are left alone. `shown(path, value)`, when given,
    makes the inserted text instead (the cell magic masks secrets with it).

    Raises:
        ValueError: A `{name}` names no variable (or no attribute); the message says which.
    """

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        first, *attributes = match.group(1).split(".")
        if first not in namespace:
            msg = (
                f"{{{first}}} in the cell names no variable of the notebook: define {first} "
                f"first, or write {{{{{match.group(1)}}}}} for literal braces"
            )
            raise ValueError(msg)
        value = namespace[first]
        for attribute in attributes:
            try:
                value = getattr(value, attribute)
            except AttributeError as exc:
                msg = f"{token} in the cell: {type(value).__name__} has no attribute {attribute!r}"
                raise ValueError(msg) from exc
        return shown(match.group(1), value) if shown is not None else str(value)

    return _INTERPOLATION.sub(substitute, text)


@contextmanager
def with_usage(usage: str, source: str) -> Iterator[None]:
    """Parse a magic's line in the block: a `ValueError` leaves it as an `InputError` whose
    message ends with `usage` (`source`: the magic, "%%agent" or "%agent")."""
    try:
        yield
    except ValueError as exc:
        raise InputError(f"{exc}\n{usage}", source=source) from None
