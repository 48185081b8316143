/**
 * The proposals of an `%%agent --cells` run as the notebook holds them: the JSON the kernel puts
 * in the agent cell's output, the mark each inserted cell carries in its metadata, and how a
 * re-run replaces them (`placeProposals`). No JupyterLab runtime here: the plugin that wires it
 * to the notebook is `proposed-cells.ts`.
 */

import type { Notebook } from '@jupyterlab/notebook';
import type { PartialJSONValue } from '@lumino/coreutils';

/** The mimetype of the proposals' JSON in the agent cell's output. */
export const PROPOSALS_MIME = 'application/vnd.jupyter-deepagent.proposed-cells+json';
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
  /** Set when the user ran the proposal without its agent cell: it is theirs now. */
  user_ran?: boolean;
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
    const read: ProposalMark = {
      proposed_by: mark.proposed_by,
      index: mark.index,
      source_hash: mark.source_hash
    };
    if (mark.user_ran === true) {
      read.user_ran = true;
    }
    return read;
  }
  return null;
}

/**
 * Tells a proposal the user ran by itself from one a run of many cells ran along with its agent
 * cell. JupyterLab's cell executor schedules every cell of one run (Run All, Run All Below, a
 * selection) in the same task, before it awaits anything when a kernel is there, so the cells
 * scheduled before the next microtask are one batch (an executor that awaited before scheduling
 * each cell would make every cell a batch of its own).
 */
export class BatchWatch {
  private batch = new Set<string>();

  /**
   * Note that the cell `cellId` is scheduled to run; `proposedBy` is the agent cell that proposed
   * it (null for any other cell). Returns whether it is a proposal run without that agent cell.
   */
  scheduled(cellId: string, proposedBy: string | null): boolean {
    if (this.batch.size === 0) {
      queueMicrotask(() => this.batch.clear());
    }
    this.batch.add(cellId);
    return proposedBy !== null && !this.batch.has(proposedBy);
  }
}

/**
 * Replace the proposals of the agent cell `cellId` with `proposals`: delete its earlier ones
 * from `first` on that are still as proposed (not edited, not run by the user), insert the new
 * ones below it (after its earlier ones below `first`). Returns how many were kept.
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
      if (mark.source_hash === sourceHash(cell.getSource()) && !mark.user_ran) {
        shared.deleteCell(i);
      } else {
        kept += 1; // edited or run: the user's now, outputs and all
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
    text += ` ${kept} earlier proposal${kept === 1 ? '' : 's'} you edited or ran ${kept === 1 ? 'was' : 'were'} kept.`;
  }
  return text;
}
