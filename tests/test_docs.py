"""The README and docs/ are true: every command, option, setting, variable and link they name is
real, and the offline `%%agent` examples run.

The checker (`docs_checker.page_problems`) is fed every page, and small stale texts: a fake
option, a fake make target, a fake setting, a broken anchor, so a checker that stopped checking
fails too. The `%%agent` examples with a `scripted:` model whose script the same page defines (a
fenced block opening with `# NAME.yaml`) run in a kernel and must succeed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_checker import PAGES, ROOT, SETTINGS, VARIABLE, page_problems, runnable
from notebook_shell import Notebook, notebook  # noqa: F401


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_option_setting_and_link_is_real(page: Path) -> None:
    assert page_problems(page.read_text(encoding="utf-8"), page) == []


def test_the_readme_stays_a_first_screen() -> None:
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) < 300


def test_the_settings_table_names_every_setting_and_the_variables_table_every_variable() -> None:
    magic = (ROOT / "docs" / "magic.md").read_text(encoding="utf-8")
    settings = magic.split("## Settings", 1)[1].split("\n## ", 1)[0]
    variables = magic.split("## Environment variables", 1)[1].split("\n## ", 1)[0]

    assert set(re.findall(r"^\| `([a-z_]+)` \|", settings, re.MULTILINE)) == SETTINGS
    read_here = set(
        VARIABLE.findall(
            "\n".join(
                p.read_text(encoding="utf-8") for p in (ROOT / "jupyter_deepagent").rglob("*.py")
            )
        )
    ) - {"JUPYTER_DEEPAGENT_CHECK_EVENTS"}  # the tests' own switch: every event checked
    assert set(VARIABLE.findall(variables)) == read_here


STALE = [
    ("```bash\nmake demo nosuch-target\n```", "make demo nosuch-target"),
    (
        "```bash\njupyter-deepagent run x.ipynb --replay strict --no-such-flag\n```",
        "no option --no-such-flag",
    ),
    (
        "```bash\njupyter-deepagent verify NOTEBOOK [--chain-only]\n                  [--fast]\n```",
        "no option --fast",
    ),
    ("```bash\njupyter deepagent publish x.ipynb\n```", "no subcommand 'publish'"),
    ("```bash\npython bench/no_such_bench.py\n```", "no such script"),
    ("```bash\npython bench/long_run.py --turbo\n```", "no option --turbo"),
    ("```bash\npip install -e '.[gpu]'\n```", "no extra [gpu]"),
    ("```bash\npip install dist/jupyter_deepagent-9.9.9-py3-none-any.whl\n```", "not 9.9.9"),
    ("```bash\ncd labextension && npm run deploy\n```", "no script 'deploy'"),
    ("```bash\nfrobnicate --all\n```", "frobnicate: not a program"),
    ("```\n%%agent --temperature 0.2\nHello\n```", "unrecognized arguments: --temperature"),
    ("Use `%%agent --stream MODE` for that.", "no option --stream"),
    ("Run `%agent forget` first.", "no %agent command 'forget'"),
    ("Run `%agent threads --mine`.", "no option --mine"),
    ("Set `%agent config temperature=0.2`.", "no setting 'temperature'"),
    ('```toml\n# .deepagent.toml\nmodle = "x"\n```', "no setting 'modle'"),
    ('```toml\n# .deepagent.toml\n[[subagents]]\nname = "a"\nmodel = "x"\n```', "no key 'model'"),
    ("Set JUPYTER_DEEPAGENT_TURBO=1.", "no variable JUPYTER_DEEPAGENT_TURBO"),
    ("See [the log](research-logs.md#no-such-heading).", "no heading #no-such-heading"),
    ("See [the page](no-such-page.md).", "no file no-such-page.md"),
    ("See [above](#nowhere).\n\n## Somewhere\n", "no heading #nowhere"),
]


@pytest.mark.parametrize(("text", "problem"), STALE, ids=[p for _, p in STALE])
def test_a_stale_command_option_setting_or_link_is_caught(text: str, problem: str) -> None:
    problems = page_problems(text, ROOT / "docs" / "stale.md")

    assert any(problem in found for found in problems), problems


def test_what_is_real_passes_the_same_checker() -> None:
    text = """
```bash
make demo
jupyter-deepagent verify NOTEBOOK [--chain-only] [--approve-recorded]
python -m jupyter_deepagent.events --table
pip install -e '.[serve]'
```

```
%%agent -m scripted:hello.yaml --into findings --context source=x
Hello
```

`%agent config python=true`, `%agent resume edit file_path=/outputs/a.md` and [a](#a-heading).

## A heading
"""
    assert page_problems(text, ROOT / "docs" / "fine.md") == []


# --- the offline examples, run in a kernel -----------------------------------------------------


OFFLINE = [page for page in PAGES if runnable(page)[1]]


def test_the_readme_and_the_scripted_model_page_have_offline_examples() -> None:
    assert {ROOT / "README.md", ROOT / "docs" / "scripted-models.md"} <= set(OFFLINE)


@pytest.mark.parametrize("page", OFFLINE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_offline_examples_run(page: Path, notebook: Notebook) -> None:  # noqa: F811
    files, cells = runnable(page)
    for name, body in files.items():
        (notebook.folder / name).write_text(body, encoding="utf-8")

    for source in cells:
        cell = notebook.run(source)
        assert cell.error is None, (source, cell.error)
        if source.startswith("%%agent"):
            assert notebook.shell.user_ns["_agent"].status == "ok", source
