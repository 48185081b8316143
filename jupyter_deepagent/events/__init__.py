"""Run events: the one stream every view reads (cell output, inspector, sidebar, research log).

Each event is a plain JSON dict, defined here as a TypedDict whose `type` is a `Literal`, and
built only through `build_event`, which refuses an unknown type, a missing field or a field not
in the definition. The harness writes events to LangGraph's custom stream (`stream_mode="custom"`)
or to the sink `trace_run` installs; `trace_run` stamps them with `run_id` and `seq` and masks
secrets before any view sees them. Errors are None or a plain string, sizes of text are `chars`,
token counts `tokens` or `tokens_*`.

`python -m jupyter_deepagent.events --json-schema` writes the JSON Schema; the table below is
generated from the definitions (`--table`), and a test fails when it differs.

<!-- generated: python -m jupyter_deepagent.events --table -->
Every event has its `type` and:

- `schema`: The schema version the event follows (`SCHEMA_VERSION`).
- `time`: When it happened, in seconds since the epoch (every time in every event is epoch seconds).
- `agent`: The agent it belongs to: `"main"`, or the subagent's name.
- `task_id`: None for the main agent; the task id for the events of a subagent's own steps.
- `step`: The model call of the agent's run it belongs to (1-based; 0 before the first call).
- `run_id`: The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it.
- `seq`: The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it.

| type | what it says | its own fields |
|---|---|---|
| `run_started` | The first event of a `trace_run`. | `input`: Text of the last human message of the input; "resume" for a `Command`. `thread_id`: The checkpointer thread (None without one). `model`: The main model as "provider:model" (None if unknown). |
| `run_finished` | The last event of a `trace_run`, with totals over every model and tool call of the run, subagents and summarizer calls included. | `status`: ok; interrupted: paused for approval; stopped: KeyboardInterrupt; error. `error`: The exception as "Type: message" (secrets masked), None unless it failed or stopped. `final_text`: Text of the final answer ("" when the run ended on an interrupt or a tool). `tokens_in`: Input tokens of every model call. `tokens_out`: Output tokens of every model call. `tokens_in_cached`: Of `tokens_in`, those the providers read from their prompt caches, summed over the calls that reported it; absent when no call did. `tokens_in_cache_write`: Of `tokens_in`, those written to a prompt cache (Anthropic), summed over the calls that reported it; absent when no call did. `cost`: US dollars of the run's model calls with a known price (replies the research log served cost 0); None when none of its calls had a known price (0 for a run without model calls). `cost_unpriced_calls`: Model calls whose price is unknown, left out of `cost` (views add "price unknown"). `budget`: Present when the budget ended the run: paused (it waits for continue, raise or stop; `status` is interrupted) or stopped (it ended at its budget; `status` is ok). `model_calls`: How many model calls. `tool_calls`: How many tool calls. `seconds`: Wall time of the run. |
| `answer` | The main agent's final answer, just before `run_finished` (none on a pause or a failure). | `text`: The answer's whole text (streamed deltas reach a callback, not the event stream). `structured`: The structured response as JSON data when the agent has a `response_format`, else None. |
| `prompt` | One per model call of an agent, before it: the system prompt it is sent. | `hash`: First 16 hex digits of the sha256 of the prompt text. `tokens`: Approximate tokens of the prompt. `assembly`: `PromptAssembly.as_dict()`; None when it is the prompt this agent and task sent last in this run (look it up by `hash`). |
| `model_call` | A request to a chat model and its reply: the agent's own calls and the summarizer's. | `purpose`: agent: a step of the agent loop; summarize: the summarizer writing a summary. `model`: The model as "provider:model". `tokens_in`: Input tokens, as the provider reported them or counted here. `tokens_in_estimated`: True when `tokens_in` was counted here because the provider reported none. `tokens_out`: Output tokens the provider reported (0 if none). `tokens_in_cached`: Of `tokens_in`, those the provider read from its prompt cache (`usage_metadata`'s `input_token_details.cache_read`), billed at a fraction of the price; absent when the provider reported no such detail. `tokens_in_cache_write`: Of `tokens_in`, those the provider wrote to its prompt cache (`cache_creation`, reported by Anthropic, billed above the base price); absent when not reported. `cost`: US dollars the call cost, from its reported usage at the rates of `price`; 0 for a reply the research log served (nothing was paid for it now); None when the price is unknown (views say "price unknown", never a number). `price`: The price-table entry that priced it ("anthropic:claude-sonnet-4-5"); None when no entry matches the model. `cost_recorded`: Only for a reply the research log served: what it would cost now, its recorded usage at the run's prices (None: price unknown). `seconds`: Wall time of the call. `messages`: How many messages were sent. `tool_calls`: Names of the tools the reply calls. `reply`: The AI message as `message_to_dict` gives it (`messages_from_dict([reply])` rebuilds it: content, tool calls with ids and full args, usage); None if the model gave no AI message. |
| `model_retry` | A model call failed with an error that may pass (network, timeout, rate limit, server error); the same request is sent again after `wait` seconds. After the last attempt the error ends the run (in a notebook: `ModelCallFailed`). | `purpose`: agent: a step of the agent loop; summarize: the summarizer writing a summary. `model`: The model as "provider:model". `attempt`: The attempt that failed (1 for the first call). `attempts`: How many attempts are allowed in all (1 + `model_retries`). `wait`: Seconds before the next attempt. `error`: The error as "Type: message", on one line and shortened (secrets masked). |
| `tool_call` | A tool call about to run. | `tool`: The tool's name. `tool_call_id`: The id the model gave the call. `args`: The arguments, shortened for display (`summarize_args`: long strings become `{"chars", "head"}`, long lists `{"items", "head"}`); the whole ones are in the reply. |
| `tool_result` | What a tool returned. | `tool`: The tool's name. `tool_call_id`: The id of the call it answers. `content`: The tool message's text as the tool returned it, before any offloading. `chars`: Characters of `content`. `seconds`: Wall time of the tool. `error`: The error text when the tool failed, else None. |
| `file_written` | A file tool changed a file (main agent or subagent). | `path`: The file's virtual path (e.g. `/outputs/chart.svg`). `tool`: The tool that wrote it (write_file, edit_file). `chars`: Characters written: the whole content, or an edit's replacement text. |
| `approval_requested` | The run paused: a tool call waits for a person's decision (human in the loop). | `tool`: The tool the model wants to call. `args`: Its arguments, shortened as in `tool_call`. `description`: What the approval request says about the call. `allowed`: The decisions allowed (approve, edit, reject, ...). `interrupt_id`: The LangGraph interrupt that holds the request. |
| `approval_decided` | A person answered the tool calls waiting for approval; the run resumes with the answer. Given once per resume, right after `run_started`. | `decision`: approve, edit, reject (several answers of different kinds: their kinds joined by ","). `via`: Who answered: "button", "%agent resume", or "command" (a resume `Command` in code). `tools`: The tools of the calls answered, in order. `tool_call_ids`: Their tool call ids (None where a call cannot be matched). `message`: The reason given with a rejection, else None. `edits`: The arguments an edit changed (shortened as in `tool_call`), else None. |
| `skill_loaded` | The agent read a skill's SKILL.md. | `skill`: The skill's name. `path`: Its SKILL.md. |
| `memory_loaded` | A memory file is in the prompt (at the start of each run). | `path`: The memory file. `tokens`: Approximate tokens of the whole file. |
| `todos` | The agent wrote its todo list. | `todos`: The list as written: `{content, status}` each. |
| `warning` | Something the user should know; a repeated warning is given once per run. | `message`: What happened and what to do. `source`: What it is about: a file, a folder, an option (`context_window` for the default window). |
| `context` | One per model request, before it is sent: how full the context window is. | `tokens`: What is sent (system prompt, messages, tool schemas), calibrated. `window`: Tokens the model accepts. `trigger`: Tokens where summarization starts. `window_source`: Where the window size comes from. `messages`: Messages sent. `summaries`: How many summaries the history has. `pointers`: Messages sent as pointers to files. `attempt`: 1; 2 on the retry after an overflow. |
| `offloaded` | A tool result too large for the conversation, saved to a file when it arrived. | `path`: The file under `/large_tool_results/`. `tool`: The tool that returned it. `tool_call_id`: The call it answers. `tokens`: Approximate tokens of the result. `lines`: Its lines. `chars`: Its characters. |
| `aged` | A tool result now sent as a pointer to its file. | `path`: The file holding the result. `tool`: The tool that returned it. `tool_call_id`: The call it answers. `tokens`: Approximate tokens of the result. `lines`: Its lines. `replies`: Model replies since it arrived. `reason`: consumed: replied to often enough; window: moved early to fit the window. |
| `input_offloaded` | An input sent as a pointer: a long user message, or an old file write's long arguments. | `kind`: human: a long user message saved to `path`; tool_args: an old write_file/edit_file call sent without its long arguments (`path` is the file it wrote). `path`: The file. `tokens`: Approximate tokens moved out. `message_id`: The user message's id (human), else None. `tool`: The tool of the call (tool_args), else None. `tool_call_id`: The call's id (tool_args), else None. |
| `summarized` | Older messages were folded into a summary (the checkpoint keeps them all). | `reason`: trigger: the window's trigger was passed; history: the older part of the conversation passed its share of the window; compact: the agent asked; overflow: the provider refused a request as too long. `count`: This is the thread's nth summary. `tokens_before`: Tokens of the request before. `tokens_after`: Tokens of the request after. `messages_folded`: Messages the summary stands for. `transcript_path`: The `/conversation_history/` file holding them in full. `tokens_summary`: Approximate tokens of the summary. `tokens_summarizer`: Approximate tokens of the summarizer's request. |
| `context_overflow` | The provider rejected a request as too long. | `tokens`: Tokens of the rejected request, as counted here. `window`: The window it was sent for. `error`: The provider's error, shortened. `action`: retry: summarize, shrink and send again; raise: give up with `ContextOverflow`. |
| `compaction_refused` | `compact_conversation` was called while the conversation was still small. | `tokens`: Tokens of the last request. `threshold`: Tokens needed before compacting is allowed. |
| `subagent_started` | A `task` call started its subagent; `agent` and `task_id` are the subagent's and `time` is when it started. | `description`: The task as the caller wrote it. `parent_task_id`: The calling agent's task id (None when the main agent called). `turn_id`: The calling AI message. `call_index`: The call's position among that message's tool calls. |
| `subagent_finished` | A subagent returned (or failed); `agent` and `task_id` are the subagent's. | `description`: The task as the caller wrote it. `parent_task_id`: The calling agent's task id (None when the main agent called). `turn_id`: The calling AI message. `call_index`: The call's position among that message's tool calls. `status`: How the task ended. `result`: The report text the caller gets. `structured`: The structured response as JSON data, or None. `tokens_in`: Input tokens summed over the task's model calls. `tokens_out`: Output tokens summed over the task's model calls. `seconds`: Wall time of the task. `files_written`: Files the subagent wrote. `transcript_path`: Its conversation under `/subagents/` (None if it could not be saved). `error`: The error text when it failed, else None. |
| `budget_reached` | The next model call would pass the run's budget: what was spent, on what, and whether the run waits for an answer (continue, raise the budget, stop) or stops here. | `budget`: The budget as the user gave it back: "$0.50" or "200,000 tokens". `unit`: What the budget counts: US dollars, or input and output tokens. `limit`: The budget in its unit. `spent`: What the run's model calls have used so far, in the budget's unit (main agent, subagents and summarizer; a reply the research log served counts its recorded usage, as if paid). `spent_main`: Of `spent`, the main agent's own calls. `spent_subagents`: Of `spent`, the subagents' calls. `spent_summarizer`: Of `spent`, the summarizer's calls. `spent_replayed`: Of `spent`, replies the research log served: nothing was paid for them now. `unpriced_calls`: Calls of a model with no known price, not in `spent` (a money budget cannot count them). `next_call`: The estimate of the call it stopped before, in the budget's unit. `model`: The model of that call, as "provider:model". `paused`: True: the run waits for an answer (`interrupt_id`); False: it stops here, as it was set to (headless runs). `interrupt_id`: The LangGraph interrupt that holds the pause (None when the run stops). |
| `budget_decided` | The answer to a budget pause, as the resumed run takes it. | `action`: continue: this call goes ahead (the next one that would pass the budget asks again); raise: the budget is now `budget`; stop: the run ends here, the thread stays usable. `budget`: The budget from now on. |
| `cell_proposed` | The agent proposed a notebook cell (`propose_cell`); it is shown to the user, never run. | `kind`: A code cell or a Markdown cell. `source`: The cell's text as the model wrote it (secrets masked). `cell`: The key of the `%%agent` cell that proposed it (`cell:<id>`, or `source:<hash>` where the frontend sends no id); None outside a cell's run. `index`: Its place among the proposals of the cell's turn: 0, 1, 2, ... in the order the model called the tool (the same in a replay). `tool_call_id`: The `propose_cell` call that made it. |
<!-- end of generated table -->

A warning that would say the same thing again (the default window for a subagent, an oversized
memory file at every model call) is given once per run; on a plain custom stream, which has no
runs, only the main agent gives it.
"""

from jupyter_deepagent.events.budget import (
    BUDGET_ACTIONS,
    BUDGET_DECIDED,
    BUDGET_PAUSE,
    BUDGET_REACHED,
    BudgetAnswer,
    BudgetDecidedEvent,
    BudgetPause,
    BudgetReachedEvent,
)
from jupyter_deepagent.events.cells import CELL_PROPOSED, CellProposedEvent
from jupyter_deepagent.events.common import SCHEMA_VERSION, EventStamp
from jupyter_deepagent.events.context import (
    AGED,
    COMPACTION_REFUSED,
    CONTEXT,
    CONTEXT_OVERFLOW,
    INPUT_OFFLOADED,
    OFFLOADED,
    SUMMARIZED,
    AgedEvent,
    CompactionRefusedEvent,
    ContextEvent,
    ContextOverflowEvent,
    InputOffloadedEvent,
    OffloadedEvent,
    SummarizedEvent,
)
from jupyter_deepagent.events.run import (
    ANSWER,
    APPROVAL_DECIDED,
    APPROVAL_REQUESTED,
    FILE_WRITTEN,
    MEMORY_LOADED,
    MODEL_CALL,
    MODEL_RETRY,
    PROMPT,
    RUN_FINISHED,
    RUN_STARTED,
    SKILL_LOADED,
    TODOS,
    TOOL_CALL,
    TOOL_RESULT,
    WARNING,
    AnswerEvent,
    ApprovalDecidedEvent,
    ApprovalRequestedEvent,
    FileWrittenEvent,
    MemoryLoadedEvent,
    ModelCallEvent,
    ModelRetryEvent,
    PromptEvent,
    RunFinishedEvent,
    RunStartedEvent,
    SkillLoadedEvent,
    TodosEvent,
    ToolCallEvent,
    ToolResultEvent,
    WarningEvent,
)
from jupyter_deepagent.events.schema import (
    COMMON_FIELDS,
    EVENT_DEFINITIONS,
    EVENT_TYPES,
    RunEvent,
    build_event,
    event_json_schema,
    event_table,
    stamped,
    validate_event,
)
from jupyter_deepagent.events.subagents import (
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    SubagentFinishedEvent,
    SubagentStartedEvent,
)

__all__ = [
    "AGED",
    "ANSWER",
    "APPROVAL_DECIDED",
    "APPROVAL_REQUESTED",
    "BUDGET_ACTIONS",
    "BUDGET_DECIDED",
    "BUDGET_PAUSE",
    "BUDGET_REACHED",
    "CELL_PROPOSED",
    "COMMON_FIELDS",
    "COMPACTION_REFUSED",
    "CONTEXT",
    "CONTEXT_OVERFLOW",
    "EVENT_DEFINITIONS",
    "EVENT_TYPES",
    "FILE_WRITTEN",
    "INPUT_OFFLOADED",
    "MEMORY_LOADED",
    "MODEL_CALL",
    "MODEL_RETRY",
    "OFFLOADED",
    "PROMPT",
    "RUN_FINISHED",
    "RUN_STARTED",
    "SCHEMA_VERSION",
    "SKILL_LOADED",
    "SUBAGENT_FINISHED",
    "SUBAGENT_STARTED",
    "SUMMARIZED",
    "TODOS",
    "TOOL_CALL",
    "TOOL_RESULT",
    "WARNING",
    "AgedEvent",
    "AnswerEvent",
    "ApprovalDecidedEvent",
    "ApprovalRequestedEvent",
    "BudgetAnswer",
    "BudgetDecidedEvent",
    "BudgetPause",
    "BudgetReachedEvent",
    "CellProposedEvent",
    "CompactionRefusedEvent",
    "ContextEvent",
    "ContextOverflowEvent",
    "EventStamp",
    "FileWrittenEvent",
    "InputOffloadedEvent",
    "MemoryLoadedEvent",
    "ModelCallEvent",
    "ModelRetryEvent",
    "OffloadedEvent",
    "PromptEvent",
    "RunEvent",
    "RunFinishedEvent",
    "RunStartedEvent",
    "SkillLoadedEvent",
    "SubagentFinishedEvent",
    "SubagentStartedEvent",
    "SummarizedEvent",
    "TodosEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "WarningEvent",
    "build_event",
    "event_json_schema",
    "event_table",
    "stamped",
    "validate_event",
]
