/**
 * `SidebarPanel`, the "Agent inspector" in the right sidebar: what the sidebar shows. It knows
 * nothing of kernels: it subscribes to a `SidebarModel`'s signals and shows their messages and
 * states, tells the model when the user picks a thread or a run, and emits `openFileRequested`
 * when the user opens a run's file.
 *
 * The views are the inspector's own HTML, rendered by the kernel (the same view a saved notebook
 * shows); the panel only places it, keeps the open tab and the open rows across live updates, and
 * adds an "open" button to files that are on disk.
 */

import { ISignal, Signal } from '@lumino/signaling';
import { Widget } from '@lumino/widgets';

import type { ConnectionState, SidebarModel, StateChange } from './model';
import { EventMessage, SnapshotMessage, ThreadsMessage } from './protocol';
import { inspectorFragment } from './sanitize';

const LOAD_HINT = '%load_ext jupyter_deepagent';

const STATE_TEXT: { [state in ConnectionState]: string } = {
  'no-notebook': 'Open a notebook to inspect its agent runs.',
  'no-kernel': 'This notebook has no kernel. Start one, then run %load_ext jupyter_deepagent.',
  connecting: 'Connecting to the kernel…',
  'not-loaded':
    "This notebook's kernel has not loaded jupyter-deepagent. Run %load_ext jupyter_deepagent " +
    'in a cell: the inspector connects by itself.',
  connected: 'Connected to the kernel.',
  restarting: 'The kernel is restarting… the inspector reconnects when it is back.',
  dead: 'The kernel died. Restart it (Kernel ▸ Restart Kernel); the inspector reconnects.'
};

/** A run's file the user asked to open: its path relative to the notebook's folder, and its
 * virtual path. */
export interface FileRequest {
  local: string;
  virtual: string;
}

/** The sidebar panel. */
export class SidebarPanel extends Widget {
  constructor(readonly model: SidebarModel) {
    super();
    this.id = 'jupyter-deepagent-sidebar';
    this.addClass('jdp-panel');
    this.title.caption = 'Agent inspector';
    const node = this.node;
    node.innerHTML =
      '<div class="jdp-header"><div class="jdp-title">Agent inspector</div>' +
      '<div class="jdp-notebook"></div><div class="jdp-status"></div>' +
      '<div class="jdp-pickers"><label>Thread <select class="jdp-thread"></select></label>' +
      '<label>Run <select class="jdp-run"></select></label></div>' +
      '<div class="jdp-live"></div></div><div class="jdp-error"></div>' +
      '<div class="jdp-body jdi"></div>';
    this._notebook = node.querySelector('.jdp-notebook') as HTMLElement;
    this._status = node.querySelector('.jdp-status') as HTMLElement;
    this._threadPicker = node.querySelector('.jdp-thread') as HTMLSelectElement;
    this._runPicker = node.querySelector('.jdp-run') as HTMLSelectElement;
    this._live = node.querySelector('.jdp-live') as HTMLElement;
    this._error = node.querySelector('.jdp-error') as HTMLElement;
    this._body = node.querySelector('.jdp-body') as HTMLElement;
    this._threadPicker.addEventListener('change', () => {
      this.model.select(this._threadPicker.value || null, -1);
    });
    this._runPicker.addEventListener('change', () => {
      this.model.select(this.model.thread, Number(this._runPicker.value) || -1);
    });
    model.stateChanged.connect(this._onState, this);
    model.notebookChanged.connect(this._onNotebook, this);
    model.threadsChanged.connect(this._onThreads, this);
    model.snapshotChanged.connect(this._onSnapshot, this);
    model.eventReceived.connect(this._onEvent, this);
    model.errorReceived.connect(this._onError, this);
    // `Widget.dispose` clears every connection of the panel (`Signal.clearData`): a disposed
    // panel no longer follows the model.
    this._onState(model, { state: model.state, detail: '' });
  }

  /** The user opened a run's file (with the "open" button of a file on disk). */
  get openFileRequested(): ISignal<this, FileRequest> {
    return this._openFileRequested;
  }

  private _openFileRequested = new Signal<this, FileRequest>(this);
  private _status: HTMLElement;
  private _notebook: HTMLElement;
  private _threadPicker: HTMLSelectElement;
  private _runPicker: HTMLSelectElement;
  private _live: HTMLElement;
  private _error: HTMLElement;
  private _body: HTMLElement;

  /** The notebook the panel follows (its path), or null when none is active. */
  private _onNotebook(_: SidebarModel, path: string | null): void {
    this._notebook.textContent = path ? path.split('/').pop() || path : '';
    this._notebook.title = path || '';
    this._threadPicker.innerHTML = '';
    this._runPicker.innerHTML = '';
    this._body.innerHTML = '';
    this._live.textContent = '';
    this._showError(null);
  }

  /** Say where the sidebar stands; the detail is added to the state's text. */
  private _onState(_: SidebarModel, { state, detail }: StateChange): void {
    this.node.dataset.state = state;
    this._status.textContent = detail ? `${STATE_TEXT[state]} ${detail}` : STATE_TEXT[state];
    this._status.classList.toggle('jdp-hint', state !== 'connected');
    if (state === 'not-loaded') {
      const code = document.createElement('code');
      code.textContent = LOAD_HINT;
      this._status.replaceChildren(
        ...(detail ? [detail + ' '] : []),
        'Run ',
        code,
        ' in a cell of this notebook: the inspector connects by itself once the kernel ' +
          'has loaded jupyter-deepagent.'
      );
    }
    const linked = state === 'connected';
    this.node.querySelector('.jdp-pickers')?.classList.toggle('jdp-hidden', !linked);
    if (!linked) {
      this._live.textContent = '';
    }
  }

  /** The thread list: fills the pickers (keeping the user's choice when it still exists). */
  private _onThreads(_: SidebarModel, message: ThreadsMessage): void {
    const picker = this._threadPicker;
    picker.innerHTML = '';
    const follow = document.createElement('option');
    follow.value = '';
    follow.textContent = message.current ? `current (${message.current})` : 'current';
    picker.append(follow);
    for (const thread of message.threads) {
      const option = document.createElement('option');
      option.value = thread.name;
      option.textContent = `${thread.name} · ${thread.runs} run${thread.runs === 1 ? '' : 's'}${
        thread.live ? ' · running' : ''
      }`;
      picker.append(option);
    }
    picker.value = this.model.thread || '';
    if (!message.threads.length) {
      this._body.innerHTML = '';
      const empty = document.createElement('div');
      empty.className = 'jdp-empty';
      empty.textContent = 'No %%agent run in this kernel yet: run an %%agent cell.';
      this._body.append(empty);
    }
  }

  /** Show a run's inspector (the model passes on only the run the user's choice asks for). */
  private _onSnapshot(_: SidebarModel, message: SnapshotMessage): void {
    this._showError(null);
    this._fillRuns(message);
    const kept = keepState(this._body);
    this._body.replaceChildren(inspectorFragment(message.html));
    restoreState(this._body, kept);
    this._linkFiles(message.files);
    this.node.dataset.live = message.live ? 'yes' : 'no';
    if (!message.live) {
      this._live.textContent = '';
    }
  }

  /** The live line: the last event of the running cell. */
  private _onEvent(_: SidebarModel, message: EventMessage): void {
    const event = message.event;
    const what = [event.tool, event.skill, event.path].filter(Boolean).join(' ');
    const agent = event.agent && event.agent !== 'main' ? ` (${event.agent})` : '';
    this._live.textContent =
      `running · thread ${message.thread} · step ${event.step ?? '?'} · ` +
      `${event.type}${what ? ' ' + what : ''}${agent}`;
  }

  /** An error reply from the kernel, or a message the sidebar could not read. */
  private _onError(_: SidebarModel, text: string): void {
    this._showError(text);
  }

  private _showError(text: string | null): void {
    this._error.textContent = text ? `The kernel said: ${text}` : '';
    this._error.classList.toggle('jdp-hidden', !text);
  }

  private _fillRuns(message: SnapshotMessage): void {
    const picker = this._runPicker;
    picker.innerHTML = '';
    for (let run = message.runs; run >= 1; run--) {
      const option = document.createElement('option');
      option.value = run === message.runs ? '-1' : String(run);
      option.textContent =
        run === message.runs ? `${run} (last${message.live ? ', running' : ''})` : String(run);
      picker.append(option);
    }
    picker.value = this.model.run === -1 ? '-1' : String(this.model.run);
  }

  private _linkFiles(files: { [virtual: string]: string }): void {
    for (const span of Array.from(this._body.querySelectorAll('.jdi-file .jdi-path'))) {
      const virtual = span.getAttribute('title') || span.textContent || '';
      const local = files[virtual];
      if (!local) {
        continue;
      }
      const button = document.createElement('button');
      button.className = 'jdp-open';
      button.textContent = 'open';
      button.title = `Open ${local} in JupyterLab`;
      button.dataset.path = local;
      button.addEventListener('click', event => {
        event.preventDefault();
        event.stopPropagation();
        this._openFileRequested.emit({ local, virtual });
      });
      span.prepend(button); // inside the path cell: the views' grid keeps its columns
    }
  }
}

interface KeptState {
  tab: number;
  open: Set<string>;
}

function rowKey(details: Element, index: number): string {
  const section = (details as HTMLElement).dataset?.section;
  const path = details.querySelector('.jdi-path')?.getAttribute('title');
  return section ? `s:${section}` : path ? `p:${path}` : `i:${index}`;
}

/** The open tab and open rows of the inspector, kept across a live update. */
function keepState(body: HTMLElement): KeptState {
  const radios = Array.from(body.querySelectorAll('.jdi-tabs > input[type=radio]'));
  const open = new Set<string>();
  body.querySelectorAll('details').forEach((details, index) => {
    if (details.open) {
      open.add(rowKey(details, index));
    }
  });
  return { tab: radios.findIndex(r => (r as HTMLInputElement).checked), open };
}

function restoreState(body: HTMLElement, kept: KeptState): void {
  const radios = Array.from(body.querySelectorAll('.jdi-tabs > input[type=radio]'));
  if (kept.tab > 0 && kept.tab < radios.length) {
    (radios[kept.tab] as HTMLInputElement).checked = true;
  }
  body.querySelectorAll('details').forEach((details, index) => {
    if (kept.open.has(rowKey(details, index))) {
      details.open = true;
    }
  });
}
