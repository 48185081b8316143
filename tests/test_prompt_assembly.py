"""The assembled system prompt as data: order, token counts, and a checked-in snapshot."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest
from langchain.agents.middleware import AgentMiddleware

from jupyter_deepagent import (
    HarnessProfile,
    PromptAssembly,
    PromptSection,
    StateBackend,
    assemble_prompt,
    create_research_agent,
)
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.harness.prompt.sections import BASE_AGENT_PROMPT, SECTION_ORDER

SNAPSHOT = Path(__file__).parent / "snapshots" / "prompt_all_options.md"


class _CitationMiddleware(AgentMiddleware):
    """User middleware that adds its own instructions to the system message."""

    def wrap_model_call(self, request, handler):
        from langchain_core.messages import SystemMessage

        base = request.system_message.text + "\n\n" if request.system_message else ""
        return handler(
            request.override(system_message=SystemMessage(content=base + "Cite sources as [n]."))
        )


def _all_options_backend() -> StateBackend:
    backend = StateBackend()
    backend.write("/AGENTS.md", "Prefer primary sources.\n")
    backend.write(
        "/skills/literature-review/SKILL.md",
        "---\nname: literature-review\ndescription: Survey papers and write a review.\n---\nbody\n",
    )
    return backend


def _all_options() -> PromptAssembly:
    return assemble_prompt(
        system_prompt="You are a research assistant specialising in scientific literature.",
        memory=["/AGENTS.md"],
        skills=["/skills/"],
        backend=_all_options_backend(),
        interrupt_on={"write_file": True},
        profile=HarnessProfile(system_prompt_suffix="Answer in British English."),
        middleware=[_CitationMiddleware()],
    )


def test_sections_come_in_the_fixed_order_with_every_option_on() -> None:
    assembly = _all_options()
    assert assembly.names == [
        "system_prompt", "base", "todos", "memory", "skills", "filesystem", "subagents",
        "middleware", "human_in_the_loop", "suffix",
    ]
    assert assembly["middleware"].text == "Cite sources as [n]."
    assert [n for n in SECTION_ORDER if n in assembly.names] == assembly.names


def test_each_section_has_a_source_and_its_token_count() -> None:
    assembly = _all_options()
    for section in assembly.sections:
        assert section.source
        assert section.tokens == approx_tokens(section.text) > 0
    assert assembly.tokens == approx_tokens(assembly.text)
    assert assembly.text == "\n\n".join(s.text for s in assembly.sections)


def test_base_prompt_is_concise() -> None:
    assert approx_tokens(BASE_AGENT_PROMPT) < 500


def test_assembly_round_trips_through_a_dict() -> None:
    assembly = _all_options()
    assert PromptAssembly.from_dict(assembly.as_dict()) == assembly


def test_unknown_or_duplicate_sections_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown"):
        PromptAssembly.from_sections([PromptSection("bogus", "x", "y")])
    with pytest.raises(ValueError, match="twice"):
        PromptAssembly.from_sections([PromptSection("base", "x", "y"), PromptSection("base", "x", "z")])


def test_memory_and_skills_sections_appear_only_when_asked_for() -> None:
    bare = assemble_prompt()
    assert bare.names == ["base", "todos", "filesystem", "subagents"]  # general-purpose subagent


def test_prompt_snapshot_with_all_options() -> None:
    """Any change to the prompt shows up as a diff of the checked-in snapshot.

    Set UPDATE_SNAPSHOTS=1 to rewrite it after an intended change.
    """
    text = _all_options().to_markdown()
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text(text)
    assert SNAPSHOT.exists(), "no snapshot yet: run with UPDATE_SNAPSHOTS=1 and commit it"
    assert text == SNAPSHOT.read_text()


def test_assemble_prompt_refuses_an_argument_create_research_agent_does_not_take() -> None:
    with pytest.raises(TypeError, match="sytem_prompt"):
        assemble_prompt(sytem_prompt="typo")


def test_assemble_prompt_matches_what_the_model_receives_with_middleware() -> None:
    from jupyter_deepagent import ScriptedChatModel, create_research_agent

    model = ScriptedChatModel(script=["ok"])
    options = {"system_prompt": "Be careful.", "middleware": [_CitationMiddleware()]}
    create_research_agent(model, **options).invoke({"messages": [{"role": "user", "content": "hi"}]})
    assert model.requests[0].system == assemble_prompt(**options).text


def test_assemble_prompt_cuts_an_oversized_memory_file_like_the_run_does() -> None:
    backend = StateBackend()
    backend.write("/AGENTS.md", "".join(f"fact {i:04d}: glaciers\n" for i in range(800)))
    assembly = assemble_prompt(memory=["/AGENTS.md"], backend=backend, context_window=20_000)
    memory = assembly["memory"].text
    assert "fact 0000" in memory and "fact 0799" not in memory
    assert "/AGENTS.md is cut here" in memory


def test_assemble_prompt_takes_every_argument_create_research_agent_takes() -> None:
    defaults = {
        name: parameter.default
        for name, parameter in inspect.signature(create_research_agent).parameters.items()
        if parameter.default is not inspect.Parameter.empty
    }
    assert "store" in defaults and "keep_recent_turns" in defaults
    assembly = assemble_prompt(None, **defaults)
    assert assembly.text == assemble_prompt().text
