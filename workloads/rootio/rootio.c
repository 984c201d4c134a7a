/* SPDX-License-Identifier: MIT */
/*
 * rootio: the read pattern of a ROOT analysis (a high-energy-physics code
 * reading a large structured file), for the prefetcher (services/prefetch).
 *
 *   rootio -d DIR [-n N] [-s SIZE] [-r REQ] [-g GAP] [-c NS] [-S SEED]
 *          [-m off|willneed|mercury] [-b BLOCK] [-C CACHE] [-a AHEAD]
 *          [-i INSTANCE -M MOUNT] [-L LIB] [-t TRACE | -G TRACE] [-h]
 *
 * N instances (processes), instance k reading DIR/rootio-K.dat (made, untimed,
 * when missing or of another size; a byte is a function of its offset).
 * The pattern: reads with increasing offsets, each of REQ bytes on average
 * (REQ/2 to 3·REQ/2), separated by gaps of GAP on average (0 to 2·GAP), and
 * now and then (one read in 16) a backward seek that reads part of a gap
 * left behind three or more reads earlier: no byte is read twice.  After
 * each read the instance computes NS nanoseconds per byte read (a spin), the
 * time prefetching can hide I/O behind.  Every byte read is checked.
 *
 * Before the timed region every file's cached pages are dropped
 * (posix_fadvise DONTNEED on that file alone, after fsync).  Modes:
 *   off       no hints;
 *   willneed  posix_fadvise(WILLNEED) over the whole file at open;
 *   mercury   the prefetcher: rootio runs itself again beneath LIB
 *             (default: the build's libloggp-prefetch.so) with a Directory
 *             entry for DIR, WillNeed over every file, BlockSize BLOCK
 *             (4M), CacheSize CACHE (8) and ReadAheadSize AHEAD (4), the
 *             seed's settings; with -i and -M, the store back-end for the
 *             store INSTANCE mounted at MOUNT.
 * -t TRACE replays the reads of a fio iolog (version 2) instead, at one
 * instance, after dropping its files' pages; -G TRACE writes instance 0's
 * generated pattern as one and exits.
 *
 * Prints the result line of docs/results.md: time_s (the slowest instance),
 * io_s (the mean time an instance waited in read), compute_s (the mean time
 * it computed), MBps (bytes read by all / time_s), reads, backward
 * (backward seeks).  The overlap bound: prefetching can at best hide an
 * instance's I/O behind its compute, so time_s >= max(compute_s, the I/O
 * time of the same reads without compute).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define RI_MAX_INSTANCES 64
#define RI_MAX_REQ (64 << 20)

enum ri_mode { RI_OFF, RI_WILLNEED, RI_MERCURY };
static const char *const ri_modes[] = {"off", "willneed", "mercury"};

struct ri_opts {
	const char *dir, *instance, *mount, *lib, *trace, *gen;
	int64_t n, size, req, gap, block, cache, ahead, seed;
	double ns_per_byte;
	int mode;
};

struct ri_read {
	uint64_t off, len;
	const char *path;	/* traces: the file; else NULL */
};

struct ri_pattern {
	struct ri_read *r;
	size_t n, cap;
	int64_t backward;
};

/* What one instance sends its parent. */
struct ri_result {
	double time_s, io_s, compute_s;
	int64_t reads, bytes, bad, backward;
	int err;
};

static const char ri_usage[] =
	"usage: rootio -d DIR [-n N] [-s SIZE] [-r REQ] [-g GAP] [-c NS] [-S SEED]\n"
	"              [-m off|willneed|mercury] [-b BLOCK] [-C CACHE] [-a AHEAD]\n"
	"              [-i INSTANCE -M MOUNT] [-L LIB] [-t TRACE | -G TRACE] [-h]\n"
	"  -d DIR       where the files are (DIR/rootio-K.dat), required\n"
	"  -n N         instances, 1..64 (default 1)\n"
	"  -s SIZE      bytes per file, suffix K, M or G (default 256M)\n"
	"  -r REQ       mean request (default 250K)    -g GAP  mean gap (default REQ)\n"
	"  -c NS        compute per byte read, ns (default 0)\n"
	"  -S SEED      pattern seed (default 1)\n"
	"  -m MODE      off, willneed or mercury (default off)\n"
	"  -b BLOCK, -C CACHE, -a AHEAD   mercury's BlockSize, CacheSize, ReadAheadSize\n"
	"               (default 4M, 8, 4)\n"
	"  -i INSTANCE, -M MOUNT          mercury over the store INSTANCE mounted at MOUNT\n"
	"  -L LIB       the prefetcher library (default: the build's)\n"
	"  -t TRACE     replay a fio iolog v2 (reads only)  -G TRACE  write the pattern\n"
	"Prints one JSON result line (docs/results.md): time_s, io_s, compute_s, MBps, reads,\n"
	"backward.\n";

static uint8_t ri_byte(uint64_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) * 13 + (i >> 16) * 31);
}

static double ri_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t ri_rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int ri_bad(const char *opt, const char *arg, const char *expect)
{
	fprintf(stderr, "rootio: bad value '%s' for %s: expected %s\n", arg, opt, expect);
	return 2;
}

/* An integer with an optional K, M or G suffix (KiB, MiB, GiB) in [min, max]. */
static int ri_size(const char *opt, const char *arg, int64_t min, int64_t max, int64_t *out,
		   const char *expect)
{
	char *end;
	errno = 0;
	long long v = strtoll(arg, &end, 10);
	int shift = *end == 'K' ? 10 : *end == 'M' ? 20 : *end == 'G' ? 30 : 0;
	if (shift)
		end++;
	if (errno || end == arg || *end || v < 0 || v > (LLONG_MAX >> shift))
		return ri_bad(opt, arg, expect);
	v <<= shift;
	if (v < min || v > max)
		return ri_bad(opt, arg, expect);
	*out = v;
	return 0;
}

static int ri_push(struct ri_pattern *p, uint64_t off, uint64_t len, const char *path)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 1024;
		struct ri_read *r = realloc(p->r, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		p->r = r;
		p->cap = cap;
	}
	p->r[p->n++] = (struct ri_read){off, len, path};
	return 0;
}

/* The seed's pattern for one file (see the header). */
static int ri_generate(const struct ri_opts *o, uint64_t seed, struct ri_pattern *p)
{
	struct {
		uint64_t off, len;
	} gaps[8] = {{0, 0}};
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 7, pos = 0, size = (uint64_t)o->size;
	size_t ngaps = 0;
	while (pos < size) {
		uint64_t len = (uint64_t)o->req / 2 + ri_rnd(&s) % (uint64_t)o->req + 1;
		len = pos + len > size ? size - pos : len;
		if (ri_push(p, pos, len, NULL) < 0)
			return -ENOMEM;
		uint64_t gap = ri_rnd(&s) % (2 * (uint64_t)o->gap + 1);
		gap = pos + len + gap > size ? size - pos - len : gap;
		gaps[ngaps % 8].off = pos + len;
		gaps[ngaps % 8].len = gap;
		ngaps++;
		pos += len + gap;
		/* a backward seek into the gap left three reads ago */
		if (ngaps >= 4 && ri_rnd(&s) % 16 == 0) {
			size_t k = (ngaps - 4) % 8;
			if (gaps[k].len >= 4096) {
				uint64_t l = gaps[k].len < (uint64_t)o->req ? gaps[k].len
									    : (uint64_t)o->req;
				if (ri_push(p, gaps[k].off, l, NULL) < 0)
					return -ENOMEM;
				gaps[k].len = 0;
				p->backward++;
			}
		}
	}
	return 0;
}

/* The reads of a fio iolog v2; 0, or 2 with one line naming the trace. */
static int ri_trace(const char *path, struct ri_pattern *p)
{
	FILE *f = fopen(path, "r");
	char line[PATH_MAX + 128], file[PATH_MAX], act[32];
	int no = 0;
	uint64_t last = 0;
	if (!f) {
		fprintf(stderr, "rootio: %s: %s\n", path, strerror(errno));
		return 2;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long off, len;
		no++;
		if (no == 1) {
			if (strncmp(line, "fio version 2 iolog", 19) != 0) {
				fprintf(stderr, "rootio: %s:1: not a fio iolog (accepted: "
					"\"fio version 2 iolog\")\n", path);
				fclose(f);
				return 2;
			}
			continue;
		}
		int got = sscanf(line, "%4095s %31s %llu %llu", file, act, &off, &len);
		if (got == 4 && strcmp(act, "read") == 0) {
			char *name = strdup(file);
			if (!name || ri_push(p, off, len, name) < 0 || len > RI_MAX_REQ) {
				fprintf(stderr, "rootio: %s:%d: a read of more than 64 MiB\n", path,
					no);
				fclose(f);
				return 2;
			}
			p->backward += off < last;
			last = off + len;
		} else if (got >= 2 && strcmp(act, "write") == 0) {
			fprintf(stderr, "rootio: %s:%d: only reads are replayed (accepted: add, "
				"open, close, read, wait, sync, datasync, trim)\n", path, no);
			fclose(f);
			return 2;
		} else if (got < 2) {
			fprintf(stderr, "rootio: %s:%d: not 'FILE ACTION [OFFSET LENGTH]'\n", path,
				no);
			fclose(f);
			return 2;
		}
	}
	fclose(f);
	return 0;
}

static int ri_write_trace(const char *out, const char *file, const struct ri_pattern *p)
{
	FILE *f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "rootio: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(f, "fio version 2 iolog\n%s add\n%s open\n", file, file);
	for (size_t i = 0; i < p->n; i++)
		fprintf(f, "%s read %" PRIu64 " %" PRIu64 "\n", file, p->r[i].off, p->r[i].len);
	fprintf(f, "%s close\n", file);
	return fclose(f) == 0 ? 0 : 1;
}

/* Drops the file's cached pages (its own, never the machine's). */
static int ri_drop(const char *path)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "rootio: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fsync(fd);
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
}

/* Makes the file when it is missing or of another size, then drops its pages. */
static int ri_prepare(const char *path, uint64_t size)
{
	static uint8_t buf[1 << 20];
	struct stat st;
	int fd;
	if (stat(path, &st) != 0 || (uint64_t)st.st_size != size) {
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		for (uint64_t off = 0; fd >= 0 && off < size; off += sizeof(buf)) {
			size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
			for (size_t i = 0; i < n; i++)
				buf[i] = ri_byte(off + i);
			if (write(fd, buf, n) != (ssize_t)n) {
				close(fd);
				fd = -1;
			}
		}
		if (fd < 0 || fsync(fd) != 0 || close(fd) != 0) {
			fprintf(stderr, "rootio: cannot write %s: %s\n", path, strerror(errno));
			return 1;
		}
	}
	return ri_drop(path);
}

static void ri_compute(double ns)
{
	double until = ri_now() + ns * 1e-9;
	while (ri_now() < until)
		;
}

/* One instance's timed reads. */
/* Opens path for the reads (with the whole-file advice of -m willneed);
 * -1 with errno in res. */
static int ri_open(const struct ri_opts *o, const char *path, struct ri_result *res)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		res->err = errno;
	else if (o->mode == RI_WILLNEED)
		posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED);
	return fd;
}

static void ri_run(const struct ri_opts *o, const char *file, const struct ri_pattern *p,
		   struct ri_result *res)
{
	uint8_t *buf = NULL;
	const char *open_path = NULL;
	int fd = -1;
	/* The generated pattern's file is opened before the timed reads, as an
	 * application opens its input before it analyses it. */
	if ((!p->n || !p->r[0].path) && (fd = ri_open(o, open_path = file, res)) < 0)
		return;
	double t0 = ri_now();
	for (size_t i = 0; i < p->n && !res->err; i++) {
		const struct ri_read *r = &p->r[i];
		const char *path = r->path ? r->path : file;
		if (!open_path || strcmp(open_path, path) != 0) {
			if (fd >= 0)
				close(fd);
			if ((fd = ri_open(o, open_path = path, res)) < 0)
				break;
		}
		uint8_t *nb = realloc(buf, r->len ? r->len : 1);
		if (!nb) {
			res->err = ENOMEM;
			break;
		}
		buf = nb;
		double a = ri_now();
		ssize_t got = lseek(fd, (off_t)r->off, SEEK_SET) < 0 ? -1 : read(fd, buf, r->len);
		res->io_s += ri_now() - a;
		if (got < 0) {
			res->err = errno;
			break;
		}
		for (ssize_t k = 0; k < got; k++)
			res->bad += buf[k] != ri_byte(r->off + (uint64_t)k);
		res->bad += (uint64_t)got != r->len && !r->path;
		res->reads++;
		res->bytes += got;
		if (o->ns_per_byte > 0) {
			a = ri_now();
			ri_compute(o->ns_per_byte * (double)got);
			res->compute_s += ri_now() - a;
		}
	}
	if (fd >= 0)
		close(fd);
	free(buf);
	res->backward = p->backward;
	res->time_s = ri_now() - t0;
}

static void ri_path(char *out, size_t len, const struct ri_opts *o, int64_t k)
{
	snprintf(out, len, "%s/rootio-%" PRId64 ".dat", o->dir, k);
}

/* Runs rootio again beneath the prefetcher with hints for DIR. */
static int ri_reexec(const struct ri_opts *o, char **argv)
{
	char dir[PATH_MAX], hints[PATH_MAX + 32], lib[PATH_MAX + 64], exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!realpath(o->dir, dir) || n <= 0) {
		fprintf(stderr, "rootio: %s: %s\n", o->dir, strerror(errno));
		return 1;
	}
	exe[n] = '\0';
	/* build/workloads/rootio/rootio -> build/services/prefetch/ */
	int dirlen = (int)(strrchr(exe, '/') - exe);
	if (o->lib)
		snprintf(lib, sizeof(lib), "%s", o->lib);
	else
		snprintf(lib, sizeof(lib), "%.*s/../../services/prefetch/libloggp-prefetch.so",
			 dirlen, exe);
	if (access(lib, R_OK) != 0) {
		fprintf(stderr, "rootio: -m mercury: %s: %s (give -L LIB)\n", lib, strerror(errno));
		return 1;
	}
	snprintf(hints, sizeof(hints), "%s/rootio-hints.json", dir);
	FILE *f = fopen(hints, "w");
	if (!f) {
		fprintf(stderr, "rootio: %s: %s\n", hints, strerror(errno));
		return 1;
	}
	fprintf(f, "{\"Directory\": [{\"Path\": \"%s\", \"BlockSize\": %" PRId64
		   ", \"CacheSize\": %" PRId64 ", \"ReadAheadSize\": %" PRId64
		   ", \"WillNeed\": [{\"Offset\": 0, \"Length\": 0}]}]}\n",
		dir, o->block, o->cache, o->ahead);
	fclose(f);
	setenv("LD_PRELOAD", lib, 1);
	setenv("LOGGP_PREFETCH_CONFIG", hints, 1);
	if (o->instance) {
		setenv("LOGGP_PREFETCH_PFS_INSTANCE", o->instance, 1);
		setenv("LOGGP_PREFETCH_PFS_MOUNT", o->mount, 1);
	}
	execv(exe, argv);
	fprintf(stderr, "rootio: cannot run %s again: %s\n", exe, strerror(errno));
	return 1;
}

static int ri_options(int argc, char **argv, struct ri_opts *o)
{
	int c;
	*o = (struct ri_opts){.n = 1, .size = 256 << 20, .req = 250 << 10, .gap = -1,
			      .block = 4 << 20, .cache = 8, .ahead = 4, .seed = 1};
	while ((c = getopt(argc, argv, ":d:n:s:r:g:c:S:m:b:C:a:i:M:L:t:G:h")) != -1) {
		char opt[3] = {'-', (char)(c == ':' || c == '?' ? optopt : c), '\0'};
		int rc = 0;
		char *end;
		switch (c) {
		case 'd': o->dir = optarg; break;
		case 'i': o->instance = optarg; break;
		case 'M': o->mount = optarg; break;
		case 'L': o->lib = optarg; break;
		case 't': o->trace = optarg; break;
		case 'G': o->gen = optarg; break;
		case 'n': rc = ri_size(opt, optarg, 1, RI_MAX_INSTANCES, &o->n, "an integer from 1 to 64"); break;
		case 's': rc = ri_size(opt, optarg, 1, INT64_MAX, &o->size, "a size in bytes (K, M, G)"); break;
		case 'r': rc = ri_size(opt, optarg, 1, RI_MAX_REQ, &o->req, "a size from 1 to 64M"); break;
		case 'g': rc = ri_size(opt, optarg, 0, INT64_MAX / 4, &o->gap, "a size in bytes (K, M, G)"); break;
		case 'S': rc = ri_size(opt, optarg, 0, INT64_MAX, &o->seed, "an integer"); break;
		case 'b': rc = ri_size(opt, optarg, 4096, 1 << 30, &o->block, "a size from 4K to 1G"); break;
		case 'C': rc = ri_size(opt, optarg, 1, 1 << 20, &o->cache, "an integer from 1 to 1048576"); break;
		case 'a': rc = ri_size(opt, optarg, 0, 1 << 20, &o->ahead, "an integer from 0 to 1048576"); break;
		case 'c':
			errno = 0;
			o->ns_per_byte = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->ns_per_byte >= 0 && o->ns_per_byte <= 1e6))
				rc = ri_bad(opt, optarg, "nanoseconds per byte from 0 to 1e6");
			break;
		case 'm':
			o->mode = -1;
			for (int m = 0; m < 3; m++)
				if (strcmp(optarg, ri_modes[m]) == 0)
					o->mode = m;
			if (o->mode < 0)
				rc = ri_bad(opt, optarg, "off, willneed or mercury");
			break;
		case 'h': fputs(ri_usage, stdout); return 1;
		case ':': fprintf(stderr, "rootio: %s needs a value\n", opt); return 2;
		default: fprintf(stderr, "rootio: unknown option %s (rootio -h)\n", opt); return 2;
		}
		if (rc)
			return rc;
	}
	if (optind != argc) {
		fprintf(stderr, "rootio: unexpected argument '%s' (rootio -h)\n", argv[optind]);
		return 2;
	}
	if (!o->dir && !o->trace) {
		fputs("rootio: -d DIR is required (rootio -h)\n", stderr);
		return 2;
	}
	if (!o->instance != !o->mount) {
		fputs("rootio: -i INSTANCE and -M MOUNT go together\n", stderr);
		return 2;
	}
	if (o->trace && (o->n != 1 || o->gen || o->mode == RI_MERCURY)) {
		fputs("rootio: -t replays one trace at one instance, with -m off or willneed\n",
		      stderr);
		return 2;
	}
	if (o->gap < 0)
		o->gap = o->req;
	return 0;
}

int main(int argc, char **argv)
{
	struct ri_opts o;
	struct ri_pattern pats[RI_MAX_INSTANCES] = {{0}};
	struct ri_result res[RI_MAX_INSTANCES] = {{0}};
	char path[PATH_MAX];
	int rc = ri_options(argc, argv, &o);
	if (rc)
		return rc == 1 ? 0 : rc;
	bool beneath = getenv("LOGGP_PREFETCH_CONFIG") != NULL;
	for (int64_t k = 0; k < o.n; k++) {
		ri_path(path, sizeof(path), &o, k);
		if (o.trace ? ri_trace(o.trace, &pats[k]) : ri_generate(&o, (uint64_t)(o.seed + k), &pats[k]))
			return 2;
		if (o.gen)
			return ri_write_trace(o.gen, path, &pats[0]);
		if (!o.trace && !beneath && ri_prepare(path, (uint64_t)o.size))
			return 1;
		for (size_t i = 0; o.trace && i < pats[k].n; i++)
			if ((i == 0 || strcmp(pats[k].r[i].path, pats[k].r[i - 1].path) != 0) &&
			    ri_drop(pats[k].r[i].path))
				return 1;
	}
	if (o.mode == RI_MERCURY && !beneath)
		return ri_reexec(&o, argv);
	int fds[RI_MAX_INSTANCES][2];
	int go[2];
	if (pipe(go) != 0)
		return 1;
	for (int64_t k = 0; k < o.n; k++) {
		if (pipe(fds[k]) != 0)
			return 1;
		if (fork() == 0) {
			char c;
			close(go[1]);
			ri_path(path, sizeof(path), &o, k);
			if (read(go[0], &c, 1) < 0)
				_exit(1);
			ri_run(&o, path, &pats[k], &res[k]);
			_exit(write(fds[k][1], &res[k], sizeof(res[k])) == sizeof(res[k]) ? 0 : 1);
		}
		close(fds[k][1]);
	}
	close(go[0]);
	close(go[1]);	/* every instance starts now */
	double slowest = 0, io = 0, compute = 0;
	int64_t reads = 0, bytes = 0, bad = 0, backward = 0;
	int err = 0;
	for (int64_t k = 0; k < o.n; k++) {
		if (read(fds[k][0], &res[k], sizeof(res[k])) != sizeof(res[k]))
			err = err ? err : EIO;
		err = err ? err : res[k].err;
		slowest = res[k].time_s > slowest ? res[k].time_s : slowest;
		io += res[k].io_s / (double)o.n;
		compute += res[k].compute_s / (double)o.n;
		reads += res[k].reads;
		bytes += res[k].bytes;
		bad += res[k].bad;
		backward += res[k].backward;
	}
	while (wait(NULL) > 0)
		;
	if (err)
		fprintf(stderr, "rootio: an instance failed: %s\n", strerror(err));
	if (bad)
		fprintf(stderr, "rootio: %" PRId64 " bytes read were wrong\n", bad);
	printf("{\"loggp_result\": 1, \"workload\": \"rootio\", \"valid\": %s, \"ranks\": %" PRId64
	       ", \"metrics\": {\"time_s\": %.6f, \"io_s\": %.6f, \"compute_s\": %.6f, \"MBps\": %.3f, \"reads\": %" PRId64
	       ", \"backward\": %" PRId64 "}, \"params\": {\"mode\": \"%s\", \"size\": %" PRId64
	       ", \"req\": %" PRId64 ", \"gap\": %" PRId64 ", \"ns_per_byte\": %g, \"block\": %" PRId64
	       ", \"cache\": %" PRId64 ", \"ahead\": %" PRId64 ", \"store\": %s}}\n",
	       err || bad ? "false" : "true", o.n, slowest, io, compute,
	       slowest > 0 ? (double)bytes / slowest / 1e6 : 0.0, reads, backward, ri_modes[o.mode],
	       o.size, o.req, o.gap, o.ns_per_byte, o.block, o.cache, o.ahead,
	       o.instance ? "true" : "false");
	return 0;
}
