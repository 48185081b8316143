import { YNotebook } from '@jupyter/ydoc';
import type { Notebook } from '@jupyterlab/notebook';
import { describe, expect, it } from 'vitest';

import {
  BatchWatch,
  METADATA_KEY,
  noteText,
  placeProposals,
  readMark,
  sourceHash
} from '../src/proposals';

const PROPOSALS = {
  first: 0,
  cells: [
    { kind: 'code' as const, source: 'total = 6', index: 0 },
    { kind: 'markdown' as const, source: '## The total', index: 1 }
  ]
};

/** A notebook holding an agent cell (`agent`) and a cell after it. */
function notebook(): { widget: Notebook; shared: YNotebook } {
  const shared = YNotebook.create();
  shared.insertCells(0, [
    { cell_type: 'code', id: 'agent', source: '%%agent --cells\npropose', metadata: {} },
    { cell_type: 'code', id: 'after', source: 'after = True', metadata: {} }
  ]);
  return { widget: { model: { sharedModel: shared } } as unknown as Notebook, shared };
}

const sources = (shared: YNotebook): string[] => shared.cells.map(cell => cell.getSource());

describe('a re-run of the agent cell', () => {
  it('replaces the proposals left as they were proposed', () => {
    const { widget, shared } = notebook();
    expect(placeProposals(widget, 'agent', PROPOSALS)).toBe(0);
    expect(placeProposals(widget, 'agent', PROPOSALS)).toBe(0);
    expect(sources(shared)).toEqual([
      '%%agent --cells\npropose',
      'total = 6',
      '## The total',
      'after = True'
    ]);
  });

  it('keeps a proposal the user ran, outputs and all, and one they edited', () => {
    const { widget, shared } = notebook();
    placeProposals(widget, 'agent', PROPOSALS);
    const ran = shared.cells[1];
    const mark = readMark(ran.getMetadata(METADATA_KEY));
    expect(mark).toEqual({ proposed_by: 'agent', index: 0, source_hash: sourceHash('total = 6') });
    ran.setMetadata(METADATA_KEY, { ...mark!, user_ran: true });
    shared.cells[2].setSource('## The total, checked');
    expect(placeProposals(widget, 'agent', PROPOSALS)).toBe(2);
    expect(sources(shared)).toEqual([
      '%%agent --cells\npropose',
      'total = 6',
      '## The total',
      'total = 6',
      '## The total, checked',
      'after = True'
    ]);
    expect(readMark(shared.cells[3].getMetadata(METADATA_KEY))?.user_ran).toBe(true);
    expect(noteText(PROPOSALS, 2)).toBe(
      'The agent proposed 2 cells, inserted below (not run). 2 earlier proposals you edited or ran were kept.'
    );
  });
});

describe('BatchWatch', () => {
  it('tells a proposal run by itself from one run along with its agent cell', async () => {
    const watch = new BatchWatch();
    // Run All: the agent cell, its proposals and the rest, scheduled in one task
    expect(watch.scheduled('load', null)).toBe(false);
    expect(watch.scheduled('agent', null)).toBe(false);
    expect(watch.scheduled('p0', 'agent')).toBe(false);
    expect(watch.scheduled('p1', 'agent')).toBe(false);
    await Promise.resolve();
    // later, Shift+Enter on one proposal
    expect(watch.scheduled('p0', 'agent')).toBe(true);
    await Promise.resolve();
    // a selection of the two proposals, without the agent cell
    expect(watch.scheduled('p0', 'agent')).toBe(true);
    expect(watch.scheduled('p1', 'agent')).toBe(true);
  });
});
