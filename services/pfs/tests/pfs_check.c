/*
 * pfs_check: programs that tests/test_pfs.py runs against a PFS instance
 * through the C API (pfs.h).  Every mode prints one JSON line at the end
 * and exits 0 only if every check passed.
 *
 *   pfs_check fsx -i DIR [-c CLIENTS] [-n OPS] [-s SEED] [-m MAXLEN]
 *                 [-S STRIPE] [-C COUNT] [-t MS]
 *       fsx-style random operations (writes, reads, truncates, sizes,
 *       fsyncs, batches of asynchronous writes and reads) at random offsets
 *       and sizes, each by a random one of CLIENTS connections, checked
 *       against a model of the file kept in memory.
 *   pfs_check writer -i DIR [-t MS]
 *       writes 64 KiB blocks to /durable with an fsync after every 4, and
 *       prints "acked BYTES" after each fsync, until a call fails: then
 *       "error ERRNO MESSAGE", exit 1.
 *   pfs_check verify -i DIR -b BYTES [-t MS]
 *       reads /durable and checks its first BYTES bytes.
 *   pfs_check append -i DIR [-c CLIENTS] [-n RECORDS] [-t MS]
 *       CLIENTS connections, one thread each, start together (a barrier)
 *       and append RECORDS lines each to /appends (O_APPEND); then every
 *       line must be in the file exactly once and nothing else.
 *   pfs_check readlat -i DIR [-n READS] [-l BYTES] [-q MS] [-t MS]
 *       the minimum, median, mean and maximum time of a pread of BYTES (4 KiB; at
 *       most one 1 MiB stripe unit) through the library;
 *       with -q, each read after MS milliseconds of quiet (the client and
 *       the servers idle), to show that an idle service answers as fast as
 *       a busy one.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pfs.h"

#define MAX_CLIENTS 8
#define AIO_BATCH 6
#define BLOCK (64u << 10)

static const char *instance;
static struct pfs_opts opts;
static unsigned nclients = 3, nops = 400, maxlen = 200000, seed = 1, quiet_ms, readlen = 4096;
static uint64_t stripe = 16384, bytes_acked;
static int stripe_count = -1;

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static unsigned char pattern(uint64_t off)
{
	uint64_t x = (off + 1) * 0x9e3779b97f4a7c15ULL;
	return (unsigned char)(x >> 56);
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int die(const char *mode, const char *what, long ret)
{
	printf("{\"pfs_check\": \"%s\", \"ok\": false, \"error\": \"%s: %s (%ld)\"}\n", mode,
	       what, pfs_errmsg(), ret);
	return 1;
}

static int connect_one(pfs_t **p)
{
	return pfs_connect(instance, &opts, p);
}

/* The model: the file's bytes and size. */
static unsigned char *model;
static uint64_t model_size, model_cap;

static void model_grow(uint64_t size)
{
	if (size > model_cap) {
		uint64_t cap = size * 2;
		model = realloc(model, cap);
		memset(model + model_cap, 0, cap - model_cap);
		model_cap = cap;
	}
}

static void model_write(uint64_t off, const unsigned char *buf, uint64_t len)
{
	model_grow(off + len);
	memcpy(model + off, buf, len);
	if (off + len > model_size)
		model_size = off + len;
}

static void model_truncate(uint64_t size)
{
	model_grow(size);
	if (size < model_size)
		memset(model + size, 0, model_size - size);
	model_size = size;
}

static int failures;

static void check_read(const char *what, unsigned op, uint64_t off, uint64_t len,
		       const unsigned char *got, ssize_t n)
{
	uint64_t want = off < model_size ? (model_size - off < len ? model_size - off : len) : 0;
	if ((uint64_t)n != want) {
		fprintf(stderr, "op %u %s %" PRIu64 "+%" PRIu64 ": %zd bytes, expected %" PRIu64
				" (size %" PRIu64 ")\n", op, what, off, len, n, want, model_size);
		failures++;
		return;
	}
	for (uint64_t i = 0; i < want; i++)
		if (got[i] != model[off + i]) {
			fprintf(stderr, "op %u %s %" PRIu64 "+%" PRIu64 ": byte %" PRIu64
					" is %u, expected %u\n", op, what, off, len, off + i,
				got[i], model[off + i]);
			failures++;
			return;
		}
}

static int fsx(void)
{
	pfs_t *c[MAX_CLIENTS];
	pfs_file_t *f[MAX_CLIENTS];
	unsigned char *buf = malloc(maxlen), *rbuf = malloc(maxlen);
	unsigned char *abuf[AIO_BATCH];
	unsigned counts[6] = {0};
	long ret;
	char path[64];
	snprintf(path, sizeof path, "/fsx-%u", seed);
	for (unsigned i = 0; i < nclients; i++)
		if ((ret = connect_one(&c[i])))
			return die("fsx", "connect", ret);
	if ((ret = pfs_create(c[0], path, O_RDWR | O_CREAT | O_TRUNC, 0644, stripe,
			      stripe_count, &f[0])))
		return die("fsx", "create", ret);
	for (unsigned i = 1; i < nclients; i++)
		if ((ret = pfs_open(c[i], path, O_RDWR, 0, &f[i])))
			return die("fsx", "open", ret);
	for (unsigned i = 0; i < AIO_BATCH; i++)
		abuf[i] = malloc(maxlen / AIO_BATCH + 1);
	uint64_t max_size = (uint64_t)maxlen * 8;
	for (unsigned op = 0; op < nops; op++) {
		pfs_file_t *fc = f[below(nclients)];
		unsigned kind = (unsigned)below(100);
		uint64_t off = below(max_size), len = 1 + below(maxlen);
		if (kind < 35) {		/* write */
			counts[0]++;
			for (uint64_t i = 0; i < len; i++)
				buf[i] = (unsigned char)rnd();
			if ((ret = pfs_pwrite(fc, buf, len, off)) != (long)len)
				return die("fsx", "pwrite", ret);
			model_write(off, buf, len);
		} else if (kind < 65) {		/* read, often near the end */
			counts[1]++;
			if (kind < 50 && model_size)
				off = model_size - below(model_size < len ? model_size : len);
			ssize_t n = pfs_pread(fc, rbuf, len, off);
			if (n < 0)
				return die("fsx", "pread", n);
			check_read("pread", op, off, len, rbuf, n);
		} else if (kind < 75) {		/* truncate up or down */
			counts[2]++;
			uint64_t size = below(max_size);
			if ((ret = pfs_ftruncate(fc, size)))
				return die("fsx", "ftruncate", ret);
			model_truncate(size);
		} else if (kind < 85) {		/* size */
			counts[3]++;
			struct pfs_attr st;
			if ((ret = pfs_fstat(fc, &st)))
				return die("fsx", "fstat", ret);
			if (st.size != model_size) {
				fprintf(stderr, "op %u fstat: size %" PRIu64 ", expected %" PRIu64 "\n",
					op, st.size, model_size);
				failures++;
			}
		} else if (kind < 90) {		/* fsync */
			counts[4]++;
			if ((ret = pfs_fsync(fc)))
				return die("fsx", "fsync", ret);
		} else {			/* async batch: disjoint writes, then reads */
			counts[5]++;
			pfs_aio_t *a[AIO_BATCH];
			uint64_t piece = maxlen / AIO_BATCH, base = below(max_size);
			for (unsigned i = 0; i < AIO_BATCH; i++) {
				for (uint64_t k = 0; k < piece; k++)
					abuf[i][k] = (unsigned char)rnd();
				if ((ret = pfs_aio_pwrite(f[i % nclients], abuf[i], piece,
							  base + i * piece, &a[i])))
					return die("fsx", "aio_pwrite", ret);
			}
			for (unsigned i = 0; i < AIO_BATCH; i++) {
				if ((ret = pfs_aio_wait(a[i])) != (long)piece)
					return die("fsx", "aio_pwrite wait", ret);
				model_write(base + i * piece, abuf[i], piece);
			}
			for (unsigned i = 0; i < AIO_BATCH; i++)
				if ((ret = pfs_aio_pread(f[(i + 1) % nclients], abuf[i], piece,
							 base + i * piece, &a[i])))
					return die("fsx", "aio_pread", ret);
			for (unsigned i = 0; i < AIO_BATCH; i++) {
				ssize_t n = pfs_aio_wait(a[i]);
				if (n < 0)
					return die("fsx", "aio_pread wait", n);
				check_read("aio_pread", op, base + i * piece, piece, abuf[i], n);
			}
		}
	}
	/* The whole file, by another client. */
	unsigned char *all = malloc(model_size + 1);
	ssize_t n = pfs_pread(f[nclients - 1], all, model_size + 1, 0);
	if (n < 0)
		return die("fsx", "final pread", n);
	check_read("final pread", nops, 0, model_size + 1, all, n);
	free(all);
	for (unsigned i = 0; i < nclients; i++) {
		pfs_close(f[i]);
		pfs_disconnect(c[i]);
	}
	for (unsigned i = 0; i < AIO_BATCH; i++)
		free(abuf[i]);
	free(buf);
	free(rbuf);
	free(model);
	printf("{\"pfs_check\": \"fsx\", \"ok\": %s, \"failures\": %d, \"ops\": %u, "
	       "\"writes\": %u, \"reads\": %u, \"truncates\": %u, \"stats\": %u, "
	       "\"fsyncs\": %u, \"aio_batches\": %u, \"size\": %" PRIu64 "}\n",
	       failures ? "false" : "true", failures, nops, counts[0], counts[1], counts[2],
	       counts[3], counts[4], counts[5], model_size);
	return failures != 0;
}

static int writer(void)
{
	pfs_t *p;
	pfs_file_t *f;
	long ret;
	static unsigned char buf[BLOCK];
	if ((ret = connect_one(&p)))
		return die("writer", "connect", ret);
	if ((ret = pfs_create(p, "/durable", O_WRONLY | O_CREAT | O_TRUNC, 0644, BLOCK, -1, &f)))
		return die("writer", "create", ret);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (uint64_t off = 0;; off += BLOCK) {
		for (unsigned i = 0; i < BLOCK; i++)
			buf[i] = pattern(off + i);
		if ((ret = pfs_pwrite(f, buf, BLOCK, off)) != BLOCK ||
		    ((off / BLOCK) % 4 == 3 && (ret = pfs_fsync(f)))) {
			printf("error %ld %s\n", -ret, pfs_errmsg());
			pfs_close(f);
			pfs_disconnect(p);
			return 1;
		}
		if ((off / BLOCK) % 4 == 3)
			printf("acked %" PRIu64 "\n", off + BLOCK);
	}
}

static int verify(void)
{
	pfs_t *p;
	pfs_file_t *f;
	long ret;
	if ((ret = connect_one(&p)))
		return die("verify", "connect", ret);
	if ((ret = pfs_open(p, "/durable", O_RDONLY, 0, &f)))
		return die("verify", "open", ret);
	unsigned char *buf = malloc(bytes_acked + 1);
	ssize_t n = pfs_pread(f, buf, bytes_acked, 0);
	if (n < 0)
		return die("verify", "pread", n);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < (uint64_t)n; i++)
		bad += buf[i] != pattern(i);
	int ok = (uint64_t)n == bytes_acked && !bad;
	printf("{\"pfs_check\": \"verify\", \"ok\": %s, \"bytes\": %zd, \"expected\": %" PRIu64
	       ", \"bad_bytes\": %" PRIu64 "}\n", ok ? "true" : "false", n, bytes_acked, bad);
	free(buf);
	pfs_close(f);
	pfs_disconnect(p);
	return !ok;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static int readlat(void)
{
	pfs_t *p;
	pfs_file_t *f;
	long ret;
	if ((ret = connect_one(&p)))
		return die("readlat", "connect", ret);
	if ((ret = pfs_create(p, "/readlat", O_RDWR | O_CREAT | O_TRUNC, 0644, 0, 1, &f)))
		return die("readlat", "create", ret);
	unsigned char *buf = malloc(readlen);
	memset(buf, 7, readlen);
	if ((ret = pfs_pwrite(f, buf, readlen, 0)) != (long)readlen)
		return die("readlat", "pwrite", ret);
	double *t = malloc(sizeof *t * nops);
	struct timespec quiet = { quiet_ms / 1000, (long)(quiet_ms % 1000) * 1000000 };
	for (unsigned i = 0; i < nops; i++) {
		/* The quiet is the program's own think time, outside the timing. */
		if (quiet_ms)
			nanosleep(&quiet, NULL);
		double t0 = now_us();
		if ((ret = pfs_pread(f, buf, readlen, 0)) != (long)readlen || buf[readlen - 1] != 7)
			return die("readlat", "pread", ret);
		t[i] = now_us() - t0;
	}
	double sum = 0;
	for (unsigned i = 0; i < nops; i++)
		sum += t[i];
	qsort(t, nops, sizeof *t, cmp_double);
	printf("{\"pfs_check\": \"readlat\", \"ok\": true, \"reads\": %u, \"bytes\": %u, "
	       "\"quiet_ms\": %u, \"min_us\": %.1f, \"median_us\": %.1f, \"mean_us\": %.1f, "
	       "\"max_us\": %.1f}\n",
	       nops, readlen, quiet_ms, t[0], t[nops / 2], sum / nops, t[nops - 1]);
	free(t);
	free(buf);
	pfs_close(f);
	pfs_disconnect(p);
	return 0;
}

#define RECORD_LEN 24

static pthread_barrier_t start_line;

struct appender {
	pfs_t *p;
	unsigned id;
	int ret;
	char error[256];
};

/* Exactly RECORD_LEN bytes for client < 100 and i < 10^6 (main checks). */
static void record(char *buf, unsigned client, unsigned i)
{
	char line[64];
	snprintf(line, sizeof line, "client %02u record %06u\n", client % 100, i % 1000000);
	memcpy(buf, line, RECORD_LEN + 1);
}

static void *append_all(void *arg)
{
	struct appender *a = arg;
	pfs_file_t *f;
	char line[RECORD_LEN + 1];
	pthread_barrier_wait(&start_line);
	a->ret = pfs_open(a->p, "/appends", O_WRONLY | O_APPEND, 0, &f);
	for (unsigned i = 0; !a->ret && i < nops; i++) {
		record(line, a->id, i);
		ssize_t n = pfs_write(f, line, RECORD_LEN);
		if (n != RECORD_LEN)
			a->ret = n < 0 ? (int)n : -EIO;
	}
	if (a->ret)
		snprintf(a->error, sizeof a->error, "%s", pfs_errmsg());
	else
		pfs_close(f);
	return NULL;
}

static int append(void)
{
	struct appender a[MAX_CLIENTS] = {0};
	pthread_t t[MAX_CLIENTS];
	pfs_file_t *f;
	int ret;
	for (unsigned c = 0; c < nclients; c++) {
		a[c].id = c;
		if ((ret = connect_one(&a[c].p)))
			return die("append", "connect", ret);
	}
	if ((ret = pfs_create(a[0].p, "/appends", O_RDWR | O_CREAT | O_TRUNC, 0644, stripe,
			      stripe_count, &f)))
		return die("append", "create", ret);
	pfs_close(f);
	pthread_barrier_init(&start_line, NULL, nclients);
	for (unsigned c = 0; c < nclients; c++)
		pthread_create(&t[c], NULL, append_all, &a[c]);
	for (unsigned c = 0; c < nclients; c++)
		pthread_join(t[c], NULL);
	for (unsigned c = 0; c < nclients; c++)
		if (a[c].ret) {
			printf("{\"pfs_check\": \"append\", \"ok\": false, \"error\": "
			       "\"client %u: %s\"}\n", c, a[c].error);
			return 1;
		}
	/* Every record once: count them by (client, index). */
	uint64_t want = (uint64_t)nclients * nops * RECORD_LEN;
	struct pfs_attr st;
	if ((ret = pfs_stat(a[0].p, "/appends", &st)))
		return die("append", "stat", ret);
	unsigned char *seen = calloc((size_t)nclients * nops, 1);
	char *buf = malloc(want + 1);
	ssize_t got = 0;
	if ((ret = pfs_open(a[0].p, "/appends", O_RDONLY, 0, &f)))
		return die("append", "open", ret);
	if (st.size == want)
		got = pfs_pread(f, buf, want, 0);
	pfs_close(f);
	unsigned dups = 0, bad = 0, missing = 0;
	for (uint64_t off = 0; got == (ssize_t)want && off < want; off += RECORD_LEN) {
		unsigned client, i;
		char line[RECORD_LEN + 1];
		if (sscanf(buf + off, "client %u record %u\n", &client, &i) != 2 ||
		    client >= nclients || i >= nops) {
			bad++;
			continue;
		}
		record(line, client, i);
		if (memcmp(line, buf + off, RECORD_LEN)) {
			bad++;
			continue;
		}
		dups += seen[(size_t)client * nops + i]++ > 0;
	}
	for (size_t k = 0; k < (size_t)nclients * nops; k++)
		missing += !seen[k];
	int ok = st.size == want && got == (ssize_t)want && !dups && !bad && !missing;
	printf("{\"pfs_check\": \"append\", \"ok\": %s, \"clients\": %u, \"records\": %u, "
	       "\"size\": %" PRIu64 ", \"expected\": %" PRIu64 ", \"missing\": %u, "
	       "\"duplicated\": %u, \"garbled\": %u}\n",
	       ok ? "true" : "false", nclients, nops, st.size, want, missing, dups, bad);
	free(seen);
	free(buf);
	for (unsigned c = 0; c < nclients; c++)
		pfs_disconnect(a[c].p);
	return ok ? 0 : 1;
}

static int usage(void)
{
	fputs("usage: pfs_check fsx|writer|verify|append|readlat -i DIR [-c CLIENTS] [-n OPS] "
	      "[-s SEED] [-m MAXLEN] [-S STRIPE] [-C COUNT] [-b BYTES] [-l BYTES] [-q MS] "
	      "[-t MS]\n", stderr);
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *mode = argv[1];
	int c;
	optind = 2;
	while ((c = getopt(argc, argv, "i:c:n:s:m:S:C:b:l:q:t:")) != -1) {
		switch (c) {
		case 'i': instance = optarg; break;
		case 'c': nclients = (unsigned)atoi(optarg); break;
		case 'n': nops = (unsigned)atoi(optarg); break;
		case 's': seed = (unsigned)atoi(optarg); break;
		case 'm': maxlen = (unsigned)atoi(optarg); break;
		case 'S': stripe = strtoull(optarg, NULL, 10); break;
		case 'C': stripe_count = atoi(optarg); break;
		case 'b': bytes_acked = strtoull(optarg, NULL, 10); break;
		case 'l': readlen = (unsigned)atoi(optarg); break;
		case 'q': quiet_ms = (unsigned)atoi(optarg); break;
		case 't': opts.timeout_ms = (unsigned)atoi(optarg); break;
		default: return usage();
		}
	}
	if (!instance || nclients < 1 || nclients > MAX_CLIENTS || nops < 1 ||
	    maxlen < AIO_BATCH || readlen < 1 || readlen > (1u << 20))
		return usage();
	rng_state = 0x2545f4914f6cdd1dULL ^ seed;
	if (!strcmp(mode, "fsx"))
		return fsx();
	if (!strcmp(mode, "writer"))
		return writer();
	if (!strcmp(mode, "verify"))
		return verify();
	if (!strcmp(mode, "append"))
		return append();
	if (!strcmp(mode, "readlat"))
		return readlat();
	return usage();
}
