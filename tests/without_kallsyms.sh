#!/bin/bash
# Runs its arguments where /proc/kallsyms reads empty: in a mount namespace of its own,
# with /dev/null bound over that file.  make test runs pytest through it.
#
# Why: Debian 12's libfabric (1.17) loads its verbs provider in every process's first
# fi_getinfo, whatever provider is asked for, and that load reads all of /proc/kallsyms
# twice to learn whether the kernel can pin dma-buf memory (tests/README.md, "Finding
# about libfabric's start-up cost on Debian 12"): a sixth of a second of system time a
# process on the 2-core test VM, and the suite starts thousands of such processes.  No
# test uses verbs (there is no RDMA device), and with the file empty the probe answers
# "no", as it does here anyway.
#
# Needs root for the namespace (CI runs as root); as any other user, or where unshare
# is refused, the command runs as it is, only slower.  Everything the tests start
# (namespace hosts, their sshd, FUSE mounts) lives inside the namespace and goes with it.
set -euo pipefail

if [[ $EUID -eq 0 ]] && ! mountpoint -q /proc/kallsyms && unshare -m true 2>/dev/null; then
	exec unshare -m --propagation private -- \
		/bin/bash -c 'mount --bind /dev/null /proc/kallsyms && exec "$@"' bash "$@"
fi
exec "$@"
