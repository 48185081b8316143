"""Skill scanning: a broken, binary or oversized SKILL.md is a warning naming the file, never a
broken run; unchanged SKILL.md files are not read again, while new and edited ones are seen at once.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from jupyter_deepagent import (
    DiskBackend,
    ScriptedChatModel,
    StateBackend,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.backends.protocol import DEFAULT_READ_LIMIT, ReadResult
from jupyter_deepagent.backends.state import bind_state_files
from jupyter_deepagent.harness.prompt.skills import MAX_SKILL_FILE_BYTES, scan_skills

GOOD = "---\nname: good-skill\ndescription: Works well.\n---\n# Steps\n"
LONG_AGO = (datetime.now(UTC) - timedelta(days=1)).isoformat()


def skill_text(name: str, description: str) -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


class CountingStateBackend(StateBackend):
    """A StateBackend that counts file reads."""

    def __init__(self, files: dict | None = None) -> None:
        super().__init__(files)
        self.reads: list[str] = []

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        self.reads.append(path)
        return super().read(path, offset, limit)


def settled(**texts: str) -> dict:
    """State files last modified a day ago, keyed `/skills/<name>/SKILL.md`."""
    return {
        f"/skills/{name}/SKILL.md": {"content": text, "modified_at": LONG_AGO}
        for name, text in texts.items()
    }


def disk_skills(tmp_path: Path, **files: bytes) -> DiskBackend:
    for name, data in {"good-skill": GOOD.encode(), **files}.items():
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_bytes(data)
    return DiskBackend(tmp_path)


def problems_of(backend: object) -> dict[str, str]:
    return dict(scan_skills(backend, ["/skills/"]).problems)  # type: ignore[arg-type]


# -- broken files are warnings, not crashes --------------------------------------------------------


def test_deeply_nested_metadata_is_a_broken_skill_not_a_broken_run(tmp_path: Path) -> None:
    nested = "[" * 2000 + "]" * 2000
    backend = disk_skills(
        tmp_path, deep=f"---\nname: deep\ndescription: d\nmetadata: {nested}\n---\n".encode()
    )
    model = ScriptedChatModel(script=["Done."])
    agent = create_research_agent(model, skills=["/skills/"], backend=backend)
    trace = trace_run(agent, {"messages": [{"role": "user", "content": "hi"}]})
    assert trace.final_text == "Done."
    [warning] = [w for w in trace.warnings if "/skills/deep/SKILL.md" in w]
    assert "nested too deeply" in warning
    assert "good-skill" in model.requests[0].system


def test_a_binary_skill_file_is_reported_by_name(tmp_path: Path) -> None:
    backend = disk_skills(tmp_path, picture=b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    problem = problems_of(backend)["/skills/picture/SKILL.md"]
    assert "not UTF-8 text" in problem


def test_a_skill_file_in_another_encoding_is_reported_by_name(tmp_path: Path) -> None:
    latin1 = "---\nname: cafe\ndescription: Caf\u00e9 notes.\n---\n".encode("latin-1")
    backend = disk_skills(tmp_path, cafe=latin1)
    scan = scan_skills(backend, ["/skills/"])
    assert "save it as UTF-8" in dict(scan.problems)["/skills/cafe/SKILL.md"]
    assert [s.name for s in scan.skills] == ["good-skill"]


def test_an_oversized_skill_file_is_reported_without_being_read() -> None:
    huge = GOOD + "x" * MAX_SKILL_FILE_BYTES
    backend = CountingStateBackend(settled(huge=huge))
    problem = problems_of(backend)["/skills/huge/SKILL.md"]
    assert "over the 1,000,000" in problem and "other files of the skill folder" in problem
    assert backend.reads == []


def test_a_skill_file_over_the_backends_limit_is_reported(tmp_path: Path) -> None:
    disk_skills(tmp_path, wordy=(GOOD + "word " * 100).encode())
    backend = DiskBackend(tmp_path, max_file_bytes=200)
    problem = problems_of(backend)["/skills/wordy/SKILL.md"]
    assert "too large" in problem


def test_a_folder_without_skill_md_is_silently_not_a_skill() -> None:
    backend = StateBackend(settled(**{"good-skill": GOOD}))
    backend.write("/skills/notes/README.md", "not a skill")
    scan = scan_skills(backend, ["/skills/"])
    assert scan.problems == [] and [s.name for s in scan.skills] == ["good-skill"]


def test_a_byte_order_mark_before_the_frontmatter_is_ignored(tmp_path: Path) -> None:
    backend = disk_skills(tmp_path, bom=("\ufeff" + skill_text("bom", "Saved by Notepad.")).encode())
    scan = scan_skills(backend, ["/skills/"])
    assert scan.problems == []
    assert {s.name: s.description for s in scan.skills}["bom"] == "Saved by Notepad."


# -- rescanned every call, read only when changed ------------------------------------------------


def test_unchanged_skill_files_are_not_read_again() -> None:
    backend = CountingStateBackend(settled(a=skill_text("a", "A."), b=skill_text("b", "B.")))
    for _ in range(3):
        assert [s.name for s in scan_skills(backend, ["/skills/"]).skills] == ["a", "b"]
    assert sorted(backend.reads) == ["/skills/a/SKILL.md", "/skills/b/SKILL.md"]


def test_a_broken_skill_is_parsed_once_and_reported_every_scan() -> None:
    backend = CountingStateBackend(settled(bad="---\nname: Bad Name\ndescription: x\n---\n"))
    for _ in range(2):
        assert "field 'name'" in problems_of(backend)["/skills/bad/SKILL.md"]
    assert backend.reads == ["/skills/bad/SKILL.md"]


def test_an_edited_or_new_skill_is_seen_at_the_next_scan() -> None:
    backend = CountingStateBackend(settled(a=skill_text("a", "Old.")))
    scan_skills(backend, ["/skills/"])
    backend.write("/skills/a/SKILL.md", skill_text("a", "New."))
    backend.write("/skills/b/SKILL.md", skill_text("b", "Added."))
    scan = scan_skills(backend, ["/skills/"])
    assert {s.name: s.description for s in scan.skills} == {"a": "New.", "b": "Added."}


def test_a_same_size_edit_of_a_fresh_file_is_seen_even_with_the_same_timestamp() -> None:
    now = datetime.now(UTC).isoformat()  # a clock too coarse to tell the two writes apart
    path, backend = "/skills/a/SKILL.md", StateBackend()
    files = {path: {"content": skill_text("a", "One."), "modified_at": now}}
    with bind_state_files(files):
        assert scan_skills(backend, ["/skills/"]).skills[0].description == "One."
        files[path] = {"content": skill_text("a", "Two."), "modified_at": now}
        assert scan_skills(backend, ["/skills/"]).skills[0].description == "Two."


def test_two_backends_with_the_same_listing_do_not_share_parses() -> None:
    first = StateBackend(settled(a=skill_text("a", "One.")))
    second = StateBackend(settled(a=skill_text("a", "Two.")))
    assert scan_skills(first, ["/skills/"]).skills[0].description == "One."
    assert scan_skills(second, ["/skills/"]).skills[0].description == "Two."
