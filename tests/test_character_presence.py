"""CharacterPresence answers exactly what `str.find` answers, only faster when it can."""

from __future__ import annotations

import random

from jupyter_deepagent.project.secrets._presence import CharacterPresence
from jupyter_deepagent.project.secrets.redaction import Redactor


def test_find_agrees_with_str_find_on_random_slices() -> None:
    rng = random.Random(5)
    alphabet = "abcAB_:-\n xyz"
    for _ in range(500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60)))
        start = rng.randrange(0, len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        presence = CharacterPresence(text, start, end)
        for _ in range(5):
            literal = "".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 4)))
            assert presence.find(literal) == text.find(literal, start, end), (text, literal)


def test_a_key_after_a_megabyte_without_capitals_is_still_masked() -> None:
    key = "AIza" + "SyPresenceKey0123456789abcdefghijk"
    text = "station mass 1.25\n" * 60_000 + f"here: {key}\n"
    masked = Redactor(environ={})(text)
    assert key not in masked
    assert masked.endswith("here: ***\n")
