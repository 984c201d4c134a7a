/*
 * mount.h: the store as a FUSE 3 file system (loggp-pfs mount).
 *
 * Unmodified programs (cp, md5sum, fio, tar, make) then use the store
 * through the kernel: every FUSE request becomes calls of the C API
 * (pfs.h) on one connection, from FUSE's worker threads, as the calling
 * process's uid and gid (what it creates is theirs).  The kernel checks
 * the mode bits stored with each entry (default_permissions).  With
 * PFS_MOUNT_ALLOW_OTHER other users than the one who mounted may enter
 * (allow_other): root may always ask for it, another user only where
 * /etc/fuse.conf has the line user_allow_other.  Files opened with
 * O_APPEND bypass the page cache, so each write is placed at the end by
 * the servers (pfs.h).  Two modes:
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
enum {
	PFS_MOUNT_DIRECT_IO = 1,	/* every read and write to the servers */
	PFS_MOUNT_ALLOW_OTHER = 2,	/* other users may enter */
};
int pfs_mount(pfs_t *p, const char *dir, unsigned flags);

#ifdef __cplusplus
}
#endif

#endif
