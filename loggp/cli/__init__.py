"""The `loggp` command: one module per verb (README.md)."""
