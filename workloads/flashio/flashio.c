/* SPDX-License-Identifier: MIT */
/*
 * flashio: a Flash-IO-like checkpoint: every rank holds blocks of Z³ zones
 * (16³ by default, as FLASH's) of 24 double variables, base + rank mod 3
 * blocks per rank (FLASH's blocks per process vary), and each checkpoint
 * file stores every variable of every block, variable after variable, in
 * rank order: one MPI_File_write_at_all per variable (24 per file, as
 * FLASH's HDF5 writer issues them), a compute phase between files.
 *
 *   mpirun -np N flashio -f PATH [-B BLOCKS] [-z ZONES] [-n FILES] [-c MS]
 *                        [-H k=v,...] [-h]
 *
 * Every double is a function of (variable, global block, zone); the last
 * file is read back with MPI_File_read_at_all and checked (unless the hints
 * say flush_none).  Metrics as coll_perf's (workloads/common/wl_mpiio.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "wl.h"
#include "wl_mpiio.h"

#define FI_VARS 24

struct fi_opts {
	const char *path;
	int64_t blocks;
	int64_t zones;
	int64_t files;
	int64_t compute_ms;
	const char *hints;
};

static const char fi_usage[] =
	"usage: mpirun -np N flashio -f PATH [-B BLOCKS] [-z ZONES] [-n FILES] [-c MS]\n"
	"                            [-H k=v,...] [-h]\n"
	"  -f PATH    files PATH.0 .. PATH.FILES-1 (required)\n"
	"  -B BLOCKS  blocks of rank r: BLOCKS + r mod 3 (default 8)\n"
	"  -z ZONES   zones per side of a block (default 16)\n"
	"  -n FILES   checkpoint files (default 2)\n"
	"  -c MS      compute between files, milliseconds (default 0)\n"
	"  -H HINTS   MPI_Info hints of every open, KEY=VALUE[,KEY=VALUE...]\n"
	"  -h         this help\n"
	"Prints one JSON result line (docs/results.md): perceived_MBps, write_MBps,\n"
	"unhidden_sync_s, and collio's breakdown when it is loaded.\n";

static int fi_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct fi_opts *o = ctx;

	switch (c) {
	case 'f':
		o->path = arg;
		return 0;
	case 'B':
		return wl_opt_int(p, c, arg, 0, 4096, &o->blocks);
	case 'z':
		return wl_opt_int(p, c, arg, 1, 64, &o->zones);
	case 'n':
		return wl_opt_int(p, c, arg, 1, 100000, &o->files);
	case 'c':
		return wl_opt_int(p, c, arg, 0, 3600000, &o->compute_ms);
	case 'H':
		o->hints = arg;
		return 0;
	}
	return wl_opt_unknown(p, c);
}

static double fi_value(int v, int64_t block, int64_t zone)
{
	return v * 1e9 + block * 1e5 + zone;
}

/* Writes (or reads and checks) every variable; returns the MPI error or
 * the count of wrong values. */
static int fi_pass(MPI_File fh, double *buf, int64_t mine, int64_t first, int64_t total,
		   int64_t zb, int write)
{
	int ret = MPI_SUCCESS, bad = 0;

	for (int v = 0; v < FI_VARS && ret == MPI_SUCCESS; v++) {
		MPI_Offset off = ((MPI_Offset)v * total + first) * zb * (MPI_Offset)sizeof(double);

		for (int64_t b = 0; b < mine; b++)
			for (int64_t z = 0; z < zb; z++)
				buf[b * zb + z] = write ? fi_value(v, first + b, z) : -1;
		ret = write ? MPI_File_write_at_all(fh, off, buf, (int)(mine * zb), MPI_DOUBLE,
						    MPI_STATUS_IGNORE) :
			MPI_File_read_at_all(fh, off, buf, (int)(mine * zb), MPI_DOUBLE,
					     MPI_STATUS_IGNORE);
		for (int64_t b = 0; !write && b < mine; b++)
			for (int64_t z = 0; z < zb; z++)
				bad += buf[b * zb + z] != fi_value(v, first + b, z);
	}
	return ret != MPI_SUCCESS ? ret : bad;
}

int main(int argc, char **argv)
{
	struct wl_prog p = { .name = "flashio", .options = "-f, -B, -z, -n, -c, -H" };
	struct fi_opts o = { .blocks = 8, .zones = 16, .files = 2, .hints = "" };
	struct wl_metric metrics[3 + WL_IO_PHASES];
	struct wl_io io = { 0 };
	struct wl_msgs none = { 0 };
	struct wl_critical crit = { 0 };
	struct wl_result res;
	int64_t mine, first = 0, total, zb;
	MPI_Info info;
	double *buf;
	char name[4096];
	int ret, bad = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = wl_opt_getopt(&p, argc, argv, ":f:B:z:n:c:H:h", NULL, fi_usage, fi_opt, &o);
	if (!ret && !o.path) {
		if (!p.rank)
			fprintf(stderr, "flashio: -f PATH is required (the files' name)\n");
		ret = -EINVAL;
	}
	if (!ret)
		ret = wl_io_hints(&p, o.hints, &info);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	mine = o.blocks + p.rank % 3;
	MPI_Exscan(&mine, &first, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (!p.rank)
		first = 0;
	MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	zb = o.zones * o.zones * o.zones;
	buf = malloc((mine * zb + 1) * sizeof(double));
	for (int64_t f = 0; f < o.files; f++) {
		MPI_File fh;

		snprintf(name, sizeof(name), "%s.%lld", o.path, (long long)f);
		if (f)
			wl_io_compute(o.compute_ms);
		wl_io_begin(&io);
		if (MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, info,
				  &fh) != MPI_SUCCESS) {
			fprintf(stderr, "flashio: rank %d: cannot open %s\n", p.rank, name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		wl_io_write_begin(&io);
		ret = fi_pass(fh, buf, mine, first, total, zb, 1);
		wl_io_write_end(&io);
		ret |= MPI_File_close(&fh);
		wl_io_end(&io, (double)FI_VARS * mine * zb * sizeof(double));
		if (ret != MPI_SUCCESS) {
			fprintf(stderr, "flashio: rank %d: writing %s failed\n", p.rank, name);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	wl_io_finish(&io);
	if (!strstr(o.hints, "flush_none")) {
		MPI_File fh;

		MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, info, &fh);
		bad = fi_pass(fh, buf, mine, first, total, zb, 0);
		MPI_File_close(&fh);
		if (bad)
			fprintf(stderr, "flashio: rank %d: %s read back wrong\n", p.rank, name);
	}
	if (wl_result_reduce(&p, !bad, io.file_s + io.unhidden_s, &none, &crit, &res))
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (!p.rank) {
		struct wl_param params[] = {
			{ "blocks", o.blocks, NULL },
			{ "zones", o.zones, NULL },
			{ "files", o.files, NULL },
			{ "compute_ms", o.compute_ms, NULL },
			{ "hints", 0, *o.hints ? o.hints : "none" },
		};

		wl_result_print(stdout, &p, &res, metrics, wl_io_metrics(&io, metrics), params, 5);
	}
	wl_result_fini(&res);
	if (info != MPI_INFO_NULL)
		MPI_Info_free(&info);
	free(buf);
	MPI_Finalize();
	return 0;
}
