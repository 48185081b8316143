/**
 * `SidebarModel`: the sidebar's end of the comm with the active notebook's kernel.
 *
 * It opens a comm on the target `%load_ext jupyter_deepagent` registers and asks for the thread
 * list. No answer within `replyTimeout` (or the kernel closing the comm: no such target) means the
 * extension is not loaded, and the state says so. The model also listens on the same target for
 * the kernel's announcement, sent when the extension loads, and then connects: after `%load_ext`,
 * and after a restart once the extension is loaded again. Kernel status changes (restarting, dead)
 * become states as they happen.
 *
 * It knows no view: it holds the user's choice of thread and run, and says what changed through
 * Lumino signals (`stateChanged`, `notebookChanged`, `threadsChanged`, `snapshotChanged`,
 * `eventReceived`, `errorReceived`, `fileReceived`), which `SidebarPanel` subscribes to. Only small
 * structural slices of JupyterLab's session context and kernel are used, so the model runs
 * against a fake kernel in the unit tests.
 */

import type { Kernel, KernelMessage as JupyterMessage } from '@jupyterlab/services';
import type { JSONValue } from '@lumino/coreutils';
import type { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { readKernelMessage } from './messages';
import {
  EventMessage,
  FileMessage,
  PROTOCOL_VERSION,
  RequestMessage,
  SnapshotMessage,
  TARGET,
  ThreadsMessage
} from './protocol';

/** The part of a kernel's comm the model uses. */
export type CommLike = Pick<Kernel.IComm, 'onMsg' | 'onClose' | 'open' | 'send' | 'close'> & {
  readonly isDisposed?: boolean;
};

/** The part of a kernel connection the model uses. */
export interface KernelLike {
  readonly id: string;
  createComm(targetName: string): CommLike;
  registerCommTarget(
    targetName: string,
    callback: (comm: Kernel.IComm, msg: JupyterMessage.ICommOpenMsg) => void | PromiseLike<void>
  ): void;
}

/** The part of a notebook's session context the model uses. */
export interface SessionContextLike {
  readonly session: { readonly kernel: KernelLike | null } | null;
  readonly statusChanged: ISignal<unknown, Kernel.Status>;
  readonly kernelChanged: ISignal<unknown, unknown>;
}

/** Where the sidebar stands with the active notebook's kernel. */
export type ConnectionState =
  'no-notebook' | 'no-kernel' | 'connecting' | 'not-loaded' | 'connected' | 'restarting' | 'dead';

/** A state, and a sentence added to its text (such as "The kernel restarted."). */
export interface StateChange {
  state: ConnectionState;
  detail: string;
}

/** Milliseconds to wait for the kernel's first reply before saying the extension is not loaded. */
export const REPLY_TIMEOUT = 4000;

const RESTARTED = 'The kernel restarted.';

export class SidebarModel implements IDisposable {
  constructor(readonly replyTimeout = REPLY_TIMEOUT) {}

  /** The connection's state changed. */
  get stateChanged(): ISignal<this, StateChange> {
    return this._stateChanged;
  }
  /** The model follows another notebook (its path; null: no notebook is active). */
  get notebookChanged(): ISignal<this, string | null> {
    return this._notebookChanged;
  }
  /** The kernel sent its thread list (the chosen thread is still one of them, or null). */
  get threadsChanged(): ISignal<this, ThreadsMessage> {
    return this._threadsChanged;
  }
  /** A snapshot of the run the user's choice asks for arrived (others are not passed on). */
  get snapshotChanged(): ISignal<this, SnapshotMessage> {
    return this._snapshotChanged;
  }
  /** A live event of the chosen thread (or of any, when following the current one). */
  get eventReceived(): ISignal<this, EventMessage> {
    return this._eventReceived;
  }
  /** The kernel answered with an error, or sent something the sidebar cannot read. */
  get errorReceived(): ISignal<this, string> {
    return this._errorReceived;
  }
  /** The text of a file asked for with `requestFile`. */
  get fileReceived(): ISignal<this, FileMessage> {
    return this._fileReceived;
  }

  get state(): ConnectionState {
    return this._state;
  }
  /** The chosen thread (null: the kernel's current thread). */
  get thread(): string | null {
    return this._thread;
  }
  /** The chosen run (1 = the thread's first; -1: its last). */
  get run(): number {
    return this._run;
  }
  /** The snapshot shown for the user's choice, or null. */
  get shown(): SnapshotMessage | null {
    return this._shown;
  }
  get isDisposed(): boolean {
    return this._disposed;
  }

  /** Follow another notebook's session (null: no notebook is active). */
  attach(context: SessionContextLike | null, path: string | null): void {
    if (this._context === context) {
      return;
    }
    if (this._context) {
      this._context.statusChanged.disconnect(this._onStatus, this);
      this._context.kernelChanged.disconnect(this._onKernel, this);
    }
    this._drop();
    this._context = context;
    const notebook = context ? path : null;
    this._thread = null;
    this._run = -1;
    this._shown = null;
    this._notebookChanged.emit(notebook);
    if (!notebook) {
      this._setState('no-notebook');
    }
    if (!context) {
      return;
    }
    context.statusChanged.connect(this._onStatus, this);
    context.kernelChanged.connect(this._onKernel, this);
    this.connect();
  }

  /** Open a comm to the current kernel and ask for its threads. */
  connect(detail = ''): void {
    this._drop();
    const kernel = this._context?.session?.kernel ?? null;
    if (!kernel) {
      this._setState('no-kernel');
      return;
    }
    this._listen(kernel);
    this._setState('connecting');
    const comm = kernel.createComm(TARGET);
    this._comm = comm;
    this._answered = false;
    comm.onMsg = msg => {
      if (this._comm === comm) {
        this._receive(msg.content.data);
      }
    };
    comm.onClose = () => {
      if (this._comm === comm) {
        this._comm = null;
        this._clearTimer();
        if (this._state === 'connecting' || this._state === 'connected') {
          this._setState('not-loaded', detail);
        }
      }
    };
    this._timer = setTimeout(() => {
      this._timer = null;
      if (this._comm === comm && !this._answered) {
        this._setState('not-loaded', detail);
      }
    }, this.replyTimeout);
    try {
      comm.open(json(this._request('threads')));
    } catch {
      this._comm = null;
      this._setState('not-loaded', detail);
    }
  }

  /** The user picked a thread (null: follow the current one) or a run (-1: the last). */
  select(thread: string | null, run: number): void {
    this._thread = thread;
    this._run = run;
    this.requestSnapshot(thread, run);
  }

  /** Whether a snapshot is the one the user's choice asks for. */
  wants(message: SnapshotMessage): boolean {
    if (this._thread && this._thread !== message.thread) {
      return false;
    }
    return this._run === -1 ? message.run === message.runs : this._run === message.run;
  }

  /** Ask the kernel for the text of a run's file (by its virtual path). */
  requestFile(path: string): void {
    this._send({ ...this._request('file'), path });
  }

  /** Ask for a run's snapshot (thread null: the kernel's current thread; run -1: the last). */
  requestSnapshot(thread: string | null, run: number): void {
    this._send({ ...this._request('snapshot'), thread, run });
  }

  /** Close the comm, leave the session and disconnect every signal. */
  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    if (this._context) {
      this._context.statusChanged.disconnect(this._onStatus, this);
      this._context.kernelChanged.disconnect(this._onKernel, this);
      this._context = null;
    }
    this._drop();
    Signal.clearData(this);
  }

  private _stateChanged = new Signal<this, StateChange>(this);
  private _notebookChanged = new Signal<this, string | null>(this);
  private _threadsChanged = new Signal<this, ThreadsMessage>(this);
  private _snapshotChanged = new Signal<this, SnapshotMessage>(this);
  private _eventReceived = new Signal<this, EventMessage>(this);
  private _errorReceived = new Signal<this, string>(this);
  private _fileReceived = new Signal<this, FileMessage>(this);
  private _state: ConnectionState = 'no-notebook';
  private _thread: string | null = null;
  private _run = -1;
  private _shown: SnapshotMessage | null = null;
  private _disposed = false;
  private _context: SessionContextLike | null = null;
  private _comm: CommLike | null = null;
  private _answered = false;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _counter = 0;
  private _listened = new WeakSet<object>();
  private _restarted = false;

  private _setState(state: ConnectionState, detail = ''): void {
    this._state = state;
    this._stateChanged.emit({ state, detail });
  }

  private _request(want: RequestMessage['want']): RequestMessage {
    this._counter += 1;
    return { protocol: PROTOCOL_VERSION, type: 'request', id: `r${this._counter}`, want };
  }

  private _send(message: RequestMessage): void {
    try {
      this._comm?.send(json(message));
    } catch {
      this._setState('not-loaded');
    }
  }

  private _receive(data: unknown): void {
    const message = readKernelMessage(data);
    if (typeof message === 'string') {
      this._errorReceived.emit(message);
      return;
    }
    if (!this._answered) {
      this._answered = true;
      this._clearTimer();
      this._setState('connected');
      this._restarted = false;
    }
    switch (message.type) {
      case 'threads':
        if (this._thread && !message.threads.some(t => t.name === this._thread)) {
          this._thread = null;
        }
        if (!message.threads.length) {
          this._shown = null;
        }
        this._threadsChanged.emit(message);
        if (message.threads.length && (message.id !== null || !this._shown)) {
          this.requestSnapshot(this._thread, this._run);
        }
        break;
      case 'snapshot':
        if (this.wants(message)) {
          this._shown = message;
          this._snapshotChanged.emit(message);
        }
        break;
      case 'file':
        this._fileReceived.emit(message);
        break;
      case 'event':
        if (!this._thread || this._thread === message.thread) {
          this._eventReceived.emit(message);
        }
        break;
      case 'error':
        this._errorReceived.emit(message.message);
        break;
      default:
        break;
    }
  }

  /** Register the announce target once per kernel connection: `%load_ext` reconnects us. */
  private _listen(kernel: KernelLike): void {
    if (this._listened.has(kernel)) {
      return;
    }
    this._listened.add(kernel);
    kernel.registerCommTarget(TARGET, () => {
      const current = this._context?.session?.kernel;
      if (current === kernel && this._state !== 'connected' && !this._disposed) {
        this.connect();
      }
    });
  }

  private _onStatus(_: unknown, status: Kernel.Status): void {
    if (status === 'restarting' || status === 'autorestarting') {
      this._drop();
      this._restarted = true;
      this._setState('restarting');
    } else if (status === 'dead') {
      this._drop();
      this._restarted = true;
      this._setState('dead');
    } else if (status === 'idle' && this._restarted && !this._comm) {
      this.connect(RESTARTED);
    }
  }

  private _onKernel(): void {
    this.connect(this._restarted ? RESTARTED : '');
  }

  private _clearTimer(): void {
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  private _drop(): void {
    this._clearTimer();
    const comm = this._comm;
    this._comm = null;
    if (comm && !comm.isDisposed) {
      try {
        comm.close();
      } catch {
        // the kernel is gone; nothing to close
      }
    }
  }
}

/** A request as the comm's JSON: its optional fields are left out, never undefined. */
function json(message: RequestMessage): JSONValue {
  return message as unknown as JSONValue;
}
