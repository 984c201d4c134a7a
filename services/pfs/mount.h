/*
 * mount.h: the store as a FUSE 3 file system (loggp-pfs mount).
 *
 * Unmodified programs (cp, md5sum, fio) then use the store through the
 * kernel: every FUSE request becomes calls of the C API (pfs.h) on one
 * connection, from FUSE's worker threads.  Two modes:
 *   page cache  the kernel caches file data between opens of a file
 *               (dropped at each open, so a reopen sees other clients'
 *               writes), as a local file system's reads would be;
 *   direct I/O  every read and write goes to the servers (direct_io).
 */
#ifndef LOGGP_PFS_MOUNT_H
#define LOGGP_PFS_MOUNT_H

#include "pfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Mounts p at dir and serves until the mount goes (fusermount3 -u) or
 * SIGINT/SIGTERM (which unmount).  Prints "loggp-pfs: mounted DIR" on
 * stdout once mounted.  Refuses, with one line on stderr and a non-zero
 * return, a dir that is already a mount point, and a machine without
 * /dev/fuse.
 */
int pfs_mount(pfs_t *p, const char *dir, int direct_io);

#ifdef __cplusplus
}
#endif

#endif
