/**
 * Run events, schema version 1: generated from the Python definitions in
 * `jupyter_deepagent/events/` by `python -m jupyter_deepagent.events --typescript`.
 * Do not edit by hand; a test checks that this file matches the schema.
 */

export const EVENT_SCHEMA_VERSION = 1;

/** A tool result now sent as a pointer to its file. */
export interface AgedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "aged";
  /** The file holding the result. */
  path: string;
  /** The tool that returned it. */
  tool: string | null;
  /** The call it answers. */
  tool_call_id: string;
  /** Approximate tokens of the result. */
  tokens: number;
  /** Its lines. */
  lines: number;
  /** Model replies since it arrived. */
  replies: number;
  /** consumed: replied to often enough; window: moved early to fit the window. */
  reason: "consumed" | "window";
}

/** The main agent's final answer, just before `run_finished` (none on a pause or a failure). */
export interface AnswerEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "answer";
  /** The answer's whole text (streamed deltas reach a callback, not the event stream). */
  text: string;
  /** The structured response as JSON data when the agent has a `response_format`, else None. */
  structured: Record<string, unknown> | null;
}

/** A person answered the tool calls waiting for approval; the run resumes with the answer. Given once per resume, right after `run_started`. */
export interface ApprovalDecidedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "approval_decided";
  /** approve, edit, reject (several answers of different kinds: their kinds joined by ","). */
  decision: string;
  /** Who answered: "button", "%agent resume", or "command" (a resume `Command` in code). */
  via: string;
  /** The tools of the calls answered, in order. */
  tools: string[];
  /** Their tool call ids (None where a call cannot be matched). */
  tool_call_ids: Array<string | null>;
  /** The reason given with a rejection, else None. */
  message: string | null;
  /** The arguments an edit changed (shortened as in `tool_call`), else None. */
  edits: Record<string, unknown> | null;
}

/** The run paused: a tool call waits for a person's decision (human in the loop). */
export interface ApprovalRequestedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "approval_requested";
  /** The tool the model wants to call. */
  tool: string;
  /** Its arguments, shortened as in `tool_call`. */
  args: Record<string, unknown>;
  /** What the approval request says about the call. */
  description: string;
  /** The decisions allowed (approve, edit, reject, ...). */
  allowed: string[];
  /** The LangGraph interrupt that holds the request. */
  interrupt_id: string | null;
}

/** The answer to a budget pause, as the resumed run takes it. */
export interface BudgetDecidedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "budget_decided";
  /** continue: this call goes ahead (the next one that would pass the budget asks again); raise: the budget is now `budget`; stop: the run ends here, the thread stays usable. */
  action: "continue" | "raise" | "stop";
  /** The budget from now on. */
  budget: string;
}

/** The next model call would pass the run's budget: what was spent, on what, and whether the run waits for an answer (continue, raise the budget, stop) or stops here. */
export interface BudgetReachedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "budget_reached";
  /** The budget as the user gave it back: "$0.50" or "200,000 tokens". */
  budget: string;
  /** What the budget counts: US dollars, or input and output tokens. */
  unit: "usd" | "tokens";
  /** The budget in its unit. */
  limit: number;
  /** What the run's model calls have used so far, in the budget's unit (main agent, subagents and summarizer; a reply the research log served counts its recorded usage, as if paid). */
  spent: number;
  /** Of `spent`, the main agent's own calls. */
  spent_main: number;
  /** Of `spent`, the subagents' calls. */
  spent_subagents: number;
  /** Of `spent`, the summarizer's calls. */
  spent_summarizer: number;
  /** Of `spent`, replies the research log served: nothing was paid for them now. */
  spent_replayed: number;
  /** Calls of a model with no known price, not in `spent` (a money budget cannot count them). */
  unpriced_calls: number;
  /** The estimate of the call it stopped before, in the budget's unit. */
  next_call: number;
  /** The model of that call, as "provider:model". */
  model: string;
  /** True: the run waits for an answer (`interrupt_id`); False: it stops here, as it was set to (headless runs). */
  paused: boolean;
  /** The LangGraph interrupt that holds the pause (None when the run stops). */
  interrupt_id: string | null;
}

/** The agent proposed a notebook cell (`propose_cell`); it is shown to the user, never run. */
export interface CellProposedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "cell_proposed";
  /** A code cell or a Markdown cell. */
  kind: "code" | "markdown";
  /** The cell's text as the model wrote it (secrets masked). */
  source: string;
  /** The key of the `%%agent` cell that proposed it (`cell:<id>`, or `source:<hash>` where the frontend sends no id); None outside a cell's run. */
  cell: string | null;
  /** Its place among the proposals of the cell's turn: 0, 1, 2, ... in the order the model called the tool (the same in a replay). */
  index: number;
  /** The `propose_cell` call that made it. */
  tool_call_id: string | null;
}

/** `compact_conversation` was called while the conversation was still small. */
export interface CompactionRefusedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "compaction_refused";
  /** Tokens of the last request. */
  tokens: number;
  /** Tokens needed before compacting is allowed. */
  threshold: number;
}

/** One per model request, before it is sent: how full the context window is. */
export interface ContextEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "context";
  /** What is sent (system prompt, messages, tool schemas), calibrated. */
  tokens: number;
  /** Tokens the model accepts. */
  window: number;
  /** Tokens where summarization starts. */
  trigger: number;
  /** Where the window size comes from. */
  window_source: "option" | "profile" | "default" | "learned";
  /** Messages sent. */
  messages: number;
  /** How many summaries the history has. */
  summaries: number;
  /** Messages sent as pointers to files. */
  pointers: number;
  /** 1; 2 on the retry after an overflow. */
  attempt: number;
}

/** The provider rejected a request as too long. */
export interface ContextOverflowEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "context_overflow";
  /** Tokens of the rejected request, as counted here. */
  tokens: number;
  /** The window it was sent for. */
  window: number;
  /** The provider's error, shortened. */
  error: string;
  /** retry: summarize, shrink and send again; raise: give up with `ContextOverflow`. */
  action: "retry" | "raise";
}

/** A file tool changed a file (main agent or subagent). */
export interface FileWrittenEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "file_written";
  /** The file's virtual path (e.g. `/outputs/chart.svg`). */
  path: string;
  /** The tool that wrote it (write_file, edit_file). */
  tool: string;
  /** Characters written: the whole content, or an edit's replacement text. */
  chars: number;
}

/** An input sent as a pointer: a long user message, or an old file write's long arguments. */
export interface InputOffloadedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "input_offloaded";
  /** human: a long user message saved to `path`; tool_args: an old write_file/edit_file call sent without its long arguments (`path` is the file it wrote). */
  kind: "human" | "tool_args";
  /** The file. */
  path: string | null;
  /** Approximate tokens moved out. */
  tokens: number;
  /** The user message's id (human), else None. */
  message_id: string | null;
  /** The tool of the call (tool_args), else None. */
  tool: string | null;
  /** The call's id (tool_args), else None. */
  tool_call_id: string | null;
}

/** A memory file is in the prompt (at the start of each run). */
export interface MemoryLoadedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "memory_loaded";
  /** The memory file. */
  path: string;
  /** Approximate tokens of the whole file. */
  tokens: number;
}

/** A request to a chat model and its reply: the agent's own calls and the summarizer's. */
export interface ModelCallEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "model_call";
  /** agent: a step of the agent loop; summarize: the summarizer writing a summary. */
  purpose: "agent" | "summarize";
  /** The model as "provider:model". */
  model: string;
  /** Input tokens, as the provider reported them or counted here. */
  tokens_in: number;
  /** True when `tokens_in` was counted here because the provider reported none. */
  tokens_in_estimated: boolean;
  /** Output tokens the provider reported (0 if none). */
  tokens_out: number;
  /** Of `tokens_in`, those the provider read from its prompt cache (`usage_metadata`'s `input_token_details.cache_read`), billed at a fraction of the price; absent when the provider reported no such detail. */
  tokens_in_cached?: number;
  /** Of `tokens_in`, those the provider wrote to its prompt cache (`cache_creation`, reported by Anthropic, billed above the base price); absent when not reported. */
  tokens_in_cache_write?: number;
  /** US dollars the call cost, from its reported usage at the rates of `price`; 0 for a reply the research log served (nothing was paid for it now); None when the price is unknown (views say "price unknown", never a number). */
  cost: number | null;
  /** The price-table entry that priced it ("anthropic:claude-sonnet-4-5"); None when no entry matches the model. */
  price: string | null;
  /** Only for a reply the research log served: what it would cost now, its recorded usage at the run's prices (None: price unknown). */
  cost_recorded?: number | null;
  /** Wall time of the call. */
  seconds: number;
  /** How many messages were sent. */
  messages: number;
  /** Names of the tools the reply calls. */
  tool_calls: string[];
  /** The AI message as `message_to_dict` gives it (`messages_from_dict([reply])` rebuilds it: content, tool calls with ids and full args, usage); None if the model gave no AI message. */
  reply: Record<string, unknown> | null;
}

/** A model call failed with an error that may pass (network, timeout, rate limit, server error); the same request is sent again after `wait` seconds. After the last attempt the error ends the run (in a notebook: `ModelCallFailed`). */
export interface ModelRetryEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "model_retry";
  /** agent: a step of the agent loop; summarize: the summarizer writing a summary. */
  purpose: "agent" | "summarize";
  /** The model as "provider:model". */
  model: string;
  /** The attempt that failed (1 for the first call). */
  attempt: number;
  /** How many attempts are allowed in all (1 + `model_retries`). */
  attempts: number;
  /** Seconds before the next attempt. */
  wait: number;
  /** The error as "Type: message", on one line and shortened (secrets masked). */
  error: string;
}

/** A tool result too large for the conversation, saved to a file when it arrived. */
export interface OffloadedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "offloaded";
  /** The file under `/large_tool_results/`. */
  path: string;
  /** The tool that returned it. */
  tool: string;
  /** The call it answers. */
  tool_call_id: string | null;
  /** Approximate tokens of the result. */
  tokens: number;
  /** Its lines. */
  lines: number;
  /** Its characters. */
  chars: number;
}

/** One per model call of an agent, before it: the system prompt it is sent. */
export interface PromptEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "prompt";
  /** First 16 hex digits of the sha256 of the prompt text. */
  hash: string;
  /** Approximate tokens of the prompt. */
  tokens: number;
  /** `PromptAssembly.as_dict()`; None when it is the prompt this agent and task sent last in this run (look it up by `hash`). */
  assembly: Record<string, unknown> | null;
}

/** The last event of a `trace_run`, with totals over every model and tool call of the run, subagents and summarizer calls included. */
export interface RunFinishedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "run_finished";
  /** ok; interrupted: paused for approval; stopped: KeyboardInterrupt; error. */
  status: "ok" | "interrupted" | "stopped" | "error";
  /** The exception as "Type: message" (secrets masked), None unless it failed or stopped. */
  error: string | null;
  /** Text of the final answer ("" when the run ended on an interrupt or a tool). */
  final_text: string;
  /** Input tokens of every model call. */
  tokens_in: number;
  /** Output tokens of every model call. */
  tokens_out: number;
  /** Of `tokens_in`, those the providers read from their prompt caches, summed over the calls that reported it; absent when no call did. */
  tokens_in_cached?: number;
  /** Of `tokens_in`, those written to a prompt cache (Anthropic), summed over the calls that reported it; absent when no call did. */
  tokens_in_cache_write?: number;
  /** US dollars of the run's model calls with a known price (replies the research log served cost 0); None when none of its calls had a known price (0 for a run without model calls). */
  cost: number | null;
  /** Model calls whose price is unknown, left out of `cost` (views add "price unknown"). */
  cost_unpriced_calls: number;
  /** Present when the budget ended the run: paused (it waits for continue, raise or stop; `status` is interrupted) or stopped (it ended at its budget; `status` is ok). */
  budget?: "paused" | "stopped";
  /** How many model calls. */
  model_calls: number;
  /** How many tool calls. */
  tool_calls: number;
  /** Wall time of the run. */
  seconds: number;
}

/** The first event of a `trace_run`. */
export interface RunStartedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "run_started";
  /** Text of the last human message of the input; "resume" for a `Command`. */
  input: string;
  /** The checkpointer thread (None without one). */
  thread_id: string | null;
  /** The main model as "provider:model" (None if unknown). */
  model: string | null;
}

/** The agent read a skill's SKILL.md. */
export interface SkillLoadedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "skill_loaded";
  /** The skill's name. */
  skill: string;
  /** Its SKILL.md. */
  path: string;
}

/** A subagent returned (or failed); `agent` and `task_id` are the subagent's. */
export interface SubagentFinishedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "subagent_finished";
  /** The task as the caller wrote it. */
  description: string;
  /** The calling agent's task id (None when the main agent called). */
  parent_task_id: string | null;
  /** The calling AI message. */
  turn_id: string | null;
  /** The call's position among that message's tool calls. */
  call_index: number;
  /** How the task ended. */
  status: "ok" | "error" | "interrupted";
  /** The report text the caller gets. */
  result: string;
  /** The structured response as JSON data, or None. */
  structured: Record<string, unknown> | null;
  /** Input tokens summed over the task's model calls. */
  tokens_in: number;
  /** Output tokens summed over the task's model calls. */
  tokens_out: number;
  /** Wall time of the task. */
  seconds: number;
  /** Files the subagent wrote. */
  files_written: string[];
  /** Its conversation under `/subagents/` (None if it could not be saved). */
  transcript_path: string | null;
  /** The error text when it failed, else None. */
  error: string | null;
}

/** A `task` call started its subagent; `agent` and `task_id` are the subagent's and `time` is when it started. */
export interface SubagentStartedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "subagent_started";
  /** The task as the caller wrote it. */
  description: string;
  /** The calling agent's task id (None when the main agent called). */
  parent_task_id: string | null;
  /** The calling AI message. */
  turn_id: string | null;
  /** The call's position among that message's tool calls. */
  call_index: number;
}

/** Older messages were folded into a summary (the checkpoint keeps them all). */
export interface SummarizedEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "summarized";
  /** trigger: the window's trigger was passed; history: the older part of the conversation passed its share of the window; compact: the agent asked; overflow: the provider refused a request as too long. */
  reason: "trigger" | "history" | "compact" | "overflow";
  /** This is the thread's nth summary. */
  count: number;
  /** Tokens of the request before. */
  tokens_before: number;
  /** Tokens of the request after. */
  tokens_after: number;
  /** Messages the summary stands for. */
  messages_folded: number;
  /** The `/conversation_history/` file holding them in full. */
  transcript_path: string;
  /** Approximate tokens of the summary. */
  tokens_summary: number;
  /** Approximate tokens of the summarizer's request. */
  tokens_summarizer: number;
}

/** The agent wrote its todo list. */
export interface TodosEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "todos";
  /** The list as written: `{content, status}` each. */
  todos: Array<Record<string, unknown>>;
}

/** A tool call about to run. */
export interface ToolCallEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "tool_call";
  /** The tool's name. */
  tool: string;
  /** The id the model gave the call. */
  tool_call_id: string | null;
  /** The arguments, shortened for display (`summarize_args`: long strings become `{"chars", "head"}`, long lists `{"items", "head"}`); the whole ones are in the reply. */
  args: Record<string, unknown>;
}

/** What a tool returned. */
export interface ToolResultEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "tool_result";
  /** The tool's name. */
  tool: string;
  /** The id of the call it answers. */
  tool_call_id: string | null;
  /** The tool message's text as the tool returned it, before any offloading. */
  content: string;
  /** Characters of `content`. */
  chars: number;
  /** Wall time of the tool. */
  seconds: number;
  /** The error text when the tool failed, else None. */
  error: string | null;
}

/** Something the user should know; a repeated warning is given once per run. */
export interface WarningEvent {
  /** The schema version the event follows (`SCHEMA_VERSION`). */
  schema: 1;
  /** When it happened, in seconds since the epoch (every time in every event is epoch seconds). */
  time: number;
  /** The agent it belongs to: `"main"`, or the subagent's name. */
  agent: string;
  /** None for the main agent; the task id for the events of a subagent's own steps. */
  task_id: string | null;
  /** The model call of the agent's run it belongs to (1-based; 0 before the first call). */
  step: number;
  /** The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it. */
  run_id?: string;
  /** The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it. */
  seq?: number;
  type: "warning";
  /** What happened and what to do. */
  message: string;
  /** What it is about: a file, a folder, an option (`context_window` for the default window). */
  source: string | null;
}

/** Any run event; `type` says which. */
export type RunEvent =
  | AgedEvent
  | AnswerEvent
  | ApprovalDecidedEvent
  | ApprovalRequestedEvent
  | BudgetDecidedEvent
  | BudgetReachedEvent
  | CellProposedEvent
  | CompactionRefusedEvent
  | ContextEvent
  | ContextOverflowEvent
  | FileWrittenEvent
  | InputOffloadedEvent
  | MemoryLoadedEvent
  | ModelCallEvent
  | ModelRetryEvent
  | OffloadedEvent
  | PromptEvent
  | RunFinishedEvent
  | RunStartedEvent
  | SkillLoadedEvent
  | SubagentFinishedEvent
  | SubagentStartedEvent
  | SummarizedEvent
  | TodosEvent
  | ToolCallEvent
  | ToolResultEvent
  | WarningEvent;

/** The `type` of every run event. */
export type RunEventType =
  | "aged"
  | "answer"
  | "approval_decided"
  | "approval_requested"
  | "budget_decided"
  | "budget_reached"
  | "cell_proposed"
  | "compaction_refused"
  | "context"
  | "context_overflow"
  | "file_written"
  | "input_offloaded"
  | "memory_loaded"
  | "model_call"
  | "model_retry"
  | "offloaded"
  | "prompt"
  | "run_finished"
  | "run_started"
  | "skill_loaded"
  | "subagent_finished"
  | "subagent_started"
  | "summarized"
  | "todos"
  | "tool_call"
  | "tool_result"
  | "warning";
