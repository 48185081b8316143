/**
 * jupyter-deepagent's JupyterLab extension: the "Agent inspector" in the right sidebar, following
 * the active notebook's kernel. `model.ts` talks to the kernel, `panel.ts` shows what it says,
 * `file-viewer.ts` opens a run's files; this plugin only wires them into JupyterLab: the panel in
 * the right sidebar (its place restored with the layout) and a command, in the palette, that
 * opens it.
 */

import { ILayoutRestorer, JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { ICommandPalette } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { inspectorIcon } from '@jupyterlab/ui-components';

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

export default [plugin, proposedCells];
