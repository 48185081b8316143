/**
 * jupyter-deepagent's JupyterLab extension: the "Agent inspector" in the right sidebar, following
 * the active notebook's kernel. `model.ts` talks to the kernel, `panel.ts` shows what it says,
 * `file-viewer.ts` opens a run's files; this plugin only wires them into JupyterLab: the panel in
 * the right sidebar (its place restored with the layout) and a command, in the palette, that
 * opens it; and `agent-cell.ts`'s highlighting of `%%agent` cells into every cell editor.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import {
  EditorExtensionRegistry,
  IEditorExtensionRegistry,
  IEditorLanguageRegistry
} from '@jupyterlab/codemirror';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { inspectorIcon } from '@jupyterlab/ui-components';

import { agentCellExtension, agentCellLanguage } from './agent-cell';
import { openRunFile, showFile } from './file-viewer';
import { SidebarModel } from './model';
import { SidebarPanel } from './panel';
import proposedCells from './proposed-cells';

/** The commands this extension adds. */
export namespace CommandIDs {
  /** Show the Agent inspector in the right sidebar. */
  export const open = 'jupyter-deepagent:open-sidebar';
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-deepagent:sidebar',
  description: 'The agent inspector in the right sidebar, following the active notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  optional: [ICommandPalette, ILayoutRestorer],
  activate: (
    app: JupyterFrontEnd,
    notebooks: INotebookTracker,
    palette: ICommandPalette | null,
    restorer: ILayoutRestorer | null
  ) => {
    const model = new SidebarModel();
    const panel = new SidebarPanel(model);
    panel.title.icon = inspectorIcon;
    let current: NotebookPanel | null = null;
    panel.openFileRequested.connect((_, file) => {
      if (current) {
        void openRunFile(app, model, current.context.path, file);
      }
    });
    model.fileReceived.connect((_, message) => showFile(app, message));
    const follow = (notebook: NotebookPanel | null) => {
      current = notebook;
      model.attach(notebook ? notebook.sessionContext : null, notebook?.context.path ?? null);
    };
    notebooks.currentChanged.connect((_, notebook) => follow(notebook));

    app.commands.addCommand(CommandIDs.open, {
      label: 'Open the Agent Inspector',
      caption: "Show the agent runs of the active notebook's kernel in the right sidebar",
      icon: inspectorIcon,
      execute: () => {
        if (!panel.isAttached) {
          app.shell.add(panel, 'right', { rank: 650 });
        }
        app.shell.activateById(panel.id);
      }
    });
    palette?.addItem({ command: CommandIDs.open, category: 'Agent' });

    app.shell.add(panel, 'right', { rank: 650 });
    restorer?.add(panel, panel.id);
    void app.restored.then(() => follow(notebooks.currentWidget));
  }
};

/** The languages JupyterLab's Markdown may be registered under (its Markdown cells' first). */
const MARKDOWN = ['text/x-ipythongfm', 'text/x-markdown'];

const agentCells: JupyterFrontEndPlugin<void> = {
  id: 'jupyter-deepagent:agent-cells',
  description: 'Highlights %%agent cells as Markdown after their first line.',
  autoStart: true,
  requires: [IEditorExtensionRegistry, IEditorLanguageRegistry],
  activate: async (
    _app: JupyterFrontEnd,
    extensions: IEditorExtensionRegistry,
    languages: IEditorLanguageRegistry
  ) => {
    for (const name of MARKDOWN) {
      const markdown = (await languages.getLanguage(name))?.support?.language;
      if (markdown) {
        const agent = agentCellLanguage(markdown);
        extensions.addExtension({
          name: 'jupyter-deepagent:agent-cells',
          // cells and consoles (inline editors), not the file editor
          factory: ({ inline, model }) =>
            inline
              ? EditorExtensionRegistry.createImmutableExtension(
                  agentCellExtension(agent, model.sharedModel.getSource())
                )
              : null
        });
        return;
      }
    }
  }
};

export default [plugin, agentCells, proposedCells];
