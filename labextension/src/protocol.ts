/**
 * The sidebar's comm protocol, version 1: generated from the Python definitions in
 * `jupyter_deepagent/jupyter/sidebar/protocol.py` by
 * `python -m jupyter_deepagent.jupyter.sidebar.typescript`.
 * Do not edit by hand; a test checks that this file matches the Python protocol.
 */

import type { RunEventType } from "./events";

export type { RunEventType };

/** Bumped when a message changes meaning; both sides refuse another version with a message. */
export const PROTOCOL_VERSION = 1;

/** The comm target `%load_ext jupyter_deepagent` registers, and the frontend's announce target. */
export const TARGET = "jupyter_deepagent.sidebar";

/** What the sidebar asks: the thread list, a run's snapshot, or the text of a run's file. */
export interface RequestMessage {
  protocol: number;
  type: "request";
  /** A string the reply echoes, at most 64 characters. */
  id: string;
  want: "threads" | "snapshot" | "file";
  /** For `snapshot`: a thread name, or null for the kernel's current thread. */
  thread?: string | null;
  /** For `snapshot`: 1 = the thread's first run in this kernel, -1 = its last (the default). */
  run?: number;
  /** For `file`: a virtual path the snapshot's `files` lists. */
  path?: string;
}

/** A thread with runs in this kernel. */
export interface ThreadInfo {
  name: string;
  runs: number;
  /** A run of this thread is going on. */
  live: boolean;
}

/** The threads with runs in this kernel (in reply, or unsolicited when a run starts or ends). */
export interface ThreadsMessage {
  protocol: number;
  type: "threads";
  id: string | null;
  threads: ThreadInfo[];
  current: string | null;
}

/** A run's inspector (in reply, or unsolicited and live while a `%%agent` cell runs). */
export interface SnapshotMessage {
  protocol: number;
  type: "snapshot";
  id: string | null;
  thread: string;
  run: number;
  runs: number;
  live: boolean;
  /** The inspector snapshot (`jupyter_deepagent.trace.inspector.snapshot`), JSON. */
  snapshot: Record<string, unknown>;
  /** The inspector's static view of the snapshot, rendered by the kernel from escaped data. */
  html: string;
  /** Virtual path -> path relative to the notebook's folder, for files on disk. */
  files: Record<string, string>;
}

/** The short scalar fields of a run event the kernel forwards (text cut to 200 characters). */
export interface RunEventFields {
  /** One of the event schema's types (`RunEventType` in the TypeScript). */
  type: RunEventType;
  step?: number | null;
  agent?: string | null;
  task_id?: string | null;
  tool?: string | null;
  tool_call_id?: string | null;
  skill?: string | null;
  path?: string | null;
  tokens?: number | null;
  tokens_in?: number | null;
  tokens_out?: number | null;
  status?: string | null;
  message?: string | null;
  kind?: string | null;
}

/** One run event as it happens, for the panel's live line. */
export interface EventMessage {
  protocol: number;
  type: "event";
  thread: string;
  event: RunEventFields;
}

/** The text of a run's file on disk (for files JupyterLab's server will not open: hidden). */
export interface FileMessage {
  protocol: number;
  type: "file";
  id: string | null;
  path: string;
  local: string;
  text: string;
  truncated: boolean;
}

/** The reply to a request the kernel could not read or answer. */
export interface ErrorMessage {
  protocol: number;
  type: "error";
  id: string | null;
  message: string;
}

/** The kernel's announcement when `%load_ext` runs: a waiting sidebar connects. */
export interface HelloMessage {
  protocol: number;
  type: "hello";
}

/** Any message the kernel sends; `type` says which. */
export type KernelMessage =
  | ThreadsMessage
  | SnapshotMessage
  | EventMessage
  | FileMessage
  | ErrorMessage
  | HelloMessage;
