"""loggp: a LogGP network-emulation testbed (see DESIGN.md)."""
