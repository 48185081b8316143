"""Run events of the agent loop: the run's start and end, prompts, model and tool calls, files,
approvals, the answer, and what the prompt loaded (memory, skills)."""

from typing import Any, Final, Literal, NotRequired

from jupyter_deepagent.events.common import EventStamp

__all__ = [
    "ANSWER",
    "APPROVAL_DECIDED",
    "APPROVAL_REQUESTED",
    "FILE_WRITTEN",
    "MEMORY_LOADED",
    "MODEL_CALL",
    "MODEL_RETRY",
    "PROMPT",
    "RUN_FINISHED",
    "RUN_STARTED",
    "SKILL_LOADED",
    "TODOS",
    "TOOL_CALL",
    "TOOL_RESULT",
    "WARNING",
    "AnswerEvent",
    "ApprovalDecidedEvent",
    "ApprovalRequestedEvent",
    "FileWrittenEvent",
    "MemoryLoadedEvent",
    "ModelCallEvent",
    "ModelRetryEvent",
    "PromptEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "SkillLoadedEvent",
    "TodosEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "WarningEvent",
]

RUN_STARTED: Final = "run_started"
RUN_FINISHED: Final = "run_finished"
ANSWER: Final = "answer"
PROMPT: Final = "prompt"
MODEL_CALL: Final = "model_call"
MODEL_RETRY: Final = "model_retry"
TOOL_CALL: Final = "tool_call"
TOOL_RESULT: Final = "tool_result"
FILE_WRITTEN: Final = "file_written"
APPROVAL_REQUESTED: Final = "approval_requested"
APPROVAL_DECIDED: Final = "approval_decided"
SKILL_LOADED: Final = "skill_loaded"
MEMORY_LOADED: Final = "memory_loaded"
TODOS: Final = "todos"
WARNING: Final = "warning"


class RunStartedEvent(EventStamp):
    """The first event of a `trace_run`."""

    type: Literal["run_started"]
    input: str
    """Text of the last human message of the input; "resume" for a `Command`."""
    thread_id: str | None
    """The checkpointer thread (None without one)."""
    model: str | None
    """The main model as "provider:model" (None if unknown)."""


class RunFinishedEvent(EventStamp):
    """The last event of a `trace_run`, with totals over every model and tool call of the run,
    subagents and summarizer calls included."""

    type: Literal["run_finished"]
    status: Literal["ok", "interrupted", "stopped", "error"]
    """ok; interrupted: paused for approval; stopped: KeyboardInterrupt; error."""
    error: str | None
    """The exception as "Type: message" (secrets masked), None unless it failed or stopped."""
    final_text: str
    """Text of the final answer ("" when the run ended on an interrupt or a tool)."""
    tokens_in: int
    """Input tokens of every model call."""
    tokens_out: int
    """Output tokens of every model call."""
    tokens_in_cached: NotRequired[int]
    """Of `tokens_in`, those the providers read from their prompt caches, summed over the calls
    that reported it; absent when no call did."""
    tokens_in_cache_write: NotRequired[int]
    """Of `tokens_in`, those written to a prompt cache (Anthropic), summed over the calls that
    reported it; absent when no call did."""
    cost: float | None
    """US dollars of the run's model calls with a known price (replies the research log served
    cost 0); None when none of its calls had a known price (0 for a run without model calls)."""
    cost_unpriced_calls: int
    """Model calls whose price is unknown, left out of `cost` (views add "price unknown")."""
    budget: NotRequired[Literal["paused", "stopped"]]
    """Present when the budget ended the run: paused (it waits for continue, raise or stop;
    `status` is interrupted) or stopped (it ended at its budget; `status` is ok)."""
    model_calls: int
    """How many model calls."""
    tool_calls: int
    """How many tool calls."""
    seconds: float
    """Wall time of the run."""


class AnswerEvent(EventStamp):
    """The main agent's final answer, just before `run_finished` (none on a pause or a failure)."""

    type: Literal["answer"]
    text: str
    """The answer's whole text (streamed deltas reach a callback, not the event stream)."""
    structured: dict[str, Any] | None
    """The structured response as JSON data when the agent has a `response_format`, else None."""


class PromptEvent(EventStamp):
    """One per model call of an agent, before it: the system prompt it is sent."""

    type: Literal["prompt"]
    hash: str
    """First 16 hex digits of the sha256 of the prompt text."""
    tokens: int
    """Approximate tokens of the prompt."""
    assembly: dict[str, Any] | None
    """`PromptAssembly.as_dict()`; None when it is the prompt this agent and task sent last in
    this run (look it up by `hash`)."""


class ModelCallEvent(EventStamp):
    """A request to a chat model and its reply: the agent's own calls and the summarizer's."""

    type: Literal["model_call"]
    purpose: Literal["agent", "summarize"]
    """agent: a step of the agent loop; summarize: the summarizer writing a summary."""
    model: str
    """The model as "provider:model"."""
    tokens_in: int
    """Input tokens, as the provider reported them or counted here."""
    tokens_in_estimated: bool
    """True when `tokens_in` was counted here because the provider reported none."""
    tokens_out: int
    """Output tokens the provider reported (0 if none)."""
    tokens_in_cached: NotRequired[int]
    """Of `tokens_in`, those the provider read from its prompt cache (`usage_metadata`'s
    `input_token_details.cache_read`), billed at a fraction of the price; absent when the
    provider reported no such detail."""
    tokens_in_cache_write: NotRequired[int]
    """Of `tokens_in`, those the provider wrote to its prompt cache (`cache_creation`, reported
    by Anthropic, billed above the base price); absent when not reported."""
    cost: float | None
    """US dollars the call cost, from its reported usage at the rates of `price`; 0 for a reply
    the research log served (nothing was paid for it now); None when the price is unknown
    (views say "price unknown", never a number)."""
    price: str | None
    """The price-table entry that priced it ("anthropic:claude-sonnet-4-5"); None when no entry
    matches the model."""
    cost_recorded: NotRequired[float | None]
    """Only for a reply the research log served: what it would cost now, its recorded usage at
    the run's prices (None: price unknown)."""
    seconds: float
    """Wall time of the call."""
    messages: int
    """How many messages were sent."""
    tool_calls: list[str]
    """Names of the tools the reply calls."""
    reply: dict[str, Any] | None
    """The AI message as `message_to_dict` gives it (`messages_from_dict([reply])` rebuilds it:
    content, tool calls with ids and full args, usage); None if the model gave no AI message."""


class ModelRetryEvent(EventStamp):
    """A model call failed with an error that may pass (network, timeout, rate limit, server
    error); the same request is sent again after `wait` seconds. After the last attempt the
    error ends the run (in a notebook: `ModelCallFailed`)."""

    type: Literal["model_retry"]
    purpose: Literal["agent", "summarize"]
    """agent: a step of the agent loop; summarize: the summarizer writing a summary."""
    model: str
    """The model as "provider:model"."""
    attempt: int
    """The attempt that failed (1 for the first call)."""
    attempts: int
    """How many attempts are allowed in all (1 + `model_retries`)."""
    wait: float
    """Seconds before the next attempt."""
    error: str
    """The error as "Type: message", on one line and shortened (secrets masked)."""


class ToolCallEvent(EventStamp):
    """A tool call about to run."""

    type: Literal["tool_call"]
    tool: str
    """The tool's name."""
    tool_call_id: str | None
    """The id the model gave the call."""
    args: dict[str, Any]
    """The arguments, shortened for display (`summarize_args`: long strings become
    `{"chars", "head"}`, long lists `{"items", "head"}`); the whole ones are in the reply."""


class ToolResultEvent(EventStamp):
    """What a tool returned."""

    type: Literal["tool_result"]
    tool: str
    """The tool's name."""
    tool_call_id: str | None
    """The id of the call it answers."""
    content: str
    """The tool message's text as the tool returned it, before any offloading."""
    chars: int
    """Characters of `content`."""
    seconds: float
    """Wall time of the tool."""
    error: str | None
    """The error text when the tool failed, else None."""


class FileWrittenEvent(EventStamp):
    """A file tool changed a file (main agent or subagent)."""

    type: Literal["file_written"]
    path: str
    """The file's virtual path (e.g. `/outputs/chart.svg`)."""
    tool: str
    """The tool that wrote it (write_file, edit_file)."""
    chars: int
    """Characters written: the whole content, or an edit's replacement text."""


class ApprovalRequestedEvent(EventStamp):
    """The run paused: a tool call waits for a person's decision (human in the loop)."""

    type: Literal["approval_requested"]
    tool: str
    """The tool the model wants to call."""
    args: dict[str, Any]
    """Its arguments, shortened as in `tool_call`."""
    description: str
    """What the approval request says about the call."""
    allowed: list[str]
    """The decisions allowed (approve, edit, reject, ...)."""
    interrupt_id: str | None
    """The LangGraph interrupt that holds the request."""


class ApprovalDecidedEvent(EventStamp):
    """A person answered the tool calls waiting for approval; the run resumes with the answer.
    Given once per resume, right after `run_started`."""

    type: Literal["approval_decided"]
    decision: str
    """approve, edit, reject (several answers of different kinds: their kinds joined by ",")."""
    via: str
    """Who answered: "button", "%agent resume", or "command" (a resume `Command` in code)."""
    tools: list[str]
    """The tools of the calls answered, in order."""
    tool_call_ids: list[str | None]
    """Their tool call ids (None where a call cannot be matched)."""
    message: str | None
    """The reason given with a rejection, else None."""
    edits: dict[str, Any] | None
    """The arguments an edit changed (shortened as in `tool_call`), else None."""


class SkillLoadedEvent(EventStamp):
    """The agent read a skill's SKILL.md."""

    type: Literal["skill_loaded"]
    skill: str
    """The skill's name."""
    path: str
    """Its SKILL.md."""


class MemoryLoadedEvent(EventStamp):
    """A memory file is in the prompt (at the start of each run)."""

    type: Literal["memory_loaded"]
    path: str
    """The memory file."""
    tokens: int
    """Approximate tokens of the whole file."""


class TodosEvent(EventStamp):
    """The agent wrote its todo list."""

    type: Literal["todos"]
    todos: list[dict[str, Any]]
    """The list as written: `{content, status}` each."""


class WarningEvent(EventStamp):
    """Something the user should know; a repeated warning is given once per run."""

    type: Literal["warning"]
    message: str
    """What happened and what to do."""
    source: str | None
    """What it is about: a file, a folder, an option (`context_window` for the default window)."""
