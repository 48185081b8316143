// jsdom has no drag events; Lumino's drag-and-drop module subclasses DragEvent when it loads.
if (typeof (globalThis as any).DragEvent === 'undefined') {
  (globalThis as any).DragEvent = class DragEvent extends MouseEvent {};
}
