/* SPDX-License-Identifier: MIT */
/*
 * ns_io.c: nowsort's files: the run directory, checked reads and writes,
 * the generation of the input.
 *
 * Every system call is checked; a failure prints one line that names the
 * rank, what was being done, the path and the system's reason, e.g.
 *   nowsort: rank 1: cannot write /tmp/nowsort-Ab12Cd/out-1: No space left on device
 * Short reads and writes are continued (EINTR retried); a file that ends
 * early is an error that says how far it got.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mpi.h>

#include "ns.h"

#define NS_IO_MAX	(1 << 30)	/* bytes per read or write call */

/*
 * A fresh directory under parent for this run (collective): rank 0 makes
 * it with mkdtemp and tells the others, who make the same path if their
 * file system does not have it yet (ranks on other hosts, a local parent).
 */
int ns_dir_make(const struct wl_prog *p, const char *parent, char *dir, size_t len)
{
	int err = 0, all;

	if (!p->rank) {
		int n = snprintf(dir, len, "%s/nowsort-XXXXXX", parent);

		if (n < 0 || (size_t)n >= len)
			err = ENAMETOOLONG;
		else if (!mkdtemp(dir))
			err = errno;
		if (err)
			fprintf(stderr, "nowsort: cannot create a run directory in %s: %s\n",
				parent, strerror(err));
	}
	MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Bcast(&err, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!err && p->rank && mkdir(dir, 0700) && errno != EEXIST) {
		err = errno;
		fprintf(stderr, "nowsort: rank %d: cannot create %s: %s\n", p->rank, dir,
			strerror(err));
	}
	MPI_Allreduce(&err, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return all ? -all : 0;
}

/*
 * Removes this rank's files, then, once every rank has (a barrier: this is
 * collective), the directory.  Failures are reported, not fatal.
 */
void ns_dir_remove(const struct wl_prog *p, const char *dir, const char *const *paths,
		   int npaths)
{
	int i;

	for (i = 0; i < npaths; i++)
		if (unlink(paths[i]) && errno != ENOENT)
			fprintf(stderr, "nowsort: rank %d: cannot remove %s: %s\n", p->rank,
				paths[i], strerror(errno));
	MPI_Barrier(MPI_COMM_WORLD);
	/* every rank tries: ranks on other hosts have their own copy */
	if (rmdir(dir) && errno != ENOENT)
		fprintf(stderr, "nowsort: rank %d: cannot remove %s: %s\n", p->rank, dir,
			strerror(errno));
}

int ns_file_open(struct ns_file *f, const char *path, int rank, bool writing)
{
	f->path = path;
	f->rank = rank;
	f->fd = writing ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) :
			  open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0) {
		int err = errno;

		fprintf(stderr, "nowsort: rank %d: cannot open %s for %s: %s\n", rank, path,
			writing ? "writing" : "reading", strerror(err));
		return -err;
	}
	return 0;
}

/* Closes f, after an fsync when sync (the data is on the device). */
int ns_file_close(struct ns_file *f, bool sync)
{
	int err = 0;

	if (f->fd < 0)
		return 0;
	if (sync && fsync(f->fd)) {
		err = errno;
		fprintf(stderr, "nowsort: rank %d: cannot sync %s: %s\n", f->rank, f->path,
			strerror(err));
	}
	if (close(f->fd) && !err) {
		err = errno;
		fprintf(stderr, "nowsort: rank %d: cannot close %s: %s\n", f->rank, f->path,
			strerror(err));
	}
	f->fd = -1;
	return -err;
}

/* Reads up to len bytes; *got < len only at the end of the file. */
int ns_file_read(struct ns_file *f, void *buf, size_t len, size_t *got)
{
	char *at = buf;
	ssize_t n;

	*got = 0;
	while (*got < len) {
		size_t want = len - *got < NS_IO_MAX ? len - *got : NS_IO_MAX;

		n = read(f->fd, at + *got, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = errno;

			fprintf(stderr, "nowsort: rank %d: cannot read %s: %s\n", f->rank, f->path,
				strerror(err));
			return -err;
		}
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

int ns_file_write(struct ns_file *f, const void *buf, size_t len)
{
	const char *at = buf;
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		size_t want = len - done < NS_IO_MAX ? len - done : NS_IO_MAX;

		n = write(f->fd, at + done, want);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			int err = n < 0 ? errno : ENOSPC;

			fprintf(stderr, "nowsort: rank %d: cannot write %s: %s\n", f->rank, f->path,
				strerror(err));
			return -err;
		}
		done += (size_t)n;
	}
	return 0;
}

/* Drops f's clean pages, so that the next read comes from the device. */
int ns_file_drop_cache(struct ns_file *f)
{
	int err = posix_fadvise(f->fd, 0, 0, POSIX_FADV_DONTNEED);

	if (err)
		fprintf(stderr, "nowsort: rank %d: cannot drop the cached pages of %s: %s\n",
			f->rank, f->path, strerror(err));
	return -err;
}

/*
 * Writes records [lo, lo + n) of the global input to path, adding each to
 * sum.  With sync the file is forced to the device and dropped from the
 * page cache, so that the timed read really reads the disk.
 */
int ns_gen(const char *path, int rank, uint64_t seed, int64_t lo, int64_t n,
	   size_t chunk, bool sync, struct ns_sum *sum)
{
	size_t per = chunk / NS_REC, k;
	struct ns_file f;
	unsigned char *buf;
	int64_t g = lo;
	int ret, ret2;

	buf = malloc(per * NS_REC);
	if (!buf) {
		fprintf(stderr, "nowsort: rank %d: out of memory for a chunk of %zu bytes\n",
			rank, per * NS_REC);
		return -ENOMEM;
	}
	ret = ns_file_open(&f, path, rank, true);
	if (ret)
		goto out;
	while (g < lo + n) {
		for (k = 0; k < per && g < lo + n; k++, g++) {
			ns_record(seed, g, buf + k * NS_REC);
			ns_sum_add(sum, buf + k * NS_REC);
		}
		ret = ns_file_write(&f, buf, k * NS_REC);
		if (ret)
			goto close;
	}
	if (sync) {
		if (fsync(f.fd)) {
			ret = -errno;
			fprintf(stderr, "nowsort: rank %d: cannot sync %s: %s\n", rank, path,
				strerror(-ret));
			goto close;
		}
		ret = ns_file_drop_cache(&f);
	}
close:
	ret2 = ns_file_close(&f, false);
	ret = ret ? ret : ret2;
out:
	free(buf);
	return ret;
}
