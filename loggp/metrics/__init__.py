"""Prometheus: the runner's exporter and a server for a run (README.md)."""
