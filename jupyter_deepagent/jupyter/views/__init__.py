"""What a cell shows: the answer, events as text, output files, approval buttons, the inspector
widget, and the harness's advice in the notebook's words."""
