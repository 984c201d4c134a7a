/*
 * mount.c: the FUSE 3 file system of mount.h over the C API.
 */
#define FUSE_USE_VERSION 31

#include "mount.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <fuse_lowlevel.h>
#include <limits.h>
#include <signal.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

struct mount_ctx {
	pfs_t *p;
	unsigned flags;
};

/* The FUSE context's private data, with the calling process's ids made
 * the identity of this worker's calls (pfs_set_ids). */
static struct mount_ctx *ctx(void)
{
	struct fuse_context *c = fuse_get_context();
	pfs_set_ids(c->uid, c->gid);
	return c->private_data;
}

static void to_timespec(uint64_t ns, struct timespec *t)
{
	t->tv_sec = (time_t)(ns / 1000000000u);
	t->tv_nsec = (long)(ns % 1000000000u);
}

static void to_stat(const struct pfs_attr *a, struct stat *st)
{
	memset(st, 0, sizeof *st);
	st->st_ino = a->ino;
	st->st_mode = a->type | (a->mode & 07777);
	st->st_nlink = a->nlink;
	st->st_uid = a->uid;
	st->st_gid = a->gid;
	st->st_rdev = (dev_t)a->rdev;
	st->st_size = (off_t)a->size;
	st->st_blksize = a->stripe_size && a->stripe_size < (1u << 30) ? (blksize_t)a->stripe_size
								       : 4096;
	st->st_blocks = (blkcnt_t)((a->size + 511) / 512);
	to_timespec(a->atime_ns, &st->st_atim);
	to_timespec(a->mtime_ns, &st->st_mtim);
	to_timespec(a->ctime_ns, &st->st_ctim);
}

static pfs_file_t *file_of(struct fuse_file_info *fi)
{
	return (pfs_file_t *)(uintptr_t)fi->fh;
}

/* By name even for an open file: an open file's owner, mode and times may
 * have changed since (FUSE names an unlinked open file .fuse_hidden*). */
static int op_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	struct pfs_attr a;
	int ret = path ? pfs_lstat(ctx()->p, path, &a) : pfs_fstat(file_of(fi), &a);
	if (!ret)
		to_stat(&a, st);
	return ret;
}

struct fill_arg {
	void *buf;
	fuse_fill_dir_t filler;
};

static int fill_one(void *arg, const char *name, uint64_t ino, unsigned type)
{
	struct fill_arg *f = arg;
	struct stat st = {0};
	/* An entry of inode 0 reads as deleted. */
	st.st_ino = ino;
	st.st_mode = type;
	return f->filler(f->buf, name, &st, 0, 0) ? 1 : 0;
}

static int op_readdir(const char *path, void *buf, fuse_fill_dir_t filler, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	(void)off;
	(void)fi;
	(void)flags;
	filler(buf, ".", NULL, 0, 0);
	filler(buf, "..", NULL, 0, 0);
	struct fill_arg f = {buf, filler};
	int ret = pfs_readdir(ctx()->p, path, fill_one, &f);
	return ret < 0 ? ret : 0;
}

static int op_mkdir(const char *path, mode_t mode)
{
	return pfs_mkdir(ctx()->p, path, mode);
}

static int op_mknod(const char *path, mode_t mode, dev_t rdev)
{
	return pfs_mknod(ctx()->p, path, mode, rdev);
}

static int op_symlink(const char *target, const char *path)
{
	return pfs_symlink(ctx()->p, target, path);
}

static int op_readlink(const char *path, char *buf, size_t len)
{
	if (len == 0)
		return -EINVAL;
	ssize_t n = pfs_readlink(ctx()->p, path, buf, len - 1);
	if (n < 0)
		return (int)n;
	buf[n] = '\0';
	return 0;
}

static int op_link(const char *from, const char *to)
{
	return pfs_link(ctx()->p, from, to);
}

static int op_rmdir(const char *path)
{
	return pfs_rmdir(ctx()->p, path);
}

static int op_unlink(const char *path)
{
	return pfs_unlink(ctx()->p, path);
}

static int op_rename(const char *from, const char *to, unsigned int flags)
{
	if (flags & RENAME_EXCHANGE)
		return -EINVAL;
	if (flags & RENAME_NOREPLACE) {
		struct pfs_attr a;
		if (pfs_lstat(ctx()->p, to, &a) == 0)
			return -EEXIST;
	}
	return pfs_rename(ctx()->p, from, to);
}

static int op_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	if (size < 0)
		return -EINVAL;
	return fi ? pfs_ftruncate(file_of(fi), (uint64_t)size)
		  : pfs_truncate(ctx()->p, path, (uint64_t)size);
}

static void set_mode(struct fuse_file_info *fi)
{
	/* An append is placed by the servers, at an offset the kernel's
	 * cache would not know. */
	if ((ctx()->flags & PFS_MOUNT_DIRECT_IO) || (fi->flags & O_APPEND))
		fi->direct_io = 1;
	else
		fi->keep_cache = 0;	/* a reopen sees other clients' writes */
}

static int op_open(const char *path, struct fuse_file_info *fi)
{
	pfs_file_t *f;
	int ret = pfs_open(ctx()->p, path, fi->flags, 0, &f);
	if (ret)
		return ret;
	fi->fh = (uint64_t)(uintptr_t)f;
	set_mode(fi);
	return 0;
}

static int op_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	pfs_file_t *f;
	int ret = pfs_open(ctx()->p, path, fi->flags | O_CREAT, mode, &f);
	if (ret)
		return ret;
	fi->fh = (uint64_t)(uintptr_t)f;
	set_mode(fi);
	return 0;
}

static int op_read(const char *path, char *buf, size_t len, off_t off,
		   struct fuse_file_info *fi)
{
	(void)path;
	return (int)pfs_pread(file_of(fi), buf, len, (uint64_t)off);
}

static int op_write(const char *path, const char *buf, size_t len, off_t off,
		    struct fuse_file_info *fi)
{
	(void)path;
	return (int)pfs_pwrite(file_of(fi), buf, len, (uint64_t)off);
}

static int op_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)path;
	(void)datasync;
	return pfs_fsync(file_of(fi));
}

static int op_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	return pfs_close(file_of(fi));
}

static int op_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
	(void)fi;
	return pfs_utimens(ctx()->p, path, tv);
}

static int op_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	(void)fi;
	return pfs_chmod(ctx()->p, path, mode);
}

static int op_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	(void)fi;
	return pfs_chown(ctx()->p, path, uid, gid);
}

static int op_statfs(const char *path, struct statvfs *st)
{
	(void)path;
	struct pfs_space s;
	int ret = pfs_statfs(ctx()->p, &s);
	if (ret)
		return ret;
	memset(st, 0, sizeof *st);
	st->f_bsize = st->f_frsize = 4096;
	st->f_blocks = s.bytes / 4096;
	st->f_bfree = s.free / 4096;
	st->f_bavail = s.avail / 4096;
	st->f_files = s.files;
	st->f_ffree = st->f_favail = s.ffree;
	st->f_namemax = 255;
	return 0;
}

/* Only user.* attributes are kept; the kernel's own questions (security.*
 * on every write, system.* ACLs) are answered here, without a round trip. */
static int user_attr(const char *name)
{
	return strncmp(name, "user.", 5) == 0;
}

static int op_setxattr(const char *path, const char *name, const char *value, size_t size,
		       int flags)
{
	if (!user_attr(name))
		return -EOPNOTSUPP;
	return pfs_setxattr(ctx()->p, path, name, value, size, flags);
}

static int op_getxattr(const char *path, const char *name, char *value, size_t size)
{
	if (!user_attr(name))
		return -ENODATA;
	return (int)pfs_getxattr(ctx()->p, path, name, value, size);
}

static int op_listxattr(const char *path, char *list, size_t size)
{
	return (int)pfs_listxattr(ctx()->p, path, list, size);
}

static int op_removexattr(const char *path, const char *name)
{
	if (!user_attr(name))
		return -ENODATA;
	return pfs_removexattr(ctx()->p, path, name);
}

static int op_fallocate(const char *path, int mode, off_t off, off_t len,
			struct fuse_file_info *fi)
{
	(void)path;
	if (mode)
		return -EOPNOTSUPP;	/* only posix_fallocate's mode 0 */
	if (off < 0 || len <= 0)
		return -EINVAL;
	return pfs_fallocate(file_of(fi), (uint64_t)off, (uint64_t)len);
}

static void *op_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	/* One client of many: ask the servers rather than trust old sizes. */
	cfg->attr_timeout = 0;
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->direct_io = (ctx()->flags & PFS_MOUNT_DIRECT_IO) != 0;
	return fuse_get_context()->private_data;
}

static const struct fuse_operations ops = {
	.getattr = op_getattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.chmod = op_chmod,
	.chown = op_chown,
	.truncate = op_truncate,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.statfs = op_statfs,
	.release = op_release,
	.fsync = op_fsync,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
	.readdir = op_readdir,
	.init = op_init,
	.create = op_create,
	.utimens = op_utimens,
	.fallocate = op_fallocate,
};

/* 1 if dir is a mount point now (its line in /proc/self/mountinfo). */
static int is_mount_point(const char *dir)
{
	char real[PATH_MAX], line[4096];
	if (!realpath(dir, real))
		return 0;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return 0;
	int found = 0;
	while (!found && fgets(line, sizeof line, f)) {
		char mnt[PATH_MAX];
		/* id parent major:minor root mount-point ... */
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strcmp(mnt, real))
			found = 1;
	}
	fclose(f);
	return found;
}

static struct fuse_session *stop_session;

static void on_stop(int sig)
{
	(void)sig;
	fuse_session_exit(stop_session);
}

/*
 * SIGHUP, SIGINT and SIGTERM end the loop, which then unmounts.  Installed
 * over whatever is there: libfabric's psm3 provider, loaded by fi_getinfo,
 * has put handlers on SIGINT and SIGTERM that exit at once, and
 * fuse_set_signal_handlers() keeps a handler it finds, so a stopped mount
 * left its mount point behind.  No SA_RESTART: the signal must interrupt
 * the workers' reads of /dev/fuse for them to see the exit.
 */
static int set_stop_signals(struct fuse_session *se)
{
	static const int sigs[] = {SIGHUP, SIGINT, SIGTERM};
	struct sigaction sa = {0};

	stop_session = se;
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], &sa, NULL))
			return -1;
	return 0;
}

static void reset_stop_signals(void)
{
	signal(SIGHUP, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

int pfs_mount(pfs_t *p, const char *dir, unsigned flags)
{
	if (access("/dev/fuse", R_OK | W_OK)) {
		fprintf(stderr, "loggp-pfs: mount: /dev/fuse %s: FUSE is not available here "
				"(load the fuse module; a container needs --device /dev/fuse)\n",
			errno == ENOENT ? "is missing" : "cannot be opened");
		return 1;
	}
	struct stat st;
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "loggp-pfs: mount: %s is not a directory\n", dir);
		return 1;
	}
	if (is_mount_point(dir)) {
		fprintf(stderr, "loggp-pfs: mount: %s is already a mount point "
				"(unmount it first: fusermount3 -u %s)\n", dir, dir);
		return 1;
	}
	struct mount_ctx c = {p, flags};
	char *argv[] = {"loggp-pfs", "-o",
			flags & PFS_MOUNT_ALLOW_OTHER
				? "fsname=loggp-pfs,subtype=loggp-pfs,default_permissions,allow_other"
				: "fsname=loggp-pfs,subtype=loggp-pfs,default_permissions",
			NULL};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse *fuse = fuse_new(&args, &ops, sizeof ops, &c);
	if (!fuse) {
		fprintf(stderr, "loggp-pfs: mount: fuse_new failed\n");
		return 1;
	}
	int ret = 1;
	if (fuse_mount(fuse, dir)) {
		fprintf(stderr, "loggp-pfs: mount: cannot mount %s (see the FUSE line above)\n",
			dir);
		goto out;
	}
	if (set_stop_signals(fuse_get_session(fuse))) {
		fprintf(stderr, "loggp-pfs: mount: cannot install signal handlers: %s\n",
			strerror(errno));
		goto unmount;
	}
	printf("loggp-pfs: mounted %s (%s)\n", dir,
	       flags & PFS_MOUNT_DIRECT_IO ? "direct I/O" : "page cache");
	fflush(stdout);
	ret = fuse_loop_mt(fuse, 0) ? 1 : 0;
	reset_stop_signals();
unmount:
	fuse_unmount(fuse);
out:
	fuse_destroy(fuse);
	return ret;
}
