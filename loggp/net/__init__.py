"""The namespace testbed: namespaces, hosts, the wire's control socket (README.md)."""
