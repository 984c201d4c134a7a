"""loggp: a LogGP network-emulation testbed (see docs/design.md)."""
