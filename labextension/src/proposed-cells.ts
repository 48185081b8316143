/**
 * The cells an `%%agent --cells` run proposed, inserted below the agent cell, never run.
 *
 * The kernel puts a run's proposals in the agent cell's output as JSON of their own mimetype
 * (`PROPOSALS_MIME`, beside a listing for frontends without this extension). When the cell's
 * execution finishes (`NotebookActions.executed`), this plugin inserts them as cells right below
 * it, marked in their metadata as proposed by that cell (`{"jupyter_deepagent": {"proposed_by":
 * <cell id>, "index": n, "source_hash": ...}}`). Running the agent cell again replaces its earlier
 * proposals: those still as proposed are deleted, those the user edited or ran stay where they
 * are (still marked, outputs and all), and the cell's note says how many were kept. A code
 * proposal counts as run by the user when it was scheduled to run, with a kernel, without its
 * agent cell (Shift+Enter on it, a selection below the agent cell): Run All also runs the old
 * proposals below the agent cell it re-runs, and those are replaced, not kept. Nothing inserted
 * is run: code cells are inserted untrusted with no outputs, Markdown cells as plain sources,
 * which JupyterLab renders sanitized.
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
import type { PartialJSONObject } from '@lumino/coreutils';
import { Widget } from '@lumino/widgets';

import {
  BatchWatch,
  METADATA_KEY,
  noteText,
  placeProposals,
  PROPOSALS_MIME,
  Proposals,
  readMark,
  readProposals
} from './proposals';

/** The comm target that tells the kernel this extension inserts the cells. */
export const CELLS_TARGET = 'jupyter_deepagent.cells';

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
    const batches = new BatchWatch();
    NotebookActions.executionScheduled.connect((_, { notebook, cell }) => {
      const shared = cell.model.sharedModel;
      const raw = shared.getMetadata(METADATA_KEY);
      const mark = readMark(raw);
      const kernel = panelOf(notebook)?.sessionContext.session?.kernel;
      const alone = batches.scheduled(cell.model.id, mark?.proposed_by ?? null);
      // without a kernel the cell does not run (JupyterLab clears it), so it is not marked
      if (alone && kernel && mark && !mark.user_ran) {
        shared.setMetadata(METADATA_KEY, { ...(raw as PartialJSONObject), user_ran: true });
      }
      if (kernel && AGENT_CELL.test(shared.getSource())) {
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
