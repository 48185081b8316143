"""Generate notebooks/data/stations.csv: a small, made-up permafrost monitoring table.

The numbers are synthetic (a fixed seed, plausible ranges), made for the quickstart notebook;
they describe no real station. Run `python notebooks/data/make_stations.py` to regenerate.
"""

from __future__ import annotations

import csv
import random
from pathlib import Path

STATIONS = [
    ("Abisko", "Scandinavia", 68.4), ("Tarfala", "Scandinavia", 67.9),
    ("Janssonhaugen", "Svalbard", 78.2), ("Kapp Linne", "Svalbard", 78.1),
    ("Utqiagvik", "Alaska", 71.3), ("Toolik", "Alaska", 68.6),
    ("Tiksi", "Siberia", 71.6), ("Yakutsk", "Siberia", 62.0),
    ("Schilthorn", "Alps", 46.6), ("Murtel", "Alps", 46.4),
    ("Zugspitze", "Alps", 47.4), ("Iqaluit", "Canada", 63.7),
]


def rows(seed: int = 11) -> list[dict[str, object]]:
    """The table's rows: ground temperature at 10 m and its trend per decade."""
    rng = random.Random(seed)
    made = []
    for name, region, lat in STATIONS:
        base = -0.25 * (lat - 45) + rng.uniform(-1.0, 1.0)
        made.append({
            "station": name,
            "region": region,
            "latitude": lat,
            "ground_temp_c": round(min(base, -0.2), 1),
            "warming_per_decade_c": round(rng.uniform(0.15, 0.75), 2),
            "years_observed": rng.randint(12, 40),
        })
    return made


def main() -> None:
    """Write the CSV beside this script."""
    path = Path(__file__).with_name("stations.csv")
    table = rows()
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)


if __name__ == "__main__":
    main()
