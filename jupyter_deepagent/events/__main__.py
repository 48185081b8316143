"""`python -m jupyter_deepagent.events`: print the run-event schema as JSON Schema or Markdown.

python -m jupyter_deepagent.events --json-schema            # JSON Schema on stdout
python -m jupyter_deepagent.events --json-schema events.json
python -m jupyter_deepagent.events --table                  # the Markdown table
python -m jupyter_deepagent.events --typescript labextension/src/events.ts  # the sidebar's
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    """Write what was asked for; return the exit status."""
    from jupyter_deepagent.events.schema import event_json_schema, event_table

    parser = argparse.ArgumentParser(
        prog="python -m jupyter_deepagent.events", description="The run-event schema."
    )
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument(
        "--json-schema",
        nargs="?",
        const="-",
        metavar="PATH",
        help="write the JSON Schema of a run event (to PATH, default stdout)",
    )
    group.add_argument("--table", action="store_true", help="print the Markdown table")
    group.add_argument(
        "--typescript",
        nargs="?",
        const="-",
        metavar="PATH",
        help="write the TypeScript declarations (to PATH, default stdout)",
    )
    args = parser.parse_args(argv)
    if args.table:
        print(event_table())
        return 0
    if args.typescript:
        from jupyter_deepagent.events.typescript import event_typescript

        text, path = event_typescript(), args.typescript
    else:
        text = json.dumps(event_json_schema(), indent=2, ensure_ascii=False) + "\n"
        path = args.json_schema
    if path == "-":
        sys.stdout.write(text)
    else:
        Path(path).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
