"""The `%%agent` and `%agent` magics: option parsing, the line commands, a cell's run view."""
