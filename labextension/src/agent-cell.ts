/**
 * `%%agent` cells read as prose: a code cell whose first line starts with `%%agent` is highlighted
 * as Markdown after that line, and the line itself as the magic and its options, so an apostrophe
 * in the request no longer opens a Python string that turns the rest of the line red.
 *
 * The Markdown is JupyterLab's own (the language its Markdown cells use, taken from the editor
 * language registry), extended with one block parser for the `%%agent` line; nothing of
 * CodeMirror or Lezer is bundled a second time. The extension follows the cell's first line, so
 * the highlighting changes as soon as the user types `%%agent` (or removes it); a cell that does
 * not start with it keeps the notebook's language untouched.
 */

import { Language } from '@codemirror/language';
import { Compartment, EditorState, Extension, Prec } from '@codemirror/state';
import { tags } from '@lezer/highlight';
import type { BlockContext, Line, MarkdownConfig, MarkdownParser } from '@lezer/markdown';

/** The first line of an agent cell: `%%agent` alone or followed by a space and options. */
const MAGIC = /^%%agent(?=\s|$)/;

/** The syntax nodes of the `%%agent` line (named as the tests and the stylesheet see them). */
export const AGENT_NODES = {
  line: 'AgentMagicLine',
  magic: 'AgentMagic',
  option: 'AgentOption',
  value: 'AgentOptionValue'
} as const;

/** Whether a cell's text makes it an agent cell (its first line starts with `%%agent`). */
export function isAgentCell(text: string): boolean {
  return MAGIC.test(text);
}

/** The words of a line, with their offsets. */
function words(text: string): { from: number; to: number; word: string }[] {
  const found: { from: number; to: number; word: string }[] = [];
  for (const match of text.matchAll(/\S+/g)) {
    const from = match.index ?? 0;
    found.push({ from, to: from + match[0].length, word: match[0] });
  }
  return found;
}

/** The Markdown extension that parses the cell's first line as `%%agent` and its options. */
export const agentMagicLine: MarkdownConfig = {
  defineNodes: [
    { name: AGENT_NODES.line, block: true },
    { name: AGENT_NODES.magic, style: tags.keyword },
    { name: AGENT_NODES.option, style: tags.attributeName },
    { name: AGENT_NODES.value, style: tags.attributeValue }
  ],
  parseBlock: [
    {
      name: AGENT_NODES.line,
      before: 'LinkReference',
      parse(cx: BlockContext, line: Line): boolean {
        if (cx.lineStart !== 0 || !MAGIC.test(line.text)) {
          return false;
        }
        const start = cx.lineStart;
        const children = words(line.text).map(({ from, to, word }, index) =>
          cx.elt(
            index === 0
              ? AGENT_NODES.magic
              : word.startsWith('-')
                ? AGENT_NODES.option
                : AGENT_NODES.value,
            start + from,
            start + to
          )
        );
        cx.addElement(cx.elt(AGENT_NODES.line, start, start + line.text.length, children));
        cx.nextLine();
        return true;
      }
    }
  ]
};

/** The language of an agent cell: `markdown` (JupyterLab's Markdown language) with the
 * `%%agent` line added. */
export function agentCellLanguage(markdown: Language): Language {
  const parser = (markdown.parser as MarkdownParser).configure(agentMagicLine);
  return new Language(markdown.data, parser, [], 'agent-markdown');
}

/**
 * The editor extension: while the editor's text starts with `%%agent`, `agent` is the document's
 * language, ahead of the notebook's (Python); otherwise only the notebook's language applies.
 * `text` is the editor's text when it is created; each change of the text is followed from there.
 *
 * A compartment, not a facet computed from the text: an editor may be created before JupyterLab
 * gives it a language, and an empty language facet would then break CodeMirror's parser.
 */
export function agentCellExtension(agent: Language, text: string): Extension {
  const slot = new Compartment();
  const on = Prec.highest(agent.extension);
  return [
    slot.of(isAgentCell(text) ? on : []),
    EditorState.transactionExtender.of(transaction => {
      if (!transaction.docChanged) {
        return null;
      }
      const wanted = isAgentCell(transaction.newDoc.line(1).text);
      const shown = slot.get(transaction.startState) === on;
      return wanted === shown ? null : { effects: slot.reconfigure(wanted ? on : []) };
    })
  ];
}
