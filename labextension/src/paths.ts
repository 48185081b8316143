/** The path of `local` (relative to the notebook's folder) relative to the server's root. */
export function serverPath(notebookPath: string, local: string): string {
  const slash = notebookPath.lastIndexOf('/');
  const folder = slash >= 0 ? notebookPath.slice(0, slash) : '';
  return folder ? `${folder}/${local}` : local;
}
