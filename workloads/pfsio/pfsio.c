/* SPDX-License-Identifier: MIT */
/*
 * pfsio: IOR-like reads and writes of one shared file of the parallel file
 * store (services/pfs) through its C library, from every rank.
 *
 *   mpirun -np N pfsio -i INSTANCE [-o write|read] [-p seq|strided|random]
 *                      [-b BLOCK] [-s BYTES] [-q DEPTH] [-w MS] [-S STRIPE] [-c COUNT] [-h]
 *
 * Each rank moves -s bytes in blocks of -b, keeping up to -q requests in
 * flight (the library's asynchronous calls).  Which blocks a rank owns:
 *   seq      a contiguous segment of the file per rank, in order;
 *   strided  block k of rank r at (k * N + r) * b, IOR's strided layout;
 *   random   the blocks of its segment in a seeded random order.
 * -o write times the writes and their pfs_fsync; -o read writes the file
 * first (untimed) and times the reads, which check every byte (a byte is a
 * function of its file offset).  Rank 0 creates the file with stripe size
 * -S and count -c (0: the directory's layout).  Rank 0 prints the result
 * line of docs/results.md: time_s (the slowest rank), MBps (all ranks'
 * bytes / time_s) and lat_us (each request's submit-to-completion time,
 * the mean over ranks).  libfabric carries every request (the shim's
 * knobs apply), no MPI message is in the timed region.  -w MS makes each
 * request wait for MS milliseconds of quiet first (nothing in flight), so
 * lat_us is the time of a request that finds the store idle; time_s and MBps
 * then include the quiet.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "pfs.h"
#include "wl.h"

#define PI_PATH		"/pfsio.dat"
#define PI_BLOCK	(1 << 20)
#define PI_SIZE		(16 << 20)
#define PI_DEPTH	4
#define PI_DEPTH_MAX	64
#define PI_SEED		12345

enum pi_op { PI_WRITE, PI_READ };
enum pi_pattern { PI_SEQ, PI_STRIDED, PI_RANDOM };

static const char *const pi_ops[] = { "write", "read" };
static const char *const pi_patterns[] = { "seq", "strided", "random" };

struct pi_opts {
	const char *instance;
	int op;
	int pattern;
	int64_t block;
	int64_t size;
	int64_t depth;
	int64_t quiet_ms;
	int64_t stripe_size;
	int64_t stripe_count;
};

static const char pi_usage[] =
	"usage: mpirun -np N pfsio -i INSTANCE [-o write|read] [-p seq|strided|random]\n"
	"                          [-b BLOCK] [-s BYTES] [-q DEPTH] [-w MS] [-S STRIPE] [-c COUNT] [-h]\n"
	"  -i INSTANCE  the file store's instance directory (required)\n"
	"  -o OP        write (timed writes and fsync) or read (timed, checked reads of a\n"
	"               file written first); default write\n"
	"  -p PATTERN   seq, strided or random blocks per rank (default seq)\n"
	"  -b BLOCK     bytes per request, suffix K or M (default 1M)\n"
	"  -s BYTES     bytes per rank, a multiple of BLOCK (default 16M)\n"
	"  -q DEPTH     requests in flight per rank, 1..64 (default 4)\n"
	"  -w MS        before each request, MS ms of quiet with nothing in flight, 0..10000\n"
	"               (default 0): lat_us of requests that find the store idle\n"
	"  -S STRIPE    stripe size of the new file (default 0: the directory's)\n"
	"  -c COUNT     stripe count of the new file, all: every server (default 0:\n"
	"               the directory's)\n"
	"  -h           this help\n"
	"Prints one JSON result line (docs/results.md): metrics time_s, MBps, lat_us.\n";

static unsigned char pi_byte(uint64_t off)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ULL;

	return (unsigned char)(x >> 56 ^ off);
}

static void pi_fill(unsigned char *buf, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pi_byte(off + i);
}

static int64_t pi_check(const unsigned char *buf, size_t len, uint64_t off)
{
	int64_t bad = 0;

	for (size_t i = 0; i < len; i++)
		bad += buf[i] != pi_byte(off + i);
	return bad;
}

/* File offset of the k-th block rank r moves. */
static uint64_t pi_offset(const struct pi_opts *o, const struct wl_prog *p,
			  const int64_t *perm, int64_t k)
{
	int64_t nblocks = o->size / o->block;

	switch (o->pattern) {
	case PI_STRIDED:
		return (uint64_t)((k * p->nranks + p->rank) * o->block);
	case PI_RANDOM:
		return (uint64_t)((p->rank * nblocks + perm[k]) * o->block);
	default:
		return (uint64_t)((p->rank * nblocks + k) * o->block);
	}
}

/* A seeded shuffle of 0..n-1, the same on every run of a rank. */
static void pi_shuffle(int64_t *perm, int64_t n, int rank)
{
	unsigned int seed = PI_SEED + (unsigned int)rank;

	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = rand_r(&seed) % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

struct pi_run {
	pfs_file_t *f;
	unsigned char *bufs;	/* depth blocks */
	pfs_aio_t **aio;
	double *submitted;
	uint64_t *offs;
	double lat_sum;
	int64_t bad;
	int err;
};

/* Waits for slot s; checks a read's bytes. */
static void pi_reap(struct pi_run *r, const struct pi_opts *o, int s, bool reading)
{
	ssize_t got = pfs_aio_wait(r->aio[s]);
	unsigned char *buf = r->bufs + (size_t)s * (size_t)o->block;

	r->aio[s] = NULL;
	r->lat_sum += MPI_Wtime() - r->submitted[s];
	if (got != o->block) {
		if (!r->err)
			r->err = got < 0 ? (int)got : -EIO;
		return;
	}
	if (reading)
		r->bad += pi_check(buf, (size_t)o->block, r->offs[s]);
}

/* Moves every block of this rank, depth at a time; 0 or a negative errno. */
static int pi_pass(struct pi_run *r, const struct pi_opts *o, const struct wl_prog *p,
		   const int64_t *perm, bool reading)
{
	int64_t nblocks = o->size / o->block, k;
	int depth = (int)o->depth;

	for (k = 0; k < nblocks && !r->err; k++) {
		int s = (int)(k % depth);
		unsigned char *buf = r->bufs + (size_t)s * (size_t)o->block;
		int ret;

		if (o->quiet_ms) {
			struct timespec q = { o->quiet_ms / 1000, (o->quiet_ms % 1000) * 1000000 };

			for (int i = 0; i < depth; i++)
				if (r->aio[i])
					pi_reap(r, o, i, reading);
			nanosleep(&q, NULL);
		}
		if (r->aio[s])
			pi_reap(r, o, s, reading);
		r->offs[s] = pi_offset(o, p, perm, k);
		if (!reading)
			pi_fill(buf, (size_t)o->block, r->offs[s]);
		r->submitted[s] = MPI_Wtime();
		ret = reading ? pfs_aio_pread(r->f, buf, (size_t)o->block, r->offs[s], &r->aio[s]) :
				pfs_aio_pwrite(r->f, buf, (size_t)o->block, r->offs[s], &r->aio[s]);
		if (ret) {
			r->aio[s] = NULL;
			r->err = ret;
		}
	}
	for (int s = 0; s < depth; s++)
		if (r->aio[s])
			pi_reap(r, o, s, reading);
	if (!r->err && !reading)
		r->err = pfs_fsync(r->f);
	return r->err;
}

static int pi_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct pi_opts *o = ctx;

	switch (c) {
	case 'i':
		o->instance = arg;
		return 0;
	case 'o':
		return wl_opt_word(p, c, arg, pi_ops, 2, "write or read", &o->op);
	case 'p':
		return wl_opt_word(p, c, arg, pi_patterns, 3, "seq, strided or random",
				   &o->pattern);
	case 'b':
		return wl_opt_size(p, c, arg, 1, 64 << 20, &o->block);
	case 's':
		return wl_opt_size(p, c, arg, 1, (int64_t)1 << 40, &o->size);
	case 'q':
		return wl_opt_int(p, c, arg, 1, PI_DEPTH_MAX, &o->depth);
	case 'w':
		return wl_opt_int(p, c, arg, 0, 10000, &o->quiet_ms);
	case 'S':
		return wl_opt_size(p, c, arg, 0, 64 << 20, &o->stripe_size);
	case 'c':
		if (arg && !strcmp(arg, "all")) {
			o->stripe_count = -1;
			return 0;
		}
		return wl_opt_int(p, c, arg, 0, 1024, &o->stripe_count);
	default:
		return wl_opt_unknown(p, c);
	}
}

static int pi_parse(const struct wl_prog *p, int argc, char **argv, struct pi_opts *o)
{
	int ret = wl_opt_getopt(p, argc, argv, ":i:o:p:b:s:q:w:S:c:h", NULL, pi_usage, pi_opt, o);

	if (ret)
		return ret;
	if (!o->instance) {
		if (!p->rank)
			fprintf(stderr, "pfsio: -i INSTANCE is required (the store's instance "
				"directory)\n");
		return -EINVAL;
	}
	if (o->size % o->block) {
		if (!p->rank)
			fprintf(stderr, "pfsio: -s %lld is not a multiple of -b %lld\n",
				(long long)o->size, (long long)o->block);
		return -EINVAL;
	}
	return 0;
}

/* Rank 0 creates the file, the others open it once it exists. */
static int pi_open(pfs_t *fs, const struct wl_prog *p, const struct pi_opts *o,
		   pfs_file_t **f)
{
	int ret = 0, all;

	if (!p->rank)
		ret = pfs_create(fs, PI_PATH, O_RDWR | O_CREAT | O_TRUNC, 0644,
				 (uint64_t)o->stripe_size, (int)o->stripe_count, f);
	MPI_Allreduce(&ret, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (all)
		return all;
	if (p->rank)
		ret = pfs_open(fs, PI_PATH, O_RDWR, 0, f);
	return ret;
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "pfsio",
		.options = "-i INSTANCE, -o OP, -p PATTERN, -b BLOCK, -s BYTES, -q DEPTH, "
			   "-w MS, -S STRIPE, -c COUNT, -h",
	};
	struct pi_opts o = { .block = PI_BLOCK, .size = PI_SIZE, .depth = PI_DEPTH };
	struct pi_run r = { 0 };
	struct wl_msgs m = { 0 };
	struct wl_critical crit;
	struct wl_result res;
	int64_t *perm = NULL, nblocks, waves;
	pfs_t *fs = NULL;
	double t0, t = 0, lat = 0;
	int ret, err;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = pi_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	nblocks = o.size / o.block;
	r.bufs = malloc((size_t)o.depth * (size_t)o.block);
	r.aio = calloc((size_t)o.depth, sizeof(*r.aio));
	r.submitted = calloc((size_t)o.depth, sizeof(*r.submitted));
	r.offs = calloc((size_t)o.depth, sizeof(*r.offs));
	perm = malloc(sizeof(*perm) * (size_t)nblocks);
	if (!r.bufs || !r.aio || !r.submitted || !r.offs || !perm) {
		fprintf(stderr, "pfsio: rank %d: out of memory for %lld blocks of %lld bytes\n",
			p.rank, (long long)o.depth, (long long)o.block);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	pi_shuffle(perm, nblocks, p.rank);
	ret = pfs_connect(o.instance, NULL, &fs);
	if (!ret)
		ret = pi_open(fs, &p, &o, &r.f);
	if (!ret && o.op == PI_READ)
		ret = pi_pass(&r, &o, &p, perm, false);
	MPI_Allreduce(&ret, &err, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (err) {
		if (ret)
			fprintf(stderr, "pfsio: rank %d: %s\n", p.rank, pfs_errmsg());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	r.lat_sum = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	ret = pi_pass(&r, &o, &p, perm, o.op == PI_READ);
	t = MPI_Wtime() - t0;
	if (ret)
		fprintf(stderr, "pfsio: rank %d: %s\n", p.rank, pfs_errmsg());
	if (r.bad)
		fprintf(stderr, "pfsio: rank %d: %lld bytes read back wrong\n", p.rank,
			(long long)r.bad);
	MPI_Allreduce(&ret, &err, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (err)
		MPI_Abort(MPI_COMM_WORLD, 1);
	lat = r.lat_sum / (double)nblocks;
	MPI_Allreduce(MPI_IN_PLACE, &lat, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	/* one round trip to a server per request, depth of them overlapping */
	waves = (nblocks + o.depth - 1) / o.depth;
	crit = (struct wl_critical){
		.path = 2 * waves, .sends = waves, .recvs = waves, .bytes = o.size,
	};
	if (wl_result_reduce(&p, !r.bad, t, &m, &crit, &res)) {
		fprintf(stderr, "pfsio: rank %d: out of memory for the result\n", p.rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "MBps", (double)o.size * p.nranks / res.time_s / 1e6 },
			{ "lat_us", lat / p.nranks * 1e6 },
		};
		struct wl_param params[] = {
			{ "op", 0, pi_ops[o.op] },
			{ "pattern", 0, pi_patterns[o.pattern] },
			{ "block", o.block, NULL },
			{ "size", o.size, NULL },
			{ "depth", o.depth, NULL },
			{ "quiet_ms", o.quiet_ms, NULL },
		};

		wl_result_print(stdout, &p, &res, metrics, 2, params, 6);
	}
	wl_result_fini(&res);
	pfs_close(r.f);
	pfs_disconnect(fs);
	free(r.bufs);
	free(r.aio);
	free(r.submitted);
	free(r.offs);
	free(perm);
	MPI_Finalize();
	return 0;
}
