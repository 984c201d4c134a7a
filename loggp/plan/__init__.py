"""Experiments and their plans: knobs, the experiment file, sweeps (README.md)."""
