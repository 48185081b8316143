"""The notebook face: magics, kernel session, the notebook as a filesystem, cell rendering."""
