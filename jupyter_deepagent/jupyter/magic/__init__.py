"""The `%%agent` and `%agent` magics: option parsing, the commands, and notebook wording."""
