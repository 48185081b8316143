"""A SubAgent's own `skills` and `middleware`: the subagent's system prompt lists its skills and
carries its middleware's text, and neither the parent's skills nor its middleware leak into it (nor
the subagent's into the parent's)."""

from __future__ import annotations

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import SystemMessage

from jupyter_deepagent import (
    ScriptedChatModel,
    StateBackend,
    SubAgent,
    create_research_agent,
    trace_run,
)

ANALYST = "You are the analyst subagent."
PARENT_NOTE = "PARENT-MIDDLEWARE: cite every source."
ANALYST_NOTE = "ANALYST-MIDDLEWARE: give numbers with units."


class ParentNote(AgentMiddleware):
    """Adds the parent's own line to the system prompt."""

    text = PARENT_NOTE

    def wrap_model_call(self, request, handler):
        return handler(self._with_note(request))

    async def awrap_model_call(self, request, handler):
        return await handler(self._with_note(request))

    def _with_note(self, request):
        base = request.system_message.text + "\n\n" if request.system_message else ""
        return request.override(system_message=SystemMessage(content=base + self.text))


class AnalystNote(ParentNote):
    """Adds the analyst's own line to the system prompt."""

    text = ANALYST_NOTE


def skill(name: str, description: str) -> dict:
    return {"content": f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n",
            "modified_at": "2024-01-01T00:00:00+00:00"}


FILES = {
    "/skills/lead/lead-review/SKILL.md": skill("lead-review", "Review drafts as the lead."),
    "/skills/analyst/unit-check/SKILL.md": skill("unit-check", "Check units in tables."),
}


def delegate(subagent_type: str) -> dict:
    args = {"description": "Check the table in /t.csv.", "subagent_type": subagent_type}
    return {"tool_calls": [{"name": "task", "args": args}]}


def run(subagent_type: str, rules: list) -> tuple[ScriptedChatModel, object]:
    model = ScriptedChatModel(script=[delegate(subagent_type), "done"], rules=rules)
    analyst = SubAgent(
        "analyst", "Checks tables.", system_prompt=ANALYST, skills=["/skills/analyst/"],
        middleware=[AnalystNote()],
    )
    agent = create_research_agent(
        model, skills=["/skills/lead/"], middleware=[ParentNote()], subagents=[analyst],
        backend=StateBackend(),
    )
    ask = {"messages": [{"role": "user", "content": "check the table"}], "files": FILES}
    trace = trace_run(agent, ask)
    return model, trace


def prompts(model: ScriptedChatModel, marker: str) -> tuple[str, str]:
    """The first system prompt that holds `marker`, and the parent's first one."""
    sub = next(r.system for r in model.requests if marker in r.system)
    parent = model.requests[0].system
    assert marker not in parent
    return sub, parent


def test_a_subagent_lists_its_own_skills_and_not_the_parents() -> None:
    model, trace = run("analyst", [{"when_system": ANALYST, "reply": "units ok"}])
    assert trace.final_text == "done"
    sub, parent = prompts(model, ANALYST)
    assert "unit-check" in sub and "/skills/analyst/unit-check/SKILL.md" in sub
    assert "lead-review" not in sub
    assert "lead-review" in parent and "unit-check" not in parent


def test_a_subagents_middleware_text_is_in_its_prompt_and_the_parents_is_not() -> None:
    model, _ = run("analyst", [{"when_system": ANALYST, "reply": "units ok"}])
    sub, parent = prompts(model, ANALYST)
    assert ANALYST_NOTE in sub and PARENT_NOTE not in sub
    assert PARENT_NOTE in parent and ANALYST_NOTE not in parent


def test_the_general_purpose_subagent_gets_the_parents_skills_but_not_its_middleware() -> None:
    marker = "general-purpose subagent"
    model, trace = run("general-purpose", [{"when_system": marker, "reply": "checked"}])
    assert trace.final_text == "done"
    sub, _ = prompts(model, "You are a general-purpose subagent")
    assert "lead-review" in sub and "unit-check" not in sub
    assert PARENT_NOTE not in sub and ANALYST_NOTE not in sub
