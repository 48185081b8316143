"""Settings from files are checked like `%agent config` values, and bad files or folders stop the
cell with a message naming the file or setting and what to do."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from notebook_shell import Notebook, notebook, scripted  # noqa: F401


@pytest.mark.parametrize(
    ("file", "content", "says"),
    [
        ("pyproject.toml", "tool = 1\n", "pyproject.toml: `tool` must be a table"),
        ("pyproject.toml", '[tool]\njupyter-deepagent = "x"\n', "must be a table of settings"),
        ("pyproject.toml", b"\xff\xfe[tool]\n", "toml: cannot read it as TOML: it is not"),
        (".deepagent.toml", "a = " + "[" * 3000 + "]" * 3000 + "\n", "nested too deeply"),
        (".deepagent.toml", "model = 5\n", '.deepagent.toml: model must be "provider:model" text'),
        (".deepagent.toml", 'into = "get_ipython"\n', "toml: into: 'get_ipython' is a name"),
        (".deepagent.toml", 'into = "_agent"\n', "'_agent' is a name"),
        (".deepagent.toml", 'into = "two words"\n', "into takes a Python variable name"),
        (".deepagent.toml", 'state_dir = ""\n', "state_dir '' is the notebook's folder"),
        (".deepagent.toml", 'state_dir = ".."\n', "'..' is the notebook's folder or a"),
        (".deepagent.toml", 'workspace = "data"\nstate_dir = "data"\n', "is the workspace"),
        (".deepagent.toml", 'state_dir = "/proc/forbidden"\n', "cannot keep conversations in"),
        (".deepagent.toml", 'subagents = "judge"\n', "subagents must be a JSON list"),
        (".deepagent.toml", '[[subagents]]\nname = "judge"\n', "subagents[0] needs a description"),
        (".deepagent.toml", '[[subagents]]\nname = "a judge"\ndescription = "d"\n',
         "subagents[0]: subagent name 'a judge' is not usable"),
        (".deepagent.toml", '[[subagents]]\nname = "j"\ndescription = "d"\nmodel = "x:y"\n',
         "unknown key 'model'; known keys: name, description, system_prompt, skills, "
         "interrupt_on, response_format. A subagent uses the agent's model."),
        (".deepagent.toml", '[[subagents]]\nname = "j"\ndescription = "d"\n'
         'response_format = "Verdict"\n', "response_format must be a JSON schema table"),
        (".deepagent.toml", '[[subagents]]\nname = "j"\ndescription = "d"\n'
         '[[subagents]]\nname = "j"\ndescription = "e"\n', "the name 'j' is given twice"),
    ],
)
def test_a_bad_settings_file_stops_the_cell_naming_it(
    notebook: Notebook, file: str, content: str | bytes, says: str
) -> None:
    model = scripted("never sent")
    notebook.session.configure(model=model)
    path = notebook.folder / file
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    cell = notebook.run("%%agent\nhello")
    assert isinstance(cell.error, UsageError)
    assert says in str(cell.error)
    assert model.requests == []
    assert notebook.shell.user_ns["get_ipython"].__self__ is notebook.shell
    assert not (notebook.folder / ".gitignore").exists()


@pytest.mark.parametrize("line", ["into=get_ipython", "into=Out", "into=list", "into=_3"])
def test_agent_config_refuses_the_same_protected_names(notebook: Notebook, line: str) -> None:
    cell = notebook.run(f"%agent config {line}")
    assert isinstance(cell.error, UsageError) and "is a name" in str(cell.error)


def test_into_overwriting_a_variable_that_is_not_a_result_table_warns(notebook: Notebook) -> None:
    task = {"name": "task", "args": {"description": "Find sources.",
                                     "subagent_type": "general-purpose"}}
    notebook.session.configure(model=scripted(
        {"tool_calls": [task]}, "Reports are in.", {"tool_calls": [task]}, "Again.",
        rules=[{"when": "Find sources", "reply": "Two sources.", "repeat": True}],
    ))
    notebook.run("findings = ['my', 'own', 'notes']")
    cell = notebook.run("%%agent --into findings\nsurvey")
    assert cell.error is None
    assert "findings held a list; it now holds this run's subagent results" in cell.live_text
    again = notebook.run("%%agent --into findings\nsurvey again")
    assert again.error is None
    assert "held a" not in again.live_text  # a result table replaced by the next one: no warning


def test_subagents_declared_in_the_folders_settings_are_offered_and_fill_the_results_table(
    notebook: Notebook,
) -> None:
    (notebook.folder / ".deepagent.toml").write_text(
        '[[subagents]]\n'
        'name = "judge"\n'
        'description = "Weighs the evidence on one claim."\n'
        'system_prompt = "Judge the claim."\n'
        '[subagents.response_format]\n'
        'title = "Verdict"\n'
        'type = "object"\n'
        'properties = { verdict = { type = "string" }, confident = { type = "boolean" } }\n'
        'required = ["verdict", "confident"]\n',
        encoding="utf-8",
    )
    task = {"name": "task", "args": {"description": "Is the glacier retreating?",
                                     "subagent_type": "judge"}}
    model = scripted(
        {"tool_calls": [task]},
        "The judge says yes.",
        rules=[{"when": "Is the glacier retreating?", "when_system": "Judge the claim.",
                "reply": {"tool_calls": [{
            "name": "Verdict", "args": {"verdict": "retreating", "confident": True}}]}}],
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --into verdicts\njudge it")
    assert cell.error is None
    frame = notebook.shell.user_ns["verdicts"]
    assert frame["subagent"].tolist() == ["judge"]
    assert frame["verdict"].tolist() == ["retreating"] and frame["confident"].tolist() == [True]
    # the main agent was told about the judge, with its description
    assert "Weighs the evidence on one claim." in model.requests[0].system


def test_agent_config_takes_subagents_as_json(notebook: Notebook) -> None:
    cell = notebook.run(
        """%agent config 'subagents=[{"name": "scout", "description": "Finds sources."}]'"""
    )
    assert cell.error is None
    assert notebook.session.config.subagents == ({"name": "scout", "description": "Finds sources."},)
    assert "| subagents | `scout` | %agent config |" in cell.markdown[0]
    assert "| model_timeout | `60` | default |" in cell.markdown[0]  # seconds, not "a float"
    bad = notebook.run("%agent config subagents=[{name:scout}]")
    assert isinstance(bad.error, UsageError) and "subagents must be a JSON list" in str(bad.error)


def test_every_setting_names_a_check_that_accepts_its_default() -> None:
    # a field added without its coercer, or with a default its own check refuses, fails here
    from dataclasses import MISSING, fields

    from jupyter_deepagent.project.settings.agent_config import AgentConfig, coerce_setting

    for setting in fields(AgentConfig):
        factory = setting.default_factory
        default = setting.default if factory is MISSING else factory()
        assert coerce_setting(setting.name, default, ".deepagent.toml") == default
