"""Notebook functions as the agent's tools: `@agent_tool`, `--tools`, `tools=` in the config."""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError
from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import agent_tool
from jupyter_deepagent.jupyter.tools.notebook_tools import as_agent_tool

TOOLS_CELL = '''
from typing import Literal
from jupyter_deepagent import agent_tool

@agent_tool
def warming_rate(station: str, unit: Literal["C", "F"] = "C") -> float:
    """The warming rate of a permafrost station, per decade.

    Args:
        station: The station's name, e.g. Svalbard.
        unit: Degrees Celsius or Fahrenheit.
    """
    print(f"looked up {station}")
    rate = {"Svalbard": 0.7, "Abisko": 0.3}[station]
    return rate if unit == "C" else rate * 1.8

def stations_near(latitude: float, count: int = 3) -> list[str]:
    """Stations closest to a latitude."""
    return ["Svalbard", "Tiksi", "Utqiagvik"][:count]
'''


def schema(model, name: str) -> dict:
    [tool] = [t for t in model.requests[0].tools if t["function"]["name"] == name]
    return tool["function"]


def tool_results(model) -> list[ToolMessage]:
    return [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]


def test_a_marked_function_is_a_tool_with_its_schema_from_hints_and_docstring(
    notebook: Notebook,
) -> None:
    notebook.run(TOOLS_CELL)
    model = scripted(call("warming_rate", station="Svalbard", unit="F"), "1.26 F per decade.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nHow fast does Svalbard warm?")
    assert cell.error is None
    spec = schema(model, "warming_rate")
    assert spec["description"].startswith("The warming rate of a permafrost station, per decade.")
    properties = spec["parameters"]["properties"]
    assert properties["station"]["type"] == "string"
    assert properties["station"]["description"] == "The station's name, e.g. Svalbard."
    assert properties["unit"]["enum"] == ["C", "F"]
    assert spec["parameters"]["required"] == ["station"]
    assert "stations_near" not in model.requests[0].tool_names  # not marked, not named
    assert "✓ warming_rate station=Svalbard unit=F" in cell.live_text
    [result] = tool_results(model)
    assert result.text == "1.26\n\nprinted:\nlooked up Svalbard"  # prints go to the model
    assert "looked up" not in cell.stdout  # ... not to the cell
    assert notebook.shell.user_ns["warming_rate"]("Abisko") == 0.3  # still a plain function


def test_tools_option_and_config_offer_named_functions(notebook: Notebook) -> None:
    notebook.run(TOOLS_CELL)
    model = scripted(call("stations_near", latitude=70.5, count=2), "Svalbard and Tiksi.", "ok")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --tools stations_near\nWhich stations are near 70.5 N?")
    assert cell.error is None
    properties = schema(model, "stations_near")["parameters"]["properties"]
    assert properties["latitude"]["type"] == "number" and properties["count"]["type"] == "integer"
    assert tool_results(model)[0].text == '["Svalbard", "Tiksi"]'
    notebook.run("%agent config tools=stations_near")
    notebook.run("%%agent\nagain")
    assert {"stations_near", "warming_rate"} <= set(model.requests[-1].tool_names)


def test_a_tool_that_raises_shows_a_cross_and_the_model_gets_the_error(notebook: Notebook) -> None:
    notebook.run(TOOLS_CELL)
    model = scripted(call("warming_rate", station="Atlantis"), "No such station.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nAtlantis?")
    assert cell.error is None
    assert "✗ warming_rate station=Atlantis" in cell.live_text and "KeyError" in cell.live_text
    [result] = tool_results(model)
    assert result.status == "error" and "KeyError: 'Atlantis'" in result.text
    assert cell.markdown[-1] == "No such station."


def test_a_tool_sees_the_runtime_context(notebook: Notebook) -> None:
    notebook.run(
        "from langchain.tools import ToolRuntime\n"
        "from jupyter_deepagent import agent_tool\n"
        "@agent_tool\n"
        "def fetch_series(series: str, runtime: ToolRuntime[dict]) -> str:\n"
        '    """Fetch a data series from the team database."""\n'
        "    return f\"{series} from {runtime.context['database']}\"\n"
    )
    model = scripted(call("fetch_series", series="ground-temp"), "Fetched.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --context database=permafrost-db\nfetch it")
    assert cell.error is None
    assert set(schema(model, "fetch_series")["parameters"]["properties"]) == {"series"}
    assert tool_results(model)[0].text == "ground-temp from permafrost-db"


def test_an_unknown_name_stops_the_cell_saying_what_to_do(notebook: Notebook) -> None:
    model = scripted("never sent")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --tools summarize\nhello")
    assert isinstance(cell.error, UsageError)
    assert "no function named 'summarize'" in str(cell.error) and "Define it" in str(cell.error)
    bad = notebook.run("%%agent --tools 2fast\nhello")
    assert isinstance(bad.error, UsageError) and "--tools takes names" in str(bad.error)
    assert model.requests == []


def test_functions_the_model_could_not_call_are_refused_saying_what_to_add() -> None:
    def no_doc(station: str) -> float:
        return 0.0

    with pytest.raises(ValueError, match="no_doc\\(\\) has no docstring") as caught:
        agent_tool(no_doc)
    assert "Add one under the def line" in str(caught.value)

    def untyped(station) -> float:
        """Look a station up."""
        return 0.0

    with pytest.raises(ValueError, match="parameter 'station' has no type hint") as caught:
        agent_tool(untyped)
    assert "station: str" in str(caught.value)

    def takes_frame(table: pd.DataFrame) -> int:
        """Count rows."""
        return len(table)

    with pytest.raises(ValueError, match="parameter 'table' is a DataFrame") as caught:
        agent_tool(takes_frame)
    assert "take its variable name as str" in str(caught.value)

    def variadic(*names: str) -> str:
        """Join names."""
        return ",".join(names)

    with pytest.raises(ValueError, match="named arguments only"):
        agent_tool(variadic)
    with pytest.raises(TypeError, match="not a function"):
        as_agent_tool(42, "answer")
    assert not hasattr(no_doc, "__agent_tool__")


def test_a_refused_function_in_a_cell_is_a_usage_error_naming_it(notebook: Notebook) -> None:
    notebook.run("def shout(text):\n    return text.upper()\n")
    notebook.session.configure(model=scripted("never sent"))
    cell = notebook.run("%%agent --tools shout\nshout hello")
    assert isinstance(cell.error, UsageError)
    assert "shout() has no docstring" in str(cell.error)
    defined = notebook.run(
        "from jupyter_deepagent import agent_tool\n@agent_tool\ndef whisper(text: str) -> str:\n"
        "    return text.lower()\n"
    )
    assert isinstance(defined.error, ValueError)
    assert "whisper() has no docstring" in str(defined.error)
