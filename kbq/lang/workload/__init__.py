"""Workload arithmetic: memory, speed and training time from each model's published architecture
and sourced constants (formulas in formulas.py, constants read from the KB), and the questions
that ask for them (memory for / speed of / time to train / how many)."""
