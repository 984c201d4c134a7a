/* SPDX-License-Identifier: MIT */
/* wl_mpiio.c: the MPI-IO workloads' shared parts (wl_mpiio.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collio.h"
#include "wl_mpiio.h"

static const char *const phase_metric[WL_IO_PHASES] = {
	"all2all_s", "shuffle_s", "waitall_s", "write_phase_s", "post_write_s", "sync_s",
	"not_hidden_sync_s",
};

static int io_hints(const struct wl_prog *p, const char *hints, MPI_Info *info)
{
	char *copy = strdup(hints), *save = NULL;
	int ret = 0;

	*info = MPI_INFO_NULL;
	if (!copy)
		return -ENOMEM;
	if (*copy)
		MPI_Info_create(info);
	for (char *kv = strtok_r(copy, ",", &save); kv && !ret; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		if (!eq || eq == kv) {
			if (!p->rank)
				fprintf(stderr, "%s: bad hint '%s' in -H: expected KEY=VALUE[,KEY=VALUE...]\n",
					p->name, kv);
			ret = -EINVAL;
			break;
		}
		*eq = 0;
		MPI_Info_set(*info, kv, eq + 1);
	}
	free(copy);
	return ret;
}

void wl_io_compute(int64_t ms)
{
	double end = MPI_Wtime() + ms * 1e-3;
	volatile double x = 1.0;

	while (MPI_Wtime() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 1e-9;
}

static void io_begin(struct wl_io *io)
{
	MPI_Barrier(MPI_COMM_WORLD);
	io->t_open = MPI_Wtime();
}

static void io_write_begin(struct wl_io *io)
{
	io->t_write = MPI_Wtime();
}

static void io_write_end(struct wl_io *io)
{
	io->t_write = MPI_Wtime() - io->t_write;
}

static void io_end(struct wl_io *io, double bytes_this_rank)
{
	double mine[3] = { MPI_Wtime() - io->t_open, io->t_write, 0 }, max[3], bytes;

	MPI_Allreduce(mine, max, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(&bytes_this_rank, &bytes, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	io->file_s += max[0];
	io->write_s += max[1];
	io->bytes += bytes;
}

void wl_io_finish(struct wl_io *io, const struct wl_prog *p)
{
	__typeof__(loggp_collio_drain) *drain = dlsym(RTLD_DEFAULT, "loggp_collio_drain");
	__typeof__(loggp_collio_breakdown) *breakdown =
		dlsym(RTLD_DEFAULT, "loggp_collio_breakdown");
	double t0, wait, mine[WL_IO_PHASES] = { 0 };

	io->collio = drain && breakdown;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (drain && drain() != MPI_SUCCESS) {
		/* Agreed by the file's ranks: its cached data never reached it. */
		fprintf(stderr, "%s: rank %d: a deferred close failed: cached data did not "
			"reach its file\n", p->name, p->rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	wait = MPI_Wtime() - t0;
	MPI_Allreduce(&wait, &io->unhidden_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	if (breakdown)
		breakdown(mine, WL_IO_PHASES);
	MPI_Allreduce(mine, io->phase_s, WL_IO_PHASES, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static int io_metrics(const struct wl_io *io, struct wl_metric *out)
{
	int n = 0;

	out[n++] = (struct wl_metric){ "perceived_MBps",
				       io->bytes / (io->file_s + io->unhidden_s) / 1e6 };
	out[n++] = (struct wl_metric){ "write_MBps", io->bytes / io->write_s / 1e6 };
	out[n++] = (struct wl_metric){ "unhidden_sync_s", io->unhidden_s };
	for (int i = 0; io->collio && i < WL_IO_PHASES; i++)
		out[n++] = (struct wl_metric){ phase_metric[i], io->phase_s[i] };
	return n;
}

int wl_io_opt(const struct wl_prog *p, int c, const char *arg, struct wl_io_opts *o)
{
	switch (c) {
	case 'f':
		o->path = arg;
		return 0;
	case 'n':
		return wl_opt_int(p, c, arg, 1, 100000, &o->files);
	case 'c':
		return wl_opt_int(p, c, arg, 0, 3600000, &o->compute_ms);
	case 'H':
		o->hints = arg;
		return 0;
	}
	return 1;
}

int wl_io_setup(const struct wl_prog *p, const struct wl_io_opts *o, struct wl_io *io)
{
	if (!o->path) {
		if (!p->rank)
			fprintf(stderr, "%s: -f PATH is required (the files' name)\n", p->name);
		return -EINVAL;
	}
	return io_hints(p, o->hints, &io->info);
}

void wl_io_open(struct wl_io *io, const struct wl_prog *p, const struct wl_io_opts *o,
		int64_t f, int amode, MPI_File *fh)
{
	snprintf(io->name, sizeof(io->name), "%s.%lld", o->path, (long long)f);
	io_begin(io);
	if (MPI_File_open(MPI_COMM_WORLD, io->name, amode, io->info, fh) != MPI_SUCCESS) {
		fprintf(stderr, "%s: rank %d: cannot open %s\n", p->name, p->rank, io->name);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	io_write_begin(io);
}

void wl_io_close(struct wl_io *io, const struct wl_prog *p, MPI_File *fh, int ret,
		 double bytes_this_rank)
{
	io_write_end(io);
	ret |= MPI_File_close(fh);
	io_end(io, bytes_this_rank);
	if (ret != MPI_SUCCESS) {
		fprintf(stderr, "%s: rank %d: writing %s failed\n", p->name, p->rank, io->name);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

int wl_io_checkable(const struct wl_io_opts *o)
{
	return !strstr(o->hints, "flush_none");
}

void wl_io_report(struct wl_io *io, const struct wl_prog *p, int valid,
		  const struct wl_param *params, int nparams)
{
	struct wl_metric metrics[3 + WL_IO_PHASES];
	struct wl_msgs none = { 0 };
	struct wl_critical crit = { 0 };
	struct wl_result res;

	if (wl_result_reduce(p, valid, io->file_s + io->unhidden_s, &none, &crit, &res))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!p->rank)
		wl_result_print(stdout, p, &res, metrics, io_metrics(io, metrics), params, nparams);
	wl_result_fini(&res);
	if (io->info != MPI_INFO_NULL)
		MPI_Info_free(&io->info);
}
