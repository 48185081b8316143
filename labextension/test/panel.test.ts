/**
 * The sidebar panel and its model against a fake kernel: what the user sees for a snapshot, an
 * error reply, a kernel without the extension, a restart and a dead kernel.
 */

import { Signal } from '@lumino/signaling';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

import { SessionContextLike, SidebarModel } from '../src/model';
import { FileRequest, SidebarPanel } from '../src/panel';
import { serverPath } from '../src/paths';
import { PROTOCOL_VERSION, SnapshotMessage, TARGET, ThreadsMessage } from '../src/protocol';

type Data = { [key: string]: unknown };

class FakeComm {
  opened: Data | undefined = undefined;
  sent: Data[] = [];
  closed = false;
  isDisposed = false;
  onMsg: (msg: { content: { data: unknown } }) => void = () => undefined;
  onClose: (msg: unknown) => void = () => undefined;
  open(data: Data) {
    this.opened = data;
  }
  send(data: Data) {
    this.sent.push(data);
  }
  close() {
    this.closed = true;
  }
  /** The kernel sends `data` on this comm. */
  reply(data: unknown) {
    this.onMsg({ content: { data } });
  }
}

class FakeKernel {
  comms: FakeComm[] = [];
  targets: { [name: string]: (comm: unknown, msg: unknown) => void } = {};
  constructor(readonly id = 'k1') {}
  createComm(target: string) {
    expect(target).toBe(TARGET);
    const comm = new FakeComm();
    this.comms.push(comm);
    return comm;
  }
  registerCommTarget(name: string, callback: (comm: unknown, msg: unknown) => void) {
    this.targets[name] = callback;
  }
  get last(): FakeComm {
    return this.comms[this.comms.length - 1];
  }
}

class FakeSession {
  statusChanged = new Signal<this, string>(this);
  kernelChanged = new Signal<this, unknown>(this);
  session: { kernel: FakeKernel | null };
  constructor(kernel: FakeKernel | null) {
    this.session = { kernel };
  }
}

/** The fakes stand in for JupyterLab's session context (their comms return no futures). */
const asContext = (session: FakeSession) => session as unknown as SessionContextLike;

const threads = (names: string[], current: string | null = names[0] ?? null): ThreadsMessage => ({
  protocol: PROTOCOL_VERSION,
  type: 'threads',
  id: 'r1',
  threads: names.map(name => ({ name, runs: 2, live: false })),
  current
});

const VIEW =
  '<style>.jdi-x{color:red}</style><details class="jdi jdi-static" open><summary>' +
  '<span class="jdi-summary">Inspector</span></summary><div class="jdi-tabs">' +
  '<input type="radio" name="t" id="t0" checked><label for="t0">Prompt</label>' +
  '<input type="radio" name="t" id="t1"><label for="t1">Files</label>' +
  '<div class="jdi-panel"><details class="jdi-row jdi-section" data-section="skills">' +
  '<summary><b>skills</b></summary><pre>station-report</pre></details></div>' +
  '<div class="jdi-panel"><details class="jdi-row jdi-file" data-kind="offloaded"><summary>' +
  '<span class="jdi-path" title="/large_tool_results/t-1.txt">/large_tool_results/t-1.txt</span>' +
  '</summary><pre>station,ground_temp_c</pre></details></div></div></details>';

function snapshot(fields: Partial<SnapshotMessage> = {}): SnapshotMessage {
  return {
    protocol: PROTOCOL_VERSION,
    type: 'snapshot',
    id: null,
    thread: 'analysis',
    run: 2,
    runs: 2,
    live: false,
    snapshot: {},
    html: VIEW,
    files: { '/large_tool_results/t-1.txt': '.deepagent/artifacts/large_tool_results/t-1.txt' },
    ...fields
  };
}

function text(panel: SidebarPanel): string {
  return panel.node.textContent || '';
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A panel on a model connected to a fake kernel, for the notebook `analysis.ipynb`. */
function linked(path = 'analysis.ipynb') {
  const model = new SidebarModel(1000);
  const panel = new SidebarPanel(model);
  const kernel = new FakeKernel();
  const session = new FakeSession(kernel);
  model.attach(asContext(session), path);
  return { panel, model, kernel, session };
}

/** A panel showing the last run of thread `analysis` (the kernel answered both requests). */
function showing(fields: Partial<SnapshotMessage> = {}) {
  const linkedUp = linked('work/analysis.ipynb');
  linkedUp.kernel.last.reply(threads(['analysis']));
  linkedUp.kernel.last.reply(snapshot(fields));
  return linkedUp;
}

function pick(select: Element | null, value: string): void {
  const picker = select as HTMLSelectElement;
  picker.value = value;
  picker.dispatchEvent(new Event('change'));
}

describe('the panel', () => {
  it('shows the inspector view of a snapshot, with an open button for files on disk', () => {
    const { panel } = showing();
    const opened: FileRequest[] = [];
    panel.openFileRequested.connect((_, file) => opened.push(file));
    expect(panel.node.querySelector('.jdi-section[data-section=skills]')).not.toBeNull();
    expect(text(panel)).toContain('station-report');
    expect(panel.node.querySelector('.jdp-notebook')?.textContent).toBe('analysis.ipynb');
    const runs = Array.from(panel.node.querySelectorAll('.jdp-run option')).map(o => o.textContent);
    expect(runs).toEqual(['2 (last)', '1']);

    const button = panel.node.querySelector('.jdi-file .jdp-open') as HTMLButtonElement;
    const row = panel.node.querySelector('.jdi-file') as HTMLDetailsElement;
    button.click();
    expect(opened).toEqual([
      {
        local: '.deepagent/artifacts/large_tool_results/t-1.txt',
        virtual: '/large_tool_results/t-1.txt'
      }
    ]);
    expect(row.open).toBe(false); // the click opens the file, not the row
  });

  it('drops anything that could run script from the HTML it is given', () => {
    const { panel } = showing({
      html:
        VIEW +
        '<img src="x" onerror="window.hacked=1"><script>window.hacked=2</script>' +
        '<div onclick="window.hacked=3" class="bad">x</div><a href="javascript:alert(1)">a</a>' +
        '<svg><foreignObject><iframe src="https://example.org"></iframe></foreignObject></svg>'
    });
    const body = panel.node.querySelector('.jdp-body') as HTMLElement;
    expect(body.querySelector('img, script, iframe, a, foreignObject')).toBeNull();
    expect(body.querySelector('.bad')?.getAttribute('onclick')).toBeNull();
    expect((window as { hacked?: number }).hacked).toBeUndefined();
    expect(body.querySelector('style')).not.toBeNull(); // the views' own style stays
  });

  it('keeps the open tab and open rows across a live update', () => {
    const { panel, kernel } = showing({ live: true });
    (panel.node.querySelector('#t1') as HTMLInputElement).checked = true;
    (panel.node.querySelector('.jdi-file') as HTMLDetailsElement).open = true;
    kernel.last.reply(snapshot({ live: true }));
    expect((panel.node.querySelector('#t1') as HTMLInputElement).checked).toBe(true);
    expect((panel.node.querySelector('.jdi-file') as HTMLDetailsElement).open).toBe(true);
  });

  it('shows an earlier run only when the user picked it', () => {
    const { panel, kernel } = showing();
    kernel.last.reply(snapshot({ run: 1, html: '<p class="first">first</p>' }));
    expect(panel.node.querySelector('.first')).toBeNull(); // following the last run
    pick(panel.node.querySelector('.jdp-run'), '1');
    expect(kernel.last.sent.at(-1)).toMatchObject({ want: 'snapshot', thread: null, run: 1 });
    kernel.last.reply(snapshot({ run: 1, html: '<p class="first">first</p>' }));
    expect(panel.node.querySelector('.first')).not.toBeNull();
    kernel.last.reply(snapshot({ live: true, runs: 3, run: 3 })); // a live push of another run
    expect(panel.node.querySelector('.first')).not.toBeNull();
  });

  it('asks for the last run of the thread the user picks', () => {
    const { panel, kernel } = linked();
    kernel.last.reply(threads(['analysis', 'second']));
    pick(panel.node.querySelector('.jdp-thread'), 'second');
    expect(kernel.last.sent.at(-1)).toMatchObject({ want: 'snapshot', thread: 'second', run: -1 });
    kernel.last.reply(snapshot({ html: '<p class="other">analysis</p>' })); // not the one picked
    expect(panel.node.querySelector('.other')).toBeNull();
    kernel.last.reply(snapshot({ thread: 'second', html: '<p class="picked">second</p>' }));
    expect(panel.node.querySelector('.picked')).not.toBeNull();
  });

  it("shows the kernel's error reply", () => {
    const { panel, kernel } = linked();
    kernel.last.reply({ protocol: 1, type: 'error', id: 'r2', message: 'thread "x" has no run' });
    expect(text(panel)).toContain('The kernel said: thread "x" has no run');
  });

  it('stops following the model once disposed', () => {
    const { panel, model, kernel } = showing();
    panel.dispose();
    kernel.last.reply(threads([]));
    expect(model.state).toBe('connected');
    expect(text(panel)).not.toContain('No %%agent run in this kernel yet');
  });
});

describe('the model', () => {
  it('asks for the threads, then the last run, and shows it', () => {
    const { panel, kernel } = linked();
    expect(panel.node.dataset.state).toBe('connecting');
    expect(kernel.last.opened).toMatchObject({ protocol: 1, type: 'request', want: 'threads' });
    kernel.last.reply(threads(['analysis']));
    expect(panel.node.dataset.state).toBe('connected');
    expect(kernel.last.sent.at(-1)).toMatchObject({ want: 'snapshot', thread: null, run: -1 });
    kernel.last.reply(snapshot());
    expect(text(panel)).toContain('station-report');
  });

  it('says how to load the extension when the kernel does not answer, and connects on load', () => {
    const { panel, kernel } = linked();
    vi.advanceTimersByTime(1500);
    expect(panel.node.dataset.state).toBe('not-loaded');
    expect(text(panel)).toContain('%load_ext jupyter_deepagent');

    kernel.targets[TARGET](new FakeComm(), {}); // %load_ext announces itself
    expect(kernel.comms.length).toBe(2);
    kernel.last.reply(threads([]));
    expect(panel.node.dataset.state).toBe('connected');
    expect(text(panel)).toContain('No %%agent run in this kernel yet');
  });

  it('says so at once when the kernel closes the comm (no such target)', () => {
    const { panel, kernel } = linked();
    kernel.last.onClose({});
    expect(panel.node.dataset.state).toBe('not-loaded');
  });

  it('shows a restart and a dead kernel, and reconnects when the kernel is back', () => {
    const { panel, kernel, session } = linked();
    kernel.last.reply(threads(['analysis']));
    const before = kernel.last;
    session.statusChanged.emit('restarting');
    expect(panel.node.dataset.state).toBe('restarting');
    expect(text(panel)).toContain('restarting');
    expect(before.closed).toBe(true);
    session.statusChanged.emit('idle');
    expect(panel.node.dataset.state).toBe('connecting');
    vi.advanceTimersByTime(1500); // the new kernel has not loaded the extension
    expect(text(panel)).toContain('The kernel restarted.');
    expect(text(panel)).toContain('%load_ext jupyter_deepagent');
    kernel.targets[TARGET](new FakeComm(), {});
    kernel.last.reply(threads([]));
    expect(panel.node.dataset.state).toBe('connected');

    session.statusChanged.emit('dead');
    expect(panel.node.dataset.state).toBe('dead');
    expect(text(panel)).toContain('The kernel died');
  });

  it('follows another notebook and shows live events of its run', () => {
    const { panel, model, kernel } = linked();
    kernel.last.reply(threads(['analysis']));
    const other = new FakeKernel('k2');
    model.attach(asContext(new FakeSession(other)), 'second.ipynb');
    expect(kernel.last.closed).toBe(true);
    expect(panel.node.querySelector('.jdp-notebook')?.textContent).toBe('second.ipynb');
    other.last.reply(threads(['second']));
    other.last.reply({
      protocol: 1,
      type: 'event',
      thread: 'second',
      event: { type: 'tool_call', step: 3, tool: 'read_file', agent: 'main' }
    });
    expect(text(panel)).toContain('step 3 · tool_call read_file');
  });

  it('says when no notebook is active', () => {
    const { panel, model, kernel } = showing();
    model.attach(null, null);
    expect(kernel.last.closed).toBe(true);
    expect(panel.node.dataset.state).toBe('no-notebook');
    expect(text(panel)).toContain('Open a notebook to inspect its agent runs.');
    expect(panel.node.querySelector('.jdi-summary')).toBeNull();
  });

  it('asks the kernel for a file and hands its text over', () => {
    const { model, kernel } = linked();
    kernel.last.reply(threads(['analysis']));
    const files: string[] = [];
    model.fileReceived.connect((_, message) => files.push(message.text));
    model.requestFile('/large_tool_results/t-1.txt');
    expect(kernel.last.sent.at(-1)).toMatchObject({
      want: 'file',
      path: '/large_tool_results/t-1.txt'
    });
    kernel.last.reply({
      protocol: 1,
      type: 'file',
      id: 'r3',
      path: '/large_tool_results/t-1.txt',
      local: '.deepagent/artifacts/large_tool_results/t-1.txt',
      text: 'station,x',
      truncated: false
    });
    expect(files).toEqual(['station,x']);
  });

  it('shows a kernel speaking another protocol version as an error', () => {
    const { panel, kernel } = linked();
    kernel.last.reply({ protocol: 99, type: 'threads', threads: [] });
    expect(text(panel)).toContain('protocol 99');
  });

  it('closes its comm and tells no one once disposed', () => {
    const { model, kernel } = linked();
    const states: string[] = [];
    model.stateChanged.connect((_, change) => states.push(change.state));
    model.dispose();
    expect(kernel.last.closed).toBe(true);
    kernel.targets[TARGET](new FakeComm(), {}); // a later %load_ext
    vi.advanceTimersByTime(1500);
    expect(kernel.comms.length).toBe(1);
    expect(states).toEqual([]);
  });
});

describe('file paths', () => {
  it('opens a file relative to the notebook folder from the server root', () => {
    expect(serverPath('work/a.ipynb', '.deepagent/x.txt')).toBe('work/.deepagent/x.txt');
    expect(serverPath('a.ipynb', 'report.md')).toBe('report.md');
  });
});
