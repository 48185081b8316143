// jsdom has no drag events; Lumino's drag-and-drop module subclasses DragEvent when it loads.
const scope = globalThis as { DragEvent?: unknown };
if (typeof scope.DragEvent === 'undefined') {
  scope.DragEvent = class DragEvent extends MouseEvent {};
}
