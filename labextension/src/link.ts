/**
 * `KernelLink`: the comm between the panel and the active notebook's kernel.
 *
 * It opens a comm on the target `%load_ext jupyter_deepagent` registers and asks for the thread
 * list. No answer within `replyTimeout` (or the kernel closing the comm: no such target) means the
 * extension is not loaded, and the panel says how to load it. The link also listens on the same
 * target for the kernel's announcement, sent when the extension loads, and then connects: after
 * `%load_ext`, and after a restart once the extension is loaded again. Kernel status changes
 * (restarting, dead) are shown as they happen.
 *
 * Only small structural interfaces of JupyterLab's session context and kernel are used, so the
 * link runs against a fake kernel in the unit tests.
 */

import { ISignal } from '@lumino/signaling';

import { InspectorPanel } from './panel';
import {
  FileMessage,
  PROTOCOL_VERSION,
  RequestMessage,
  TARGET,
  readKernelMessage
} from './protocol';

export interface CommLike {
  onMsg: (msg: any) => void | PromiseLike<void>;
  onClose: (msg: any) => void | PromiseLike<void>;
  open(data?: unknown): unknown;
  send(data: unknown): unknown;
  close(data?: unknown): unknown;
  readonly isDisposed?: boolean;
}

export interface KernelLike {
  readonly id: string;
  createComm(targetName: string): CommLike;
  registerCommTarget(targetName: string, callback: (comm: any, msg: any) => void): void;
}

export interface SessionContextLike {
  readonly session: { readonly kernel: KernelLike | null } | null;
  readonly statusChanged: ISignal<any, string>;
  readonly kernelChanged: ISignal<any, any>;
}

/** Milliseconds to wait for the kernel's first reply before saying the extension is not loaded. */
export const REPLY_TIMEOUT = 4000;

export class KernelLink {
  constructor(
    readonly panel: InspectorPanel,
    readonly replyTimeout = REPLY_TIMEOUT
  ) {
    panel.onSelect = (thread, run) => this.requestSnapshot(thread, run);
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
    this.panel.setNotebook(context ? path : null);
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
      this.panel.setState('no-kernel');
      return;
    }
    this._listen(kernel);
    this.panel.setState('connecting');
    const comm = kernel.createComm(TARGET);
    this._comm = comm;
    this._answered = false;
    comm.onMsg = (msg: { content: { data: unknown } }) => {
      if (this._comm === comm) {
        this._receive(msg.content.data);
      }
    };
    comm.onClose = () => {
      if (this._comm === comm) {
        this._comm = null;
        this._clearTimer();
        if (this.panel.state === 'connecting' || this.panel.state === 'connected') {
          this.panel.setState('not-loaded', detail);
        }
      }
    };
    this._timer = setTimeout(() => {
      this._timer = null;
      if (this._comm === comm && !this._answered) {
        this.panel.setState('not-loaded', detail);
      }
    }, this.replyTimeout);
    try {
      comm.open(this._request('threads'));
    } catch (error) {
      this._comm = null;
      this.panel.setState('not-loaded', detail);
    }
  }

  /** Called with the text of a file asked for with `requestFile`. */
  onFile: (message: FileMessage) => void = () => undefined;

  /** Ask the kernel for the text of a run's file (by its virtual path). */
  requestFile(path: string): void {
    this._send({ ...this._request('file'), path });
  }

  /** Ask for a run's snapshot (thread null: the kernel's current thread; run -1: the last). */
  requestSnapshot(thread: string | null, run: number): void {
    this._send({ ...this._request('snapshot'), thread, run });
  }

  private _context: SessionContextLike | null = null;
  private _comm: CommLike | null = null;
  private _answered = false;
  private _timer: ReturnType<typeof setTimeout> | null = null;
  private _counter = 0;
  private _listened = new WeakSet<object>();
  private _restarted = false;

  private _request(want: RequestMessage['want']): RequestMessage {
    this._counter += 1;
    return { protocol: PROTOCOL_VERSION, type: 'request', id: `r${this._counter}`, want };
  }

  private _send(message: RequestMessage): void {
    try {
      this._comm?.send(message);
    } catch (error) {
      this.panel.setState('not-loaded');
    }
  }

  private _receive(data: unknown): void {
    const message = readKernelMessage(data);
    if (typeof message === 'string') {
      this.panel.showError({ protocol: PROTOCOL_VERSION, type: 'error', id: null, message });
      return;
    }
    if (!this._answered) {
      this._answered = true;
      this._clearTimer();
      this.panel.setState('connected');
      this._restarted = false;
    }
    switch (message.type) {
      case 'threads':
        this.panel.showThreads(message);
        if (message.threads.length && (message.id !== null || !this.panel.shown)) {
          this.requestSnapshot(this.panel.thread, this.panel.run);
        }
        break;
      case 'snapshot':
        this.panel.showSnapshot(message);
        break;
      case 'file':
        this.onFile(message);
        break;
      case 'event':
        this.panel.showEvent(message);
        break;
      case 'error':
        this.panel.showError(message);
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
      if (current === kernel && this.panel.state !== 'connected') {
        this.connect();
      }
    });
  }

  private _onStatus(_: unknown, status: string): void {
    if (status === 'restarting' || status === 'autorestarting') {
      this._drop();
      this._restarted = true;
      this.panel.setState('restarting');
    } else if (status === 'dead') {
      this._drop();
      this._restarted = true;
      this.panel.setState('dead');
    } else if (status === 'idle' && this._restarted && !this._comm) {
      this.connect('The kernel restarted.');
    }
  }

  private _onKernel(): void {
    this.connect(this._restarted ? 'The kernel restarted.' : '');
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
      } catch (error) {
        // the kernel is gone; nothing to close
      }
    }
  }
}
