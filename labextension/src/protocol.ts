/**
 * The sidebar's comm protocol (version 1), the TypeScript twin of
 * `jupyter_deepagent/jupyter/sidebar/protocol.py`, whose docstring is the reference.
 *
 * The run-event types come from `events.ts`, generated from the Python event schema.
 */

import type { RunEventType } from './events';

export type { RunEventType };

/** Bumped when a message changes meaning; both sides refuse another version. */
export const PROTOCOL_VERSION = 1;

/** The comm target `%load_ext jupyter_deepagent` registers; the kernel announces itself on it. */
export const TARGET = 'jupyter_deepagent.inspector';

/** The short scalar fields of a run event the kernel forwards (text cut to 200 characters). */
export interface RunEventFields {
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
  subagent?: string | null;
  kind?: string | null;
}

/** What the sidebar asks: the thread list, or a run's snapshot (run 1 = first, -1 = last). */
export interface RequestMessage {
  protocol: number;
  type: 'request';
  id: string;
  want: 'threads' | 'snapshot' | 'file';
  thread?: string | null;
  run?: number;
  /** For `file`: a virtual path the snapshot's `files` lists. */
  path?: string;
}

export interface ThreadInfo {
  name: string;
  runs: number;
  live: boolean;
}

export interface ThreadsMessage {
  protocol: number;
  type: 'threads';
  id: string | null;
  threads: ThreadInfo[];
  current: string | null;
}

export interface SnapshotMessage {
  protocol: number;
  type: 'snapshot';
  id: string | null;
  thread: string;
  run: number;
  runs: number;
  live: boolean;
  /** The inspector snapshot (`jupyter_deepagent.trace.inspector.snapshot`), JSON. */
  snapshot: { [key: string]: unknown };
  /** The inspector's static view of the snapshot, rendered by the kernel from escaped data. */
  html: string;
  /** Virtual path -> path relative to the notebook's folder, for files on disk. */
  files: { [virtual: string]: string };
}

/** The text of a run's file on disk (for files JupyterLab's server will not open: hidden). */
export interface FileMessage {
  protocol: number;
  type: 'file';
  id: string | null;
  path: string;
  local: string;
  text: string;
  truncated: boolean;
}

export interface EventMessage {
  protocol: number;
  type: 'event';
  thread: string;
  event: RunEventFields;
}

export interface ErrorMessage {
  protocol: number;
  type: 'error';
  id: string | null;
  message: string;
}

export interface HelloMessage {
  protocol: number;
  type: 'hello';
}

export type KernelMessage =
  | ThreadsMessage
  | SnapshotMessage
  | EventMessage
  | FileMessage
  | ErrorMessage
  | HelloMessage;

function isObject(value: unknown): value is { [key: string]: unknown } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Check a message from the kernel; returns it typed, or a string saying what is wrong.
 */
export function readKernelMessage(data: unknown): KernelMessage | string {
  if (!isObject(data)) {
    return 'the kernel sent something that is not a JSON object';
  }
  if (data.protocol !== PROTOCOL_VERSION) {
    return (
      `the kernel speaks sidebar protocol ${String(data.protocol)}, this sidebar ` +
      `${PROTOCOL_VERSION}: reinstall jupyter-deepagent in the kernel's environment and reload`
    );
  }
  switch (data.type) {
    case 'threads':
      return Array.isArray(data.threads) ? (data as unknown as ThreadsMessage) : 'bad threads';
    case 'snapshot':
      return typeof data.html === 'string' && typeof data.thread === 'string'
        ? (data as unknown as SnapshotMessage)
        : 'bad snapshot';
    case 'file':
      return typeof data.text === 'string' && typeof data.path === 'string'
        ? (data as unknown as FileMessage)
        : 'bad file';
    case 'event':
      return isObject(data.event) ? (data as unknown as EventMessage) : 'bad event';
    case 'error':
      return typeof data.message === 'string' ? (data as unknown as ErrorMessage) : 'bad error';
    case 'hello':
      return data as unknown as HelloMessage;
    default:
      return `unknown message type ${String(data.type).slice(0, 40)}`;
  }
}
