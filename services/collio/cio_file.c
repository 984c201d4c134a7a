/*
 * cio_file.c: the files collio serves, keyed by Open MPI's handle.  Open MPI
 * still opens every file (so calls collio does not serve see the same file,
 * view and file pointer); collio adds its own descriptor of the global file,
 * a duplicate communicator and, on aggregators with the cache on, the cache.
 * Deferred closes wait in their own list, oldest first, until a collective
 * open or close of the same ranks, or MPI_Finalize, completes them; their
 * sync errors are delivered to every rank of their communicator there, or
 * earlier at a collective call of the same ranks (README.md, "Errors").
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cio.h"
#include "collio.h"

const char *const cio_phase_name[CIO_T_N] = { COLLIO_PHASES };

static struct cio_file *open_files, *deferred;	/* deferred: oldest first */
/* every call's breakdown added up, for loggp_collio_breakdown */
static double totals[CIO_T_N];

struct cio_file *cio_file_find(MPI_File fh)
{
	for (struct cio_file *f = open_files; f; f = f->next)
		if (f->fh == fh)
			return f;
	return NULL;
}

/* "ufs:/a/b" and "/a/b" name the same file; a relative name is made absolute
 * (the JSON hints and the cache's name use the full path). */
static int full_path(const char *name, char *out, size_t len)
{
	const char *colon = strchr(name, ':'), *slash = strchr(name, '/');
	char cwd[PATH_MAX];

	if (colon && colon - name > 1 && (!slash || colon < slash))
		name = colon + 1;
	if (name[0] == '/')
		return snprintf(out, len, "%s", name) < (int)len ? 0 : -ENAMETOOLONG;
	if (!getcwd(cwd, sizeof(cwd)))
		return -errno;
	return snprintf(out, len, "%s/%s", cwd, name) < (int)len ? 0 : -ENAMETOOLONG;
}

/* Every rank's err (0 or a negative errno) agreed: 0 if none failed. */
static int agree_err(MPI_Comm comm, int err)
{
	int any;

	MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MIN, comm);
	return any;
}

static void file_free(struct cio_file *f)
{
	cio_view_free(&f->view);
	if (f->gfd >= 0)
		close(f->gfd);
	if (f->group != MPI_GROUP_NULL)
		MPI_Group_free(&f->group);
	if (f->comm != MPI_COMM_NULL)
		MPI_Comm_free(&f->comm);
	free(f);
}

/*
 * The file's full path and hints on every rank, agreed: 0, or an MPI error
 * code on every rank with one line on stderr from the first rank that
 * refused its name or a hint (every rank would say the same), or from rank
 * 0 when e10_* hints reached some ranks only.
 */
static int agree_hints(MPI_Comm comm, struct cio_file *f, const char *name, MPI_Info info)
{
	char msg[1100];
	int rank, ret, err = 0, v[4], w[4];

	MPI_Comm_rank(comm, &rank);
	cio_warn_hold(msg, sizeof(msg));
	ret = full_path(name, f->path, sizeof(f->path));
	if (ret) {
		cio_warn("%s: %s", name, strerror(-ret));
		err = MPI_ERR_BAD_FILE;
	} else if (cio_hints_resolve(&f->hints, f->path, info)) {
		err = MPI_ERR_INFO_VALUE;
	}
	cio_warn_hold(NULL, 0);
	v[0] = err ? rank : INT_MAX;
	v[1] = -err;
	v[2] = f->hints.handled;
	v[3] = -f->hints.handled;
	MPI_Allreduce(v, w, 4, MPI_INT, MPI_MIN, comm);
	if (w[0] == rank)
		fputs(msg, stderr);
	if (w[0] != INT_MAX)
		return -w[1];
	if (w[2] != -w[3]) {
		if (!rank)
			cio_warn("%s: e10_* hints on some ranks only (every rank must give the same)",
				 f->path);
		return MPI_ERR_INFO_VALUE;
	}
	return 0;
}

int cio_file_open(MPI_Comm comm, const char *name, int amode, MPI_Info info, MPI_File fh,
		  int *mpi_err)
{
	struct cio_file *f = calloc(1, sizeof(*f));
	int ret, flags;

	*mpi_err = MPI_ERR_NO_MEM;
	if (!f)
		return -ENOMEM;
	f->fh = fh;
	f->gfd = -1;
	f->comm = MPI_COMM_NULL;
	f->group = MPI_GROUP_NULL;
	*mpi_err = agree_hints(comm, f, name, info);
	if (*mpi_err)
		goto err;
	if (!f->hints.handled) {
		free(f);
		return 0;
	}
	MPI_Comm_dup(comm, &f->comm);
	MPI_Comm_group(f->comm, &f->group);
	MPI_Comm_rank(f->comm, &f->rank);
	MPI_Comm_size(f->comm, &f->nprocs);
	ret = cio_view_set(&f->view, 0, MPI_BYTE, MPI_BYTE);
	flags = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
	f->gfd = ret ? -1 : open(f->path, flags | O_CLOEXEC);
	if (!ret && f->gfd < 0) {
		ret = -errno;
		cio_warn("%s: %s", f->path, strerror(errno));
	}
	{
		int nagg = f->hints.cb_nodes > 0 && f->hints.cb_nodes < f->nprocs ?
			f->hints.cb_nodes : f->nprocs;

		for (int a = 0; a < nagg; a++)
			if ((int)((int64_t)a * f->nprocs / nagg) == f->rank)
				f->is_agg = 1;
	}
	if (!ret && f->is_agg && f->hints.cache != CIO_CACHE_DISABLE &&
	    !(amode & MPI_MODE_RDONLY))
		ret = cio_cache_open(&f->cache, &f->hints, f->path, f->gfd);
	if (agree_err(f->comm, ret)) {
		if (f->cache)
			cio_cache_close(f->cache);
		*mpi_err = MPI_ERR_IO;
		goto err;
	}
	f->next = open_files;
	open_files = f;
	return 0;
err:
	file_free(f);
	return -EIO;
}

static void unlink_open(struct cio_file *f)
{
	for (struct cio_file **p = &open_files; *p; p = &(*p)->next) {
		if (*p == f) {
			*p = f->next;
			return;
		}
	}
}

int cio_file_flush(struct cio_file *f)
{
	double t0 = MPI_Wtime();
	int ret = f->cache ? cio_cache_flush(f->cache) : 0;

	f->t[CIO_T_NOT_HIDDEN_SYNC] += MPI_Wtime() - t0;
	if (f->cache)
		f->t[CIO_T_SYNC] += cio_cache_sync_seconds(f->cache);
	if (ret)
		cio_warn("sync of %s to %s: %s", cio_cache_path(f->cache), f->path,
			 strerror(-ret));
	ret = ret ? ret : cio_file_deferred_error(f->group);
	return agree_err(f->comm, ret) ? MPI_ERR_IO : MPI_SUCCESS;
}

/* g's members are f's (in any order): a call collective over g is one every
 * rank of f's communicator makes. */
static int same_ranks(MPI_Group g, const struct cio_file *f)
{
	int res;

	MPI_Group_compare(g, f->group, &res);
	return res != MPI_UNEQUAL;
}

int cio_file_deferred_error(MPI_Group g)
{
	int ret = 0;

	for (struct cio_file *f = deferred; f; f = f->next) {
		int err = f->cache && same_ranks(g, f) ? cio_cache_error(f->cache) : 0;

		if (err)
			cio_warn("deferred close of %s: %s", f->path, strerror(-err));
		ret = ret ? ret : err;
	}
	return ret;
}

/* The end of a file: its cache flushed and closed, descriptors closed. */
static int file_finish(struct cio_file *f)
{
	int ret = 0, cret;

	if (f->cache) {
		ret = cio_cache_flush(f->cache);
		f->t[CIO_T_SYNC] += cio_cache_sync_seconds(f->cache);
		cret = cio_cache_close(f->cache);
		ret = ret ? ret : cret;
		f->cache = NULL;
	}
	if (ret)
		cio_warn("close of %s: %s", f->path, strerror(-ret));
	return ret;
}

int cio_file_close(struct cio_file *f)
{
	int ret, older;
	double t0 = MPI_Wtime();

	unlink_open(f);
	memset(f->t, 0, sizeof(f->t));
	older = cio_file_drain(f->group);
	/* every rank decides alike (non-aggregators have no cache but must not
	 * wait in an Allreduce the aggregators skip) */
	if (f->hints.deferred_close && f->hints.cache != CIO_CACHE_DISABLE) {
		struct cio_file **tail = &deferred;

		while (*tail)
			tail = &(*tail)->next;
		f->next = NULL;
		*tail = f;
		return older;
	}
	ret = file_finish(f);
	f->t[CIO_T_NOT_HIDDEN_SYNC] = MPI_Wtime() - t0;
	ret = agree_err(f->comm, ret);
	cio_file_report(f, "close", 0);
	file_free(f);
	return ret || older != MPI_SUCCESS ? MPI_ERR_IO : MPI_SUCCESS;
}

int cio_file_drain(MPI_Group g)
{
	int ret = MPI_SUCCESS;
	double t0 = MPI_Wtime();

	if (!deferred)
		return ret;
	for (struct cio_file **p = &deferred; *p;) {
		struct cio_file *f = *p;

		if (g != MPI_GROUP_NULL && !same_ranks(g, f)) {
			p = &f->next;
			continue;
		}
		*p = f->next;
		if (agree_err(f->comm, file_finish(f)))
			ret = MPI_ERR_IO;
		totals[CIO_T_SYNC] += f->t[CIO_T_SYNC];
		file_free(f);
	}
	totals[CIO_T_NOT_HIDDEN_SYNC] += MPI_Wtime() - t0;
	return ret;
}

int cio_file_drain_comm(MPI_Comm comm)
{
	MPI_Group g;
	int ret;

	if (!deferred)
		return MPI_SUCCESS;
	MPI_Comm_group(comm, &g);
	ret = cio_file_drain(g);
	MPI_Group_free(&g);
	return ret;
}

int loggp_collio_breakdown(double *t, int n)
{
	for (int i = 0; i < n && i < CIO_T_N; i++) {
		t[i] = totals[i];
		totals[i] = 0;
	}
	return CIO_T_N;
}

int loggp_collio_drain(void)
{
	return cio_file_drain(MPI_GROUP_NULL);
}

void cio_file_report(struct cio_file *f, const char *op, int64_t bytes)
{
	const char *path = getenv("LOGGP_COLLIO_STATS");
	double t[CIO_T_N];
	int64_t total;
	FILE *fp;

	for (int i = 0; i < CIO_T_N; i++)
		totals[i] += f->t[i];
	if (!path || !*path)
		return;
	MPI_Reduce(f->t, t, CIO_T_N, MPI_DOUBLE, MPI_MAX, 0, f->comm);
	MPI_Reduce(&bytes, &total, 1, MPI_INT64_T, MPI_SUM, 0, f->comm);
	if (f->rank || !(fp = fopen(path, "a")))
		return;
	fprintf(fp, "{\"op\": \"%s\", \"file\": \"%s\", \"bytes\": %lld", op, f->path,
		(long long)total);
	for (int i = 0; i < CIO_T_N; i++)
		fprintf(fp, ", \"%s\": %.9f", cio_phase_name[i], t[i]);
	fprintf(fp, "}\n");
	fclose(fp);
}
