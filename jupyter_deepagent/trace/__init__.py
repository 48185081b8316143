"""The record of a run: events collected into a RunTrace, results as DataFrames (no Jupyter)."""
