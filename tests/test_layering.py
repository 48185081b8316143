"""The layer rule, read from every module's imports (ast): backends -> harness -> trace -> project
-> jupyter | server -> cli. A layer imports only the layers before it (and the shared foundation:
the exceptions and the event schema), never a peer face nor another layer's private module. Only
`jupyter/` (the kernel face) and the CLI above it may import the notebook stack; below them pandas
loads only inside a function. No two modules import each other, even through an import inside a
function."""

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
    "project": 4,  # a notebook folder's agent, whoever runs it
    "jupyter": 5,  # the kernel face
    "server": 5,  # the LangGraph Server face: a peer of jupyter/, never importing it
    "cli": 6,
}
NOTEBOOK_FACES = ("jupyter", "cli")  # the only parts that may import the notebook stack
NOTEBOOK_STACK = ("IPython", "ipywidgets", "nbformat", "nbclient", "ipykernel", "comm")
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
            if part not in NOTEBOOK_FACES and root in NOTEBOOK_STACK:
                problems.append(f"{where}:{line} imports {target} outside the kernel face")
            if part not in NOTEBOOK_FACES and root in MODULE_LEVEL_ONLY and module_level:
                problems.append(f"{where}:{line} imports {target} at module level below jupyter/")
            if not target.startswith("jupyter_deepagent."):
                continue
            other = _layer(target)
            if other is None or other[0] not in LAYERS:
                continue
            if other[1] > level or (other[1] == level and other[0] != part):
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
        "import IPython\nfrom jupyter_deepagent.jupyter.session.session import Session\n"
        "from jupyter_deepagent.backends._paths import is_within\nimport pandas\n",
        encoding="utf-8",
    )
    (fake / "server").mkdir()
    (fake / "server" / "face.py").write_text(
        "def build():\n    from jupyter_deepagent.jupyter.session import Session\n",
        encoding="utf-8",
    )
    problems = _violations(fake)

    assert any("imports IPython outside the kernel face" in p for p in problems)
    assert any("(server) imports jupyter_deepagent.jupyter.session (jupyter)" in p for p in problems)
    assert any("(harness) imports jupyter_deepagent.jupyter.session.session (jupyter)" in p
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

    exports = jupyter_deepagent._EXPORTS  # the lazy map the static list mirrors
    assert set(jupyter_deepagent.__all__) == {*exports, "__version__"}


def _import_graph(package: Path) -> dict[str, set[str]]:
    """module -> the package's modules it imports, at module level or inside a function (an
    import under `if TYPE_CHECKING:` runs never, so it makes no edge)."""
    modules = {module: path for module, path in _modules(package)}
    graph: dict[str, set[str]] = {module: set() for module in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = {
            id(child)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for child in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in guarded or not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            targets = [t for t, _, _ in _imports(ast.Module(body=[node], type_ignores=[]),
                                                 module, path.name == "__init__.py")]
            if isinstance(node, ast.ImportFrom):  # `from pkg import name`: the submodule when
                base, names = targets[0], targets[1:]  # name is one, else pkg itself
                targets = [n if n in modules else base for n in names]
            graph[module].update(t for t in targets if t in modules and t != module)
    return graph


def _cycles(package: Path = PACKAGE) -> list[list[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    graph = _import_graph(package)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_two_modules_import_each_other() -> None:
    assert _cycles() == []


def test_the_cycle_check_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    fake = tmp_path / "jupyter_deepagent"
    (fake / "harness").mkdir(parents=True)
    (fake / "harness" / "a.py").write_text(
        "from jupyter_deepagent.harness.b import thing\n", encoding="utf-8")
    (fake / "harness" / "b.py").write_text(
        "def thing():\n    from jupyter_deepagent.harness import a\n    return a\n",
        encoding="utf-8")
    (fake / "harness" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
        "    from jupyter_deepagent.harness.a import thing\n", encoding="utf-8")

    assert _cycles(fake) == [["jupyter_deepagent.harness.a", "jupyter_deepagent.harness.b"]]


# the kernel face's rooms, each importing only rooms of a lower rank: the magic plans and shows
# runs through the session, which runs them over the notebook's filesystem, tools and views
KERNEL_ROOMS = {"notebook_fs": 0, "tools": 0, "views": 1, "session": 2, "sidebar": 2, "magic": 3}


def _kernel_room_violations(package: Path = PACKAGE) -> list[str]:
    problems = []
    for module, targets in _import_graph(package).items():
        parts = module.split(".")
        if len(parts) < 4 or parts[1] != "jupyter":
            continue
        for target in targets:
            other = target.split(".")
            if len(other) < 4 or other[1] != "jupyter" or other[2] == parts[2]:
                continue
            if KERNEL_ROOMS[other[2]] >= KERNEL_ROOMS[parts[2]]:
                problems.append(f"{module} ({parts[2]}) imports {target} ({other[2]})")
    return problems


def test_the_kernel_faces_rooms_import_downward() -> None:
    assert _kernel_room_violations() == []


def test_the_room_check_sees_a_room_importing_up(tmp_path: Path) -> None:
    fake = tmp_path / "jupyter_deepagent" / "jupyter"
    for room in ("session", "magic"):
        (fake / room).mkdir(parents=True)
    (fake / "magic" / "options.py").write_text("X = 1\n", encoding="utf-8")
    (fake / "session" / "session.py").write_text(
        "def plan():\n    from jupyter_deepagent.jupyter.magic.options import X\n", encoding="utf-8")

    assert _kernel_room_violations(tmp_path / "jupyter_deepagent") == [
        "jupyter_deepagent.jupyter.session.session (session) imports "
        "jupyter_deepagent.jupyter.magic.options (magic)"
    ]
