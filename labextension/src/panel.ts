/**
 * The "Agent inspector" panel: what the sidebar shows. It knows nothing of kernels; `KernelLink`
 * feeds it messages and states, and it calls back when the user picks a run or opens a file.
 *
 * The views are the inspector's own HTML, rendered by the kernel (the same view a saved notebook
 * shows); the panel only places it, keeps the open tab and the open rows across live updates, and
 * adds an "open" button to files that are on disk.
 */

import { Widget } from '@lumino/widgets';

import { inspectorFragment } from './sanitize';
import {
  ErrorMessage,
  EventMessage,
  SnapshotMessage,
  ThreadsMessage
} from './protocol';

/** Where the panel stands with the active notebook's kernel. */
export type LinkState =
  | 'no-notebook'
  | 'no-kernel'
  | 'connecting'
  | 'not-loaded'
  | 'connected'
  | 'restarting'
  | 'dead';

const LOAD_HINT = '%load_ext jupyter_deepagent';

const STATE_TEXT: { [state in LinkState]: string } = {
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

/** The sidebar panel. */
export class InspectorPanel extends Widget {
  /** Called when the user picks a thread (null: follow the current one) or a run (-1: last). */
  onSelect: (thread: string | null, run: number) => void = () => undefined;
  /** Called when the user opens a run's file: its path relative to the notebook's folder, and
   * its virtual path. */
  onOpenFile: (local: string, virtual: string) => void = () => undefined;

  state: LinkState = 'no-notebook';
  thread: string | null = null;
  run = -1;

  private _status: HTMLElement;
  private _notebook: HTMLElement;
  private _threadPicker: HTMLSelectElement;
  private _runPicker: HTMLSelectElement;
  private _live: HTMLElement;
  private _error: HTMLElement;
  private _body: HTMLElement;
  private _shown: SnapshotMessage | null = null;

  constructor() {
    super();
    this.id = 'jupyter-deepagent-inspector';
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
      this.thread = this._threadPicker.value || null;
      this.run = -1;
      this.onSelect(this.thread, this.run);
    });
    this._runPicker.addEventListener('change', () => {
      this.run = Number(this._runPicker.value) || -1;
      this.onSelect(this.thread, this.run);
    });
    this.setState('no-notebook');
  }

  /** The notebook the panel follows (its path), or null when none is active. */
  setNotebook(path: string | null): void {
    this._notebook.textContent = path ? path.split('/').pop() || path : '';
    this._notebook.title = path || '';
    this.thread = null;
    this.run = -1;
    this._threadPicker.innerHTML = '';
    this._runPicker.innerHTML = '';
    this._body.innerHTML = '';
    this._live.textContent = '';
    this._shown = null;
    this._showError(null);
    if (!path) {
      this.setState('no-notebook');
    }
  }

  /** Say where the panel stands; `detail` is added to the state's text. */
  setState(state: LinkState, detail = ''): void {
    this.state = state;
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
        " in a cell of this notebook: the inspector connects by itself once the kernel " +
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
  showThreads(message: ThreadsMessage): void {
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
    if (this.thread && !message.threads.some(t => t.name === this.thread)) {
      this.thread = null;
    }
    picker.value = this.thread || '';
    if (!message.threads.length) {
      this._body.innerHTML = '';
      const empty = document.createElement('div');
      empty.className = 'jdp-empty';
      empty.textContent = 'No %%agent run in this kernel yet: run an %%agent cell.';
      this._body.append(empty);
      this._shown = null;
    }
  }

  /** Whether a snapshot is the one the user's choice asks for. */
  wants(message: SnapshotMessage): boolean {
    if (this.thread && this.thread !== message.thread) {
      return false;
    }
    return this.run === -1 ? message.run === message.runs : this.run === message.run;
  }

  /** Show a run's inspector (when it is the run the user's choice asks for). */
  showSnapshot(message: SnapshotMessage): void {
    if (!this.wants(message)) {
      return;
    }
    this._showError(null);
    this._fillRuns(message);
    const kept = keepState(this._body);
    this._body.replaceChildren(inspectorFragment(message.html));
    restoreState(this._body, kept);
    this._linkFiles(message.files);
    this._shown = message;
    this.node.dataset.live = message.live ? 'yes' : 'no';
    if (!message.live) {
      this._live.textContent = '';
    }
  }

  /** The live line: the last event of the running cell. */
  showEvent(message: EventMessage): void {
    if (this.thread && this.thread !== message.thread) {
      return;
    }
    const event = message.event;
    const what = [event.tool, event.skill, event.path].filter(Boolean).join(' ');
    const agent = event.agent && event.agent !== 'main' ? ` (${event.agent})` : '';
    this._live.textContent =
      `running · thread ${message.thread} · step ${event.step ?? '?'} · ` +
      `${event.type}${what ? ' ' + what : ''}${agent}`;
  }

  /** A note of the panel's own (a file JupyterLab could not open), shown like an error. */
  showNote(text: string): void {
    this._error.textContent = text;
    this._error.classList.toggle('jdp-hidden', !text);
  }

  /** An error reply from the kernel. */
  showError(message: ErrorMessage): void {
    this._showError(message.message);
  }

  /** The message shown, for tests and the link. */
  get shown(): SnapshotMessage | null {
    return this._shown;
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
        run === message.runs
          ? `${run} (last${message.live ? ', running' : ''})`
          : String(run);
      picker.append(option);
    }
    picker.value = this.run === -1 ? '-1' : String(this.run);
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
        this.onOpenFile(local, virtual);
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
