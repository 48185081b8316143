"""Parsing `%%agent` options and `%agent` commands into typed objects, and `{name}` interpolation."""

from __future__ import annotations

import pytest

from jupyter_deepagent.jupyter.magic.options import (
    ConfigCommand,
    ResumeCommand,
    RunOptions,
    ThreadCommand,
    interpolate,
    parse_line,
    parse_run_options,
)


def test_every_cell_option_is_parsed_into_its_field() -> None:
    options = parse_run_options(
        "-m scripted:s.yaml -t review --system 'Be brief, cite sources.' --skills skills/ "
        "--skills /memories/skills/ --memory AGENTS.md --into found "
        "--context user=ada --context db=postgres://x?a=b --quiet"
    )
    assert options == RunOptions(
        model="scripted:s.yaml",
        thread="review",
        system="Be brief, cite sources.",
        skills=("skills/", "/memories/skills/"),
        memory=("AGENTS.md",),
        into="found",
        context={"user": "ada", "db": "postgres://x?a=b"},
        quiet=True,
    )
    assert parse_run_options("") == RunOptions()
    assert parse_run_options("--new").new
    assert parse_run_options("--help").help


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("--bogus", "unrecognized arguments: --bogus"),
        ("-t", "expected one argument"),
        ("--mod gemini", "unrecognized arguments: --mod"),
        ("-t a --new", "not allowed with argument"),
        ("-t 'two words'", "thread name 'two words' is not allowed"),
        ("--context user", "--context takes KEY=VALUE, got 'user'"),
        ("--into 1st", "--into takes a Python variable name"),
        ("--into get_ipython", "--into: 'get_ipython' is a name IPython, Python or the extension"),
        ("--into _agent", "'_agent' is a name"),
        ("--into print", "'print' is a name"),
        ("--into _i2", "'_i2' is a name"),
        ("--system 'unclosed", "check the quotes"),
        ("stray words", "unrecognized arguments: stray words"),
    ],
)
def test_bad_cell_options_name_the_problem(line: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_run_options(line)
    assert says in str(raised.value)


def test_line_commands() -> None:
    assert parse_line("") == ThreadCommand("help")
    assert parse_line("help") == ThreadCommand("help")
    assert parse_line("threads") == ThreadCommand("threads")
    assert parse_line("show -t review") == ThreadCommand("show", "review")
    assert parse_line("reset --thread review") == ThreadCommand("reset", "review")
    assert parse_line("config") == ConfigCommand({})
    assert parse_line("config model=scripted:a.yaml skills=a/,b/ system_prompt='Be terse.'") == (
        ConfigCommand({"model": "scripted:a.yaml", "skills": "a/,b/", "system_prompt": "Be terse."})
    )


def test_resume_commands_keep_the_message_as_typed_and_parse_edit_values() -> None:
    assert parse_line("resume approve") == ResumeCommand("approve")
    assert parse_line("resume reject don't write there, use /outputs/") == ResumeCommand(
        "reject", message="don't write there, use /outputs/"
    )
    assert parse_line("resume -t review reject") == ResumeCommand("reject", thread="review")
    line = """resume edit file_path=/outputs/a.md content="two words" limit=5 tags='["x"]'"""
    assert parse_line(line) == (
        ResumeCommand(
            "edit",
            edits={"file_path": "/outputs/a.md", "content": "two words", "limit": 5, "tags": ["x"]},
        )
    )


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("frobnicate", "unknown %agent command 'frobnicate'"),
        ("resume", "needs a decision"),
        ("resume maybe", "unknown decision 'maybe'"),
        ("resume approve now", "takes nothing more"),
        ("resume edit", "needs KEY=VALUE pairs"),
        ("resume edit content", "takes KEY=VALUE pairs, got 'content'"),
        ("resume -t", "-t needs a thread name"),
        ("config model", "takes KEY=VALUE pairs, got 'model'"),
        ("threads extra", "unexpected"),
        ("show -t", "-t needs a thread name"),
    ],
)
def test_bad_line_commands_name_the_problem(line: str, says: str) -> None:
    with pytest.raises(ValueError) as raised:
        parse_line(line)
    assert says in str(raised.value)


def test_interpolation_of_names_attributes_and_escaped_braces() -> None:
    class Frame:
        shape = (3, 2)

    namespace = {"topic": "glaciers", "df": Frame()}
    text = 'About {topic}, shape {df.shape}; JSON {"k": 1}; {{topic}}; code {x + 1}; }}'
    assert interpolate(text, namespace) == (
        'About glaciers, shape (3, 2); JSON {"k": 1}; {topic}; code {x + 1}; }'
    )


def test_interpolation_names_the_missing_variable_or_attribute() -> None:
    with pytest.raises(ValueError, match=r"\{region\} in the cell names no variable"):
        interpolate("sales in {region}", {})
    with pytest.raises(ValueError, match="str has no attribute 'rows'"):
        interpolate("{topic.rows}", {"topic": "glaciers"})
