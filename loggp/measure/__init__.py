"""loggp-calibrate runs, configured against measured deltas, the demo sweep (README.md)."""
