"""What a run leaves behind: the result protocol, results.sqlite, run.json (README.md)."""
