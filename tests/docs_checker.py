"""The docs checker: what is stale in a page of the README or docs/, and what of it runs.

`page_problems(text, page)` reads one page and returns what is stale in it, checking each fenced
shell command (make targets, `jupyter-deepagent` subcommands and options, `python` scripts and
modules, pip extras, npm scripts), each `%%agent` example (options through the magic's own parser),
each `%agent` command, `.deepagent.toml` keys, `JUPYTER_DEEPAGENT_*` variables, and every local
link and `#anchor`. `runnable(page)` gives the files a page defines and its offline `%%agent`
cells. Used by tests/test_docs.py.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import io
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import get_type_hints

from jupyter_deepagent.cli import main as cli_main
from jupyter_deepagent.jupyter.magic.options import LINE_USAGE, parse_line, parse_run_options
from jupyter_deepagent.project.settings.agent_config import AgentConfig
from jupyter_deepagent.project.settings.subagents import SubagentSetting

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", ROOT / "ARCHITECTURE.md", *sorted((ROOT / "docs").glob("*.md"))]
SETTINGS = {f.name for f in dataclasses.fields(AgentConfig)}
SUBAGENT_KEYS = set(get_type_hints(SubagentSetting))
LINE_COMMANDS = {"config", "threads", "show", "inspect", "reset", "notebook", "resume", "help"}
BIN = Path(sys.executable).parent
# programs the docs may name that this project does not define
OTHER_PROGRAMS = {"apt-get", "createdb", "git", "cp", "rm", "mkdir", "npm", "node"}
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
SPAN = re.compile(r"`([^`\n]+)`")
SCREENSHOT = "inspector-and-sidebar.png"
VARIABLE = re.compile(r"\bJUPYTER_DEEPAGENT_[A-Z_]+\b")


@dataclasses.dataclass(frozen=True)
class Block:
    """A fenced block of a page."""

    lang: str
    body: str

    @property
    def file_name(self) -> str | None:
        """`NAME` when the block opens with a `# NAME.yaml` (or .yml, .toml) comment."""
        first = self.body.split("\n", 1)[0].strip()
        found = re.fullmatch(r"#\s*(\S+\.(?:ya?ml|toml))", first)
        return found.group(1) if found else None


def blocks(text: str) -> list[Block]:
    return [Block(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(text)]


def prose(text: str) -> str:
    """The page without its fenced blocks and HTML comments."""
    return re.sub(r"<!--.*?-->", "", FENCE.sub("", text), flags=re.DOTALL)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text.replace("`", ""))
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    for heading in re.findall(r"^#{1,6} (.+)$", prose(text), re.MULTILINE):
        base = slug(heading)
        name, n = base, 0
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


# --- shell commands ----------------------------------------------------------------------------


def _help(*words: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli_main([*words, "--help"])
    return out.getvalue()


def _cli_subcommands() -> set[str]:
    listed = re.search(r"\{([\w,-]+)\}", _help())
    assert listed, "jupyter-deepagent --help lists no subcommands"
    return set(listed.group(1).split(","))


def _options(words: list[str]) -> list[str]:
    """The `--options` among words, brackets, values and alternatives taken off."""
    flags = []
    for word in words:
        for part in word.strip("[]").split("|"):
            part = part.strip("[]")
            if re.match(r"^--?[A-Za-z]", part):
                flags.append(part.split("=", 1)[0])
    return flags


def _make_problems(targets: list[str]) -> list[str]:
    named = [t for t in targets if not t.startswith("-")]
    run = subprocess.run(
        ["make", "-n", "-C", str(ROOT), *named],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return [] if run.returncode == 0 else [f"make {' '.join(named)}: {run.stderr.strip()[-200:]}"]


def _python_problems(words: list[str]) -> list[str]:
    if words[:1] == ["-m"] and len(words) > 1:
        module = words[1]
        if module.split(".")[0] in ("venv", "pip", "build"):
            return []
        if not module.startswith("jupyter_deepagent"):
            return [f"python -m {module}: not a module of this project"]
        run = subprocess.run(
            [sys.executable, "-m", module, *words[2:]],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=ROOT,
            check=False,
        )
        return [] if run.returncode == 0 else [f"python -m {' '.join(words[1:])} failed"]
    if not words or not (ROOT / words[0]).is_file():
        return [f"python {' '.join(words)}: no such script"]
    source = (ROOT / words[0]).read_text(encoding="utf-8")
    return [
        f"python {words[0]}: no option {flag}"
        for flag in _options(words[1:])
        if f'"{flag}"' not in source
    ]


def _pip_problems(words: list[str]) -> list[str]:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    problems = []
    for word in words:
        for extra in re.findall(r"^\.\[([\w,]+)\]$", word)[:1]:
            problems += [f"pip: no extra [{e}]" for e in extra.split(",") if e not in extras]
        wheel = re.search(r"jupyter_deepagent-([^-]+)-", word)
        if wheel and wheel.group(1) != version:
            problems.append(f"pip: the wheel is version {version}, not {wheel.group(1)}")
    return problems


def command_problems(line: str) -> list[str]:
    """What is stale in one shell command line (`a && b` checked as two)."""
    problems: list[str] = []
    for command in re.split(r"&&|;|\s\|\s", line.split(" #", 1)[0]):
        words = shlex.split(command)
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words = words[1:]
        if not words or words[0] == "cd":
            continue
        program, rest = Path(words[0]).name, words[1:]
        if program == "jupyter" and rest[:1] == ["deepagent"]:
            program, rest = "jupyter-deepagent", rest[1:]
        if program == "make":
            problems += _make_problems(rest)
        elif program == "jupyter-deepagent":
            subcommands = _cli_subcommands()
            if rest and rest[0] not in subcommands and not rest[0].startswith("-"):
                problems.append(f"jupyter-deepagent has no subcommand {rest[0]!r}")
                continue
            usage = _help(rest[0]) if rest and rest[0] in subcommands else _help()
            problems += [
                f"jupyter-deepagent {rest[0] if rest else ''}: no option {flag}"
                for flag in _options(rest[1:])
                if flag not in usage
            ]
        elif program in ("python", "python3"):
            problems += _python_problems(rest)
        elif program == "pip" and rest[:1] == ["install"]:
            problems += _pip_problems(rest)
        elif program == "npm" and rest[:1] in (["test"], ["run"]):
            script = rest[0] if rest[0] == "test" else rest[1]
            if f'"{script}":' not in (ROOT / "labextension" / "package.json").read_text():
                problems.append(f"npm: labextension/package.json has no script {script!r}")
        elif program == "jupyter" and rest:
            if not (BIN / f"jupyter-{rest[0]}").exists():
                problems.append(f"jupyter {rest[0]}: not installed with the package")
        elif program not in OTHER_PROGRAMS | {"pip"} and not (BIN / program).exists():
            problems.append(f"{program}: not a program this project installs or documents")
    return problems


def shell_lines(body: str) -> list[str]:
    """Command lines of a shell block; a line opening with spaces and `[` or `--` continues one."""
    lines: list[str] = []
    for raw in body.splitlines():
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        if lines and re.match(r"^\s+(\[|--)", raw):
            lines[-1] += " " + raw.split(" #", 1)[0].strip()
        else:
            lines.append(raw.strip())
    return lines


# --- the magic, settings, variables, links -----------------------------------------------------


def _placeholders(text: str) -> bool:
    """Whether a usage line holds placeholders (`NAME[,NAME...]`, `<model>`, `MODE`, `a|b`)."""
    return bool(re.search(r"[\[<|]|\.\.\.|\b[A-Z][A-Z_]+\b", text))


def magic_problems(first_line: str) -> list[str]:
    """An `%%agent` line, parsed for real; with placeholders, only its option names checked."""
    rest = first_line.removeprefix("%%agent").strip()
    if not _placeholders(rest):
        try:
            parse_run_options(rest)
        except ValueError as exc:
            return [f"{first_line!r}: {exc}"]
        return []
    problems = []
    for flag in _options(rest.split()):
        try:
            parse_run_options(f"{flag} x")
        except ValueError as exc:
            if "unrecognized" in str(exc):
                problems.append(f"{first_line!r}: no option {flag}")
    return problems


def line_command_problems(span: str) -> list[str]:
    words = span.split()
    command = words[1] if len(words) > 1 else "help"
    if command not in LINE_COMMANDS:
        return [f"{span!r}: no %agent command {command!r}"]
    problems = [
        f"{span!r}: no option {flag}" for flag in _options(words[2:]) if flag not in LINE_USAGE
    ]
    if command == "config":
        for key in re.findall(r"'?([a-z_][a-z_.]*)=", span):
            keyword = key.removeprefix("model.")  # `model.KEY`: one of the model's keywords
            if key != keyword and keyword.isidentifier():
                continue
            if key not in SETTINGS and key != "key":  # `key=value`: the placeholder
                problems.append(f"{span!r}: no setting {key!r}")
    elif len(words) > 2 and command != "inspect" and not _placeholders(" ".join(words[2:])):
        try:
            parse_line(span.removeprefix("%agent"))
        except ValueError as exc:
            problems.append(f"{span!r}: {exc}")
    return problems


def settings_problems(block: Block) -> list[str]:
    data = tomllib.loads(block.body)
    problems = [f".deepagent.toml: no setting {key!r}" for key in data if key not in SETTINGS]
    for subagent in data.get("subagents", []):
        problems += [
            f".deepagent.toml: a subagent has no key {key!r}"
            for key in subagent
            if key not in SUBAGENT_KEYS
        ]
    return problems


@functools.cache
def _source_names() -> str:
    return "\n".join(
        p.read_text(encoding="utf-8")
        for folder in ("jupyter_deepagent", "tests")
        for p in (ROOT / folder).rglob("*.py")
        if p.name not in ("test_docs.py", "docs_checker.py")
    )


def link_problems(text: str, page: Path) -> list[str]:
    problems = []
    for target in LINK.findall(prose(text)):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        if not path:
            if anchor not in anchors(text):
                problems.append(f"link {target}: no heading #{anchor} in {page.name}")
            continue
        file = (page.parent / path).resolve()
        if not file.exists():
            # the screenshot comes with the browser test that makes it: required once that is here
            awaited = path.endswith(SCREENSHOT) and SCREENSHOT not in _source_names()
            if not awaited:
                problems.append(f"link {target}: no file {path}")
            continue
        if anchor and anchor not in anchors(file.read_text(encoding="utf-8")):
            problems.append(f"link {target}: no heading #{anchor} in {file.name}")
    return problems


def page_problems(text: str, page: Path) -> list[str]:
    """Everything stale in one page of docs (ARCHITECTURE.md's diagrams are not examples: only
    its links are checked)."""
    problems = link_problems(text, page)
    if page.name == "ARCHITECTURE.md":
        return problems
    for block in blocks(text):
        if block.lang in ("bash", "sh", "shell"):
            for line in shell_lines(block.body):
                problems += command_problems(line)
        elif block.body.startswith("%%agent"):
            problems += magic_problems(block.body.split("\n", 1)[0])
        elif block.file_name == ".deepagent.toml":
            problems += settings_problems(block)
        problems += [
            p
            for line in block.body.splitlines()
            if line.startswith("%agent ")
            for p in line_command_problems(line.split(" #", 1)[0].strip())
        ]
    for span in SPAN.findall(prose(text)):
        if span.startswith("%%agent"):
            problems += magic_problems(span)
        elif span.startswith("%agent"):
            problems += line_command_problems(span)
    known = _source_names()
    problems += sorted({f"no variable {v}" for v in VARIABLE.findall(text) if v not in known})
    return problems


def runnable(page: Path) -> tuple[dict[str, str], list[str]]:
    """The files a page defines (`# NAME.yaml` blocks) and its `%%agent -m scripted:NAME` cells
    (with the Python blocks after them that read `agent_results`)."""
    files, cells = {}, []
    for block in blocks(page.read_text(encoding="utf-8")):
        if block.file_name:
            files[block.file_name] = block.body
    for block in blocks(page.read_text(encoding="utf-8")):
        script = re.match(r"%%agent .*-m scripted:(\S+)", block.body)
        if script and script.group(1) in files:
            cells.append(block.body)
        elif cells and block.lang == "python" and block.body.startswith("agent_results"):
            cells.append(block.body)
    return files, cells
