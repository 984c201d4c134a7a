/* SPDX-License-Identifier: MIT */
/*
 * nowsort: a one-pass disk-to-disk parallel sort after NOW-Sort.
 *
 *   mpirun -np N nowsort [-n RECORDS | -N TOTAL] [-c BYTES] [-d DIR] [-k]
 *                        [-s on|off] [-S SEED] [-X] [-h]
 *
 * Untimed: rank 0 makes a fresh directory DIR/nowsort-XXXXXX (DIR: -d, or
 * $TMPDIR, or /tmp) and every rank writes its input file in-<rank> there:
 * Datamation records (100 bytes, 10-byte key), a function of the seed and
 * the global record index.
 *
 * Timed, in three phases:
 *   read+distribute (ns_dist.c): read the input in chunks of -c bytes;
 *     each record goes to the send buffer of the rank owning its key range
 *     (a buffer of -c bytes per destination, two of them so that one fills
 *     while the other is in flight); a full buffer is sent as one bulk
 *     message when the next record for it comes, the last one (maybe empty)
 *     with its own tag.
 *     Between chunks the rank receives what has arrived, so reading,
 *     sending and receiving overlap as in NOW-Sort's pipeline.
 *   sort: the received records, by key (ns_sort.c).
 *   write: the sorted records to out-<rank> (fsync'd unless -s off).
 * read_s is the time inside read calls, comm_s the rest of the first phase
 * (bucketing, messages, waiting for the last ones), sort_s and write_s the
 * other two phases: the maximum over ranks of each.
 *
 * Validation (untimed): every rank reads its output file back; it must be
 * sorted, hold only keys the rank owns, and end where the next non-empty
 * rank's begins; the count, sum and xor of record hashes over all outputs
 * must equal those of all inputs (a permutation).  The directory is
 * removed at the end unless -k.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "ns.h"

#define NS_RECORDS	(4 << 20)
#define NS_RECORDS_MAX	(1LL << 28)
#define NS_CHUNK	(256 << 10)
#define NS_CHUNK_MAX	(64 << 20)
#define NS_TAG_WARM	53

struct ns_opts {
	int64_t per_rank;
	int64_t total;		/* overrides per_rank when > 0 */
	int64_t chunk;
	const char *dir;
	bool keep;
	bool sync;
	int64_t seed;
	bool corrupt;
};

static const char ns_usage[] =
	"usage: mpirun -np N nowsort [-n RECORDS | -N TOTAL] [-c BYTES] [-d DIR] [-k]\n"
	"                            [-s on|off] [-S SEED] [-X] [-h]\n"
	"  -n RECORDS  100-byte records per rank (default 4194304)\n"
	"  -N TOTAL    records in all, split as evenly as possible (overrides -n;\n"
	"              fewer than N leaves ranks without input)\n"
	"  -c BYTES    read chunk and bulk message size, suffix K or M (default\n"
	"              256K; rounded down to whole records)\n"
	"  -d DIR      where the run's directory is made (default $TMPDIR or /tmp)\n"
	"  -k          keep the run's directory and files\n"
	"  -s on|off   on (default): the input is forced to the device and dropped\n"
	"              from the page cache before the timed read, and the output\n"
	"              is fsync'd inside the timed write; off: page cache only\n"
	"  -S SEED     input records (default 1)\n"
	"  -X          testing: rank 0 damages one byte of the first records it\n"
	"              receives, which the check must catch (valid: false)\n"
	"  -h          this help\n"
	"Any N >= 1.  Prints one JSON result line (docs/results.md): metrics\n"
	"time_s, read_s, comm_s, sort_s, write_s, MBps.\n";

static int ns_opt(const struct wl_prog *p, int c, const char *arg, void *ctx)
{
	struct ns_opts *o = ctx;
	int ret, word = 0;

	switch (c) {
	case 'n':
		ret = wl_opt_int(p, c, arg, 1, NS_RECORDS_MAX, &o->per_rank);
		break;
	case 'N':
		ret = wl_opt_int(p, c, arg, 1, NS_RECORDS_MAX, &o->total);
		break;
	case 'c':
		ret = wl_opt_size(p, c, arg, NS_REC, NS_CHUNK_MAX, &o->chunk);
		break;
	case 'd':
		ret = 0;
		if (!arg || !*arg || strlen(arg) > PATH_MAX - 32) {
			if (!p->rank && arg)
				fprintf(stderr, "nowsort: bad value '%s' for -d: expected a directory path of 1 to %d bytes\n",
					arg, PATH_MAX - 32);
			else if (!p->rank)
				fprintf(stderr, "nowsort: option -d needs a value: expected a directory path\n");
			ret = -EINVAL;
		}
		o->dir = arg;
		break;
	case 'k':
		o->keep = true;
		ret = 0;
		break;
	case 's':
		ret = wl_opt_word(p, c, arg, (const char *const[]){ "off", "on" }, 2, "on or off",
				  &word);
		o->sync = word;
		break;
	case 'S':
		ret = wl_opt_int(p, c, arg, 0, INT64_MAX, &o->seed);
		break;
	case 'X':
		o->corrupt = true;
		ret = 0;
		break;
	default:
		return wl_opt_unknown(p, c);
	}
	return ret;
}

/* 0: run; 1: help shown; -EINVAL: bad options (reported by rank 0). */
static int ns_parse(const struct wl_prog *p, int argc, char **argv, struct ns_opts *o)
{
	int ret;

	ret = wl_opt_getopt(p, argc, argv, ":n:N:c:d:ks:S:Xh", NULL, ns_usage, ns_opt, o);
	if (ret)
		return ret;
	if (!o->total && wl_opt_per_rank(p, 'n', o->per_rank, NS_RECORDS_MAX, "records"))
		return -EINVAL;
	return 0;
}

static int ns_write(const char *path, int rank, const unsigned char *recs, int64_t n,
		    bool sync)
{
	struct ns_file f;
	int ret, ret2;

	ret = ns_file_open(&f, path, rank, true);
	if (ret)
		return ret;
	ret = ns_file_write(&f, recs, (size_t)n * NS_REC);
	ret2 = ns_file_close(&f, sync && !ret);
	return ret ? ret : ret2;
}

/* Untimed: one empty message between every pair makes the connections. */
static void ns_warmup(const struct wl_prog *p)
{
	MPI_Request *rq = malloc(sizeof(*rq) * 2 * (size_t)p->nranks);
	int i, k = 0;

	if (!rq)
		return;
	for (i = 0; i < p->nranks; i++) {
		if (i == p->rank)
			continue;
		MPI_Irecv(NULL, 0, MPI_BYTE, i, NS_TAG_WARM, MPI_COMM_WORLD, &rq[k++]);
		MPI_Isend(NULL, 0, MPI_BYTE, i, NS_TAG_WARM, MPI_COMM_WORLD, &rq[k++]);
	}
	MPI_Waitall(k, rq, MPI_STATUSES_IGNORE);
	free(rq);
}

/* The bytes of one rank's check that every rank sees. */
struct ns_edge {
	unsigned char first[NS_KEY], last[NS_KEY];
	int32_t has;
	int32_t bad;		/* records unsorted or not this rank's */
};

/*
 * Reads path back (n records) and checks it (collective): sorted, owned,
 * ordered across ranks, a permutation of the input.  1 ok, 0 wrong, < 0 an
 * I/O error (already reported; the verdict is then collective too).
 */
static int ns_check(const struct wl_prog *p, const char *path, unsigned char *buf, int64_t n,
		    const struct ns_sum *in)
{
	struct ns_sum out = { 0 }, sin, sout;
	struct ns_edge me = { .has = n > 0 }, *all = NULL;
	int64_t i;
	size_t got;
	struct ns_file f;
	unsigned char extra;
	int ret, err, ok = 1, r, prev = -1;

	ret = ns_file_open(&f, path, p->rank, false);
	if (!ret) {
		ret = ns_file_read(&f, buf, (size_t)n * NS_REC, &got);
		if (!ret && got == (size_t)n * NS_REC)
			ret = ns_file_read(&f, &extra, 1, &got);
		else if (!ret)
			got = 1;	/* short: reported below */
		if (!ret && got) {
			fprintf(stderr, "nowsort: rank %d: %s does not hold exactly %lld records\n",
				p->rank, path, (long long)n);
			ret = -EIO;
		}
		err = ns_file_close(&f, false);
		ret = ret ? ret : err;
	}
	MPI_Allreduce(&ret, &err, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (err)
		return err;
	for (i = 0; i < n; i++) {
		const unsigned char *rec = buf + i * NS_REC;

		ns_sum_add(&out, rec);
		if (ns_owner(rec, p->nranks) != p->rank ||
		    (i && memcmp(rec - NS_REC, rec, NS_KEY) > 0))
			me.bad++;
	}
	if (n) {
		memcpy(me.first, buf, NS_KEY);
		memcpy(me.last, buf + (n - 1) * NS_REC, NS_KEY);
	}
	all = malloc(sizeof(*all) * (size_t)p->nranks);
	ok = all != NULL;
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!ok) {
		free(all);
		return -ENOMEM;
	}
	MPI_Allgather(&me, sizeof(me), MPI_BYTE, all, sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	MPI_Allreduce(&in->count, &sin.count, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&in->sum, &sin.sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&in->xor, &sin.xor, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
	MPI_Allreduce(&out.count, &sout.count, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&out.sum, &sout.sum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(&out.xor, &sout.xor, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
	for (r = 0; r < p->nranks; r++) {
		if (all[r].bad) {
			ok = 0;
			if (!p->rank)
				fprintf(stderr, "nowsort: rank %d's output has %d records out of order or outside its key range\n",
					r, all[r].bad);
		}
		if (!all[r].has)
			continue;
		if (prev >= 0 && memcmp(all[prev].last, all[r].first, NS_KEY) > 0) {
			ok = 0;
			if (!p->rank)
				fprintf(stderr, "nowsort: rank %d's last key is above rank %d's first\n",
					prev, r);
		}
		prev = r;
	}
	if (sin.count != sout.count || sin.sum != sout.sum || sin.xor != sout.xor) {
		ok = 0;
		if (!p->rank)
			fprintf(stderr, "nowsort: the output is not a permutation of the input: %llu records in, %llu out, checksums %016llx/%016llx in, %016llx/%016llx out\n",
				(unsigned long long)sin.count, (unsigned long long)sout.count,
				(unsigned long long)sin.sum, (unsigned long long)sin.xor,
				(unsigned long long)sout.sum, (unsigned long long)sout.xor);
	}
	free(all);
	return ok;
}

int main(int argc, char **argv)
{
	struct wl_prog p = {
		.name = "nowsort",
		.options = "-n RECORDS, -N TOTAL, -c BYTES, -d DIR, -k, -s on|off, -S SEED, -X, -h",
	};
	struct ns_opts o = {
		.per_rank = NS_RECORDS, .chunk = NS_CHUNK, .sync = true, .seed = 1,
	};
	char dir[PATH_MAX], in[PATH_MAX + 16], out[PATH_MAX + 16];
	const char *paths[2] = { in, out };
	unsigned char *chunk = NULL, *sorted = NULL;
	struct ns_sum sum = { 0 };
	struct wl_msgs m = { 0 };
	struct ns_dist x = { 0 };
	struct wl_critical crit = { 0 };
	struct wl_result r;
	double t0, t1, t2, t3, ph[4] = { 0 }, phmax[4];
	int64_t total, lo, n, mine[3], most[3];
	bool made = false;
	int ret, ok;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &p.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &p.nranks);
	ret = ns_parse(&p, argc, argv, &o);
	if (ret) {
		MPI_Finalize();
		return ret > 0 ? 0 : WL_EXIT_USAGE;
	}
	if (!o.dir)
		o.dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	o.chunk -= o.chunk % NS_REC;
	total = o.total ? o.total : o.per_rank * p.nranks;
	wl_part(total, p.nranks, p.rank, &lo, &n);
	if (ns_dir_make(&p, o.dir, dir, sizeof(dir))) {
		MPI_Finalize();
		return 1;
	}
	made = true;
	snprintf(in, sizeof(in), "%s/in-%d", dir, p.rank);
	snprintf(out, sizeof(out), "%s/out-%d", dir, p.rank);
	chunk = malloc((size_t)o.chunk);
	if (!chunk) {
		fprintf(stderr, "nowsort: rank %d: out of memory for a chunk of %lld bytes\n",
			p.rank, (long long)o.chunk);
		goto err;
	}
	/* untimed: the input, the receive space, the connections */
	if (ns_gen(in, p.rank, (uint64_t)o.seed, lo, n, (size_t)o.chunk, o.sync, &sum))
		goto err;
	if (ns_dist_init(&x, &p, &m, (size_t)o.chunk / NS_REC,
			 total / p.nranks + total / p.nranks / 8 + 1024))
		goto err;
	x.corrupt = o.corrupt && p.rank == 0;
	ns_warmup(&p);

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	if (ns_distribute(&x, in, n, chunk, &ph[0]))
		goto err;
	t1 = MPI_Wtime();
	if (ns_sort(x.rbuf, x.rn, &sorted)) {
		fprintf(stderr, "nowsort: rank %d: out of memory to sort %lld records\n", p.rank,
			(long long)x.rn);
		goto err;
	}
	t2 = MPI_Wtime();
	if (ns_write(out, p.rank, sorted, x.rn, o.sync))
		goto err;
	t3 = MPI_Wtime();
	ph[1] = t1 - t0 - ph[0];
	ph[2] = t2 - t1;
	ph[3] = t3 - t2;

	ok = ns_check(&p, out, x.rbuf, x.rn, &sum);
	if (ok < 0) {
		if (ok == -ENOMEM)
			fprintf(stderr, "nowsort: rank %d: out of memory for the check\n", p.rank);
		goto err;
	}
	MPI_Allreduce(ph, phmax, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	/*
	 * The records stream one way: every rank sends while it reads, and no
	 * message waits for an answer, so the latencies overlap but for the
	 * last message's (path 1).  What does add up is each rank's own
	 * per-message work: the busiest sender's sends and the busiest
	 * receiver's receives each pay their overhead on that rank's CPU, and
	 * the busiest sender's bytes leave through its one port.
	 */
	mine[0] = m.sent;
	mine[1] = m.recvd;
	mine[2] = m.sent_bytes;
	MPI_Allreduce(mine, most, 3, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (p.nranks > 1)
		crit = (struct wl_critical){
			.path = 1, .sends = most[0], .recvs = most[1], .bytes = most[2],
		};
	if (wl_result_reduce(&p, ok, t3 - t0, &m, &crit, &r)) {
		fprintf(stderr, "nowsort: rank %d: out of memory for the result\n", p.rank);
		goto err;
	}
	if (!p.rank) {
		struct wl_metric metrics[] = {
			{ "read_s", phmax[0] },
			{ "comm_s", phmax[1] },
			{ "sort_s", phmax[2] },
			{ "write_s", phmax[3] },
			{ "MBps", (double)total * NS_REC / r.time_s / 1e6 },
		};
		struct wl_param params[] = {
			{ "records", total, NULL },
			{ "chunk", o.chunk, NULL },
			{ "seed", o.seed, NULL },
			{ "sync", 0, o.sync ? "on" : "off" },
			{ "keep", 0, o.keep ? "on" : "off" },
		};

		wl_result_print(stdout, &p, &r, metrics, 5, params, 5);
	}
	wl_result_fini(&r);
	if (o.keep) {
		if (!p.rank)
			fprintf(stderr, "nowsort: kept the input and output files in %s\n", dir);
	} else {
		ns_dir_remove(&p, dir, paths, 2);
	}
	ns_dist_fini(&x);
	free(sorted);
	free(chunk);
	MPI_Finalize();
	return 0;
err:
	/* this rank's files go; the directory stays if others' are still in it */
	if (made && !o.keep) {
		unlink(in);
		unlink(out);
		rmdir(dir);
	}
	ns_dist_fini(&x);
	free(sorted);
	free(chunk);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return 1;
}
