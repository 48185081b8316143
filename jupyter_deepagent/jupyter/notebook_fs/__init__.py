"""The notebook as a filesystem: cells, outputs and variables as files, `/outputs/`, the mount table."""
