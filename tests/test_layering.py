"""The layer rule, read from every module's imports (ast): backends -> harness -> trace -> jupyter
-> cli. A layer imports only the layers before it (and the shared foundation: the exceptions and
the event schema), never another layer's private module, and below `jupyter/` nothing imports
the notebook stack, nor pandas at module level."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "jupyter_deepagent"

# layer of each top-level part of the package; the foundation (0) is shared by every layer
LAYERS = {
    "_exceptions": 0,
    "events": 0,
    "backends": 1,
    "harness": 2,
    "trace": 3,
    "jupyter": 4,
    "cli": 5,
}
NOTEBOOK_STACK = ("IPython", "ipywidgets", "nbformat", "nbclient", "ipykernel")
MODULE_LEVEL_ONLY = ("pandas",)  # allowed below jupyter/, but only inside a function


def _modules(package: Path) -> Iterator[tuple[str, Path]]:
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        yield ".".join(parts), path


def _layer(module: str) -> tuple[str, int] | None:
    parts = module.split(".")
    if len(parts) < 2:  # the package's own __init__: lazy re-exports, above every layer
        return None
    part = parts[1]
    return part, LAYERS[part]


def _imports(tree: ast.Module, module: str, is_package: bool) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import in the file."""
    top_level = {id(node) for node in tree.body}
    guarded = {
        id(child)
        for node in tree.body
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for child in ast.walk(node)
    }
    for node in ast.walk(tree):
        module_level = id(node) in top_level and id(node) not in guarded
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno, module_level
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            yield target, node.lineno, module_level
            for alias in node.names:  # `from jupyter_deepagent.x import _private`
                yield f"{target}.{alias.name}", node.lineno, module_level


def _violations(package: Path = PACKAGE) -> list[str]:
    problems = []
    for module, path in _modules(package):
        own = _layer(module)
        if own is None:
            continue
        part, level = own
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = f"{path.relative_to(package.parent)}"
        for target, line, module_level in _imports(tree, module, path.name == "__init__.py"):
            root = target.split(".")[0]
            if level < LAYERS["jupyter"] and root in NOTEBOOK_STACK:
                problems.append(f"{where}:{line} imports {target} below jupyter/")
            if level < LAYERS["jupyter"] and root in MODULE_LEVEL_ONLY and module_level:
                problems.append(f"{where}:{line} imports {target} at module level below jupyter/")
            if not target.startswith("jupyter_deepagent."):
                continue
            other = _layer(target)
            if other is None or other[0] not in LAYERS:
                continue
            if other[1] > level:
                problems.append(f"{where}:{line} ({part}) imports {target} ({other[0]})")
            private = any(p.startswith("_") and not p.startswith("__")
                          for p in target.split(".")[2:])
            if private and other[0] != part and other[0] != "_exceptions":
                problems.append(f"{where}:{line} imports another layer's private {target}")
    return problems


def test_every_import_follows_the_layer_rule() -> None:
    assert _violations() == []


def test_the_check_sees_a_violation(tmp_path: Path) -> None:
    # the rule must be able to fail: a harness module importing the notebook layer, and IPython
    fake = tmp_path / "jupyter_deepagent"
    (fake / "harness").mkdir(parents=True)
    (fake / "harness" / "bad.py").write_text(
        "import IPython\nfrom jupyter_deepagent.jupyter.session import Session\n"
        "from jupyter_deepagent.backends._paths import is_within\nimport pandas\n",
        encoding="utf-8",
    )
    problems = _violations(fake)

    assert any("imports IPython below jupyter/" in p for p in problems)
    assert any("(harness) imports jupyter_deepagent.jupyter.session (jupyter)" in p
               for p in problems)
    assert any("private jupyter_deepagent.backends._paths" in p for p in problems)
    assert any("pandas at module level" in p for p in problems)


def test_the_public_api_is_a_static_list() -> None:
    tree = ast.parse((PACKAGE / "__init__.py").read_text(encoding="utf-8"))
    assigned = [
        node.value for node in tree.body
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
    ]
    assert len(assigned) == 1 and isinstance(assigned[0], ast.List)
    assert all(isinstance(item, ast.Constant) for item in assigned[0].elts)


def test_every_public_name_has_a_home_and_every_home_is_public() -> None:
    import jupyter_deepagent

    exports = jupyter_deepagent._EXPORTS  # noqa: SLF001 - the lazy map the static list mirrors
    assert set(jupyter_deepagent.__all__) == {*exports, "__version__"}
