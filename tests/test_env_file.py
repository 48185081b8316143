"""read_env_file: values of well-formed lines, and malformed lines named, never echoed."""

from __future__ import annotations

from pathlib import Path

from jupyter_deepagent.project.secrets.env_file import read_env_file


def test_malformed_lines_are_named_by_their_key_or_line_number(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "# keys\n"
        "GOOD_KEY=plain-value\n"
        'export QUOTED="quoted value" # comment\n'
        'BROKEN_KEY = "unclosed-secret\n'
        "just some words without equals secret-ish\n"
        "TWICE=first\nTWICE=second\n"
    )
    entries = read_env_file(env)
    assert entries.values == {
        "GOOD_KEY": "plain-value", "QUOTED": "quoted value", "TWICE": "second"
    }
    assert entries.malformed == ["BROKEN_KEY", "line 5"]
    assert "unclosed-secret" not in repr(entries.malformed)


def test_a_missing_file_or_a_folder_is_empty(tmp_path: Path) -> None:
    assert read_env_file(tmp_path / "absent.env").values == {}
    (tmp_path / ".env").mkdir()
    assert read_env_file(tmp_path / ".env").malformed == []


def test_quotes_comments_and_export_are_read_as_a_shell_would(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text(
        "# keys for the notebook\n"
        "\n"
        "JDA_ONE=plain-value\n"
        "export JDA_TWO='single quoted'\n"
        'JDA_THREE="double # not a comment"\n'
        "JDA_HASH=value # trailing comment\n"
        "this line is broken sk-secret-in-bad-line\n",
        encoding="utf-8",
    )
    entries = read_env_file(env)
    assert entries.values == {
        "JDA_ONE": "plain-value", "JDA_TWO": "single quoted",
        "JDA_THREE": "double # not a comment", "JDA_HASH": "value",
    }
    assert entries.malformed == ["line 7"]
    assert "sk-secret" not in repr(entries)
