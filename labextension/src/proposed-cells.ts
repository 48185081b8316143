/**
 * The cells an `%%agent --cells` run proposed, inserted below the agent cell, never run.
 *
 * The kernel puts a run's proposals in the agent cell's output as JSON of their own mimetype
 * (`PROPOSALS_MIME`, beside a listing for frontends without this extension). When the cell's
 * execution finishes (`NotebookActions.executed`), this plugin inserts them as cells right below
 * it, marked in their metadata as proposed by that cell (`{"jupyter_deepagent": {"proposed_by":
 * <cell id>, "index": n, "source_hash": ...}}`). Running the agent cell again replaces its earlier
 * proposals: those still as proposed are deleted, those the user edited stay where they are
 * (still marked), and the cell's note says how many were kept. Nothing inserted is run: code
 * cells are inserted untrusted with no outputs, Markdown cells as plain sources, which JupyterLab
 * renders sanitized.
 *
 * Before it runs an agent cell, the plugin opens a comm on `CELLS_TARGET` to the notebook's kernel
 * (closing the one it opened before): while one is open, the kernel sends no next-input payload,
 * so JupyterLab never inserts the code twice. In the output,
 * a renderer for the mimetype shows a one-line note in place of the listing.
 */

import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import type { Cell, ICodeCellModel } from '@jupyterlab/cells';
import { INotebookTracker, Notebook, NotebookActions, NotebookPanel } from '@jupyterlab/notebook';
import type { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import type { Kernel } from '@jupyterlab/services';
import type { PartialJSONValue } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

/** The mimetype of the proposals' JSON in the agent cell's output. */
export const PROPOSALS_MIME = 'application/vnd.jupyter-deepagent.proposed-cells+json';
/** The comm target that tells the kernel this extension inserts the cells. */
export const CELLS_TARGET = 'jupyter_deepagent.cells';
/** The cell metadata key of a proposed cell's mark. */
export const METADATA_KEY = 'jupyter_deepagent';

/** One proposed cell, as the kernel sends it. */
export interface ProposedCell {
  kind: 'code' | 'markdown';
  source: string;
  index: number;
}

/** A run's proposals: `first` and above replace the cell's earlier ones. */
export interface Proposals {
  first: number;
  cells: ProposedCell[];
}

/** The mark of a proposed cell in its metadata. */
export interface ProposalMark {
  proposed_by: string;
  index: number;
  source_hash: string;
}

/** The proposals in a display's data, or null when it holds none this version can read. */
export function readProposals(data: unknown): Proposals | null {
  if (!data || typeof data !== 'object') {
    return null;
  }
  const value = data as Record<string, unknown>;
  if (value.version !== 1 || !Array.isArray(value.cells) || typeof value.first !== 'number') {
    return null;
  }
  const cells: ProposedCell[] = [];
  for (const item of value.cells as unknown[]) {
    const cell = (item ?? {}) as Record<string, unknown>;
    if (
      (cell.kind === 'code' || cell.kind === 'markdown') &&
      typeof cell.source === 'string' &&
      typeof cell.index === 'number'
    ) {
      cells.push({ kind: cell.kind, source: cell.source, index: cell.index });
    }
  }
  return { first: value.first, cells };
}

/** A short digest of a cell's text (FNV-1a, 32 bits): has the user edited the proposal? */
export function sourceHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `fnv1a:${hash.toString(16).padStart(8, '0')}`;
}

/** The mark of a cell's metadata value, or null if it is not a proposal. */
export function readMark(value: PartialJSONValue | undefined): ProposalMark | null {
  const mark = (value ?? {}) as Record<string, unknown>;
  if (
    typeof mark.proposed_by === 'string' &&
    typeof mark.index === 'number' &&
    typeof mark.source_hash === 'string'
  ) {
    return { proposed_by: mark.proposed_by, index: mark.index, source_hash: mark.source_hash };
  }
  return null;
}

/** What an agent cell's output proposes: its last proposals display, if any. */
function outputProposals(cell: Cell): Proposals | null {
  if (cell.model.type !== 'code') {
    return null;
  }
  const outputs = (cell.model as ICodeCellModel).outputs;
  let found: Proposals | null = null;
  for (let i = 0; i < outputs.length; i++) {
    found = readProposals(outputs.get(i).data[PROPOSALS_MIME]) ?? found;
  }
  return found;
}

/**
 * Replace the proposals of the agent cell `cellId` with `proposals`: delete its earlier ones
 * from `first` on that are still as proposed, insert the new ones below it (after its earlier
 * ones below `first`). Returns how many edited proposals were kept.
 */
export function placeProposals(notebook: Notebook, cellId: string, proposals: Proposals): number {
  const shared = notebook.model?.sharedModel;
  if (!shared) {
    return 0;
  }
  let kept = 0;
  shared.transact(() => {
    for (let i = shared.cells.length - 1; i >= 0; i--) {
      const cell = shared.cells[i];
      const mark = readMark(cell.getMetadata(METADATA_KEY));
      if (!mark || mark.proposed_by !== cellId || mark.index < proposals.first) {
        continue;
      }
      if (mark.source_hash === sourceHash(cell.getSource())) {
        shared.deleteCell(i);
      } else {
        kept += 1;
      }
    }
    let at = shared.cells.findIndex(cell => cell.id === cellId);
    if (at < 0) {
      return;
    }
    at += 1;
    while (at < shared.cells.length) {
      const mark = readMark(shared.cells[at].getMetadata(METADATA_KEY));
      if (!mark || mark.proposed_by !== cellId || mark.index >= proposals.first) {
        break;
      }
      at += 1;
    }
    shared.insertCells(
      at,
      proposals.cells.map(cell => {
        const mark: ProposalMark = {
          proposed_by: cellId,
          index: cell.index,
          source_hash: sourceHash(cell.source)
        };
        const metadata = { [METADATA_KEY]: { ...mark }, trusted: false };
        return cell.kind === 'code'
          ? { cell_type: 'code', source: cell.source, metadata, outputs: [], execution_count: null }
          : { cell_type: 'markdown', source: cell.source, metadata };
      })
    );
  });
  return kept;
}

/** The note the output shows in place of the listing. */
export function noteText(proposals: Proposals | null, kept = 0): string {
  if (!proposals) {
    return 'Proposed cells: this version of the extension cannot read them.';
  }
  const count = proposals.cells.length;
  let text =
    count === 0
      ? 'The agent proposed no cells.'
      : `The agent proposed ${count} cell${count === 1 ? '' : 's'}, inserted below (not run).`;
  if (kept) {
    text += ` ${kept} earlier proposal${kept === 1 ? '' : 's'} you edited ${kept === 1 ? 'was' : 'were'} kept.`;
  }
  return text;
}

/** The renderer of `PROPOSALS_MIME`: a one-line note (text only, nothing the model wrote). */
class ProposalsNote extends Widget implements IRenderMime.IRenderer {
  constructor() {
    super();
    this.addClass('jp-deepagent-proposals');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    const proposals = readProposals(model.data[PROPOSALS_MIME]);
    this.node.textContent = noteText(proposals);
    this.node.dataset.count = String(proposals?.cells.length ?? 0);
    return Promise.resolve();
  }
}

const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [PROPOSALS_MIME],
  defaultRank: 10,
  createRenderer: () => new ProposalsNote()
};

/** An agent cell, whose run may propose cells (`%%agent`, or `%agent resume`). */
const AGENT_CELL = /^\s*%%?agent\b/;

/**
 * Open a fresh comm on `CELLS_TARGET` to `kernel`, closing the one opened before: sent just
 * before the cell's execute request, on the same channel, it reaches the kernel first, whatever
 * happened to the last one (closed for want of a target before `%load_ext`, or by a restart).
 */
function announce(kernel: Kernel.IKernelConnection, open: WeakMap<object, Kernel.IComm>): void {
  const last = open.get(kernel);
  open.delete(kernel);
  try {
    if (last && !last.isDisposed) {
      last.close();
    }
    const comm = kernel.createComm(CELLS_TARGET);
    open.set(kernel, comm);
    comm.open({});
  } catch {
    open.delete(kernel); // the kernel is not connected: the kernel sends its next-input payload
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-deepagent:proposed-cells',
  description: 'Inserts the cells an %%agent --cells run proposed below the agent cell.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, notebooks: INotebookTracker) => {
    const comms = new WeakMap<object, Kernel.IComm>();
    const panelOf = (notebook: Notebook): NotebookPanel | undefined =>
      notebooks.find(panel => panel.content === notebook);
    notebooks.widgetAdded.connect((_, panel) => {
      panel.content.rendermime.addFactory(rendererFactory, rendererFactory.defaultRank);
    });
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      const kernel = panelOf(notebook)?.sessionContext.session?.kernel;
      if (kernel && AGENT_CELL.test(cell.model.sharedModel.getSource())) {
        announce(kernel, comms);
      }
    });
    NotebookActions.executed.connect((_, { notebook, cell }) => {
      const cellId = cell.model.id;
      const proposals = outputProposals(cell);
      if (!proposals) {
        return;
      }
      const kept = placeProposals(notebook, cellId, proposals);
      const note = cell.node.querySelector<HTMLElement>('.jp-deepagent-proposals');
      if (note) {
        note.textContent = noteText(proposals, kept);
      }
    });
  }
};

export default plugin;
