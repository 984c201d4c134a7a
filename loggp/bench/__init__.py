"""The benchmark programs of docs/benchmarks.md (README.md)."""
