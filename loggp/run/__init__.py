"""Running a plan's points: launchers, processes, the shim's environment (README.md)."""
