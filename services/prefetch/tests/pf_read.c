/*
 * pf_read: reads a file every way the interposer wraps, for
 * tests/test_prefetch.py (run with and without LD_PRELOAD).
 *
 *   pf_read make FILE SIZE             write the pattern (byte i = pf_byte(i))
 *   pf_read pattern FILE SEED THREADS N
 *       THREADS threads, each opening FILE its own way (open, open64,
 *       openat, openat64, the __*_2 forms, fopen, fopen64, fdopen, dup,
 *       dup2, dup3, F_DUPFD) and making N reads at random offsets of up to
 *       300 KiB with every read call; every byte checked against the pattern
 *   pf_read window FILE REQ STRIDE     strided reads of REQ bytes with a
 *       backward seek every 8th read; the most 4 KiB pages of the file the
 *       page cache held after any read (null where the file cannot be
 *       mapped: a direct-I/O mount)
 *   pf_read touch FILE OFF:LEN...      preads, then the file's residency, one
 *       character per 64 KiB: 0 none of it cached, 1 some, 2 all; the
 *       word "advise" instead of a range gives posix_fadvise(NORMAL)
 *   pf_read strided FILE REQ STRIDE    read() REQ bytes every STRIDE bytes
 *       from the start (STRIDE = REQ: sequential), checking each; the time
 *       the reads took
 *   pf_read words FILE SIZE            write words: each 8-byte word holds
 *       its own offset
 *   pf_read shared FILE THREADS REQ    THREADS threads read() REQ bytes at a
 *       time from one shared descriptor of a words file until its end;
 *       every chunk must be whole words at their offsets, and the chunks
 *       together the file exactly once
 *   pf_read reuse PATTERN WORDS        read() a pattern file, close it with
 *       syscall(SYS_close) (past the interposer), open a words file at the
 *       same number and read it; then the same with the pattern file
 *       opened by syscall(SYS_openat): each read must be its own file's
 *
 * Pages held are counted with cachestat(2), which counts pages still being
 * read (mincore(2) only those read, so it would race with the prefetcher's
 * reads); mincore where the kernel is older than 6.5.  The file is mapped
 * either way, which the interposer must see and report.
 *
 * Prints one JSON line; exits 1 if a byte was wrong or a call failed.
 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pf_fortify.h"


#define MAX_REQ (300 << 10)
#define NOPEN 15

static uint8_t pf_byte(uint64_t i)
{
	return (uint8_t)(i * 7 + (i >> 8) * 13 + (i >> 16) * 31);
}

static void die(const char *what)
{
	fprintf(stderr, "pf_read: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int make(const char *path, uint64_t size)
{
	static uint8_t buf[1 << 16];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd < 0)
		die(path);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (size_t i = 0; i < n; i++)
			buf[i] = pf_byte(off + i);
		if (write(fd, buf, n) != (ssize_t)n)
			die("write");
	}
	close(fd);
	printf("{\"ok\":true,\"size\":%" PRIu64 "}\n", size);
	return 0;
}

struct job {
	const char *path;
	uint64_t seed, n, size;
	int how;
	uint64_t reads, bytes, bad, digest;
	const char *failed;
};

/* Opens path the job's way: a descriptor, and a stream for the stdio ways. */
static int open_how(const char *path, int how, FILE **fp)
{
	int fd = -1, tmp;
	*fp = NULL;
	switch (how) {
	case 0: fd = open(path, O_RDONLY); break;
	case 1: fd = open64(path, O_RDONLY); break;
	case 2: fd = openat(AT_FDCWD, path, O_RDONLY); break;
	case 3: fd = openat64(AT_FDCWD, path, O_RDONLY); break;
	case 4: fd = __open_2(path, O_RDONLY); break;
	case 5: fd = __open64_2(path, O_RDONLY); break;
	case 6: fd = __openat_2(AT_FDCWD, path, O_RDONLY); break;
	case 7: fd = __openat64_2(AT_FDCWD, path, O_RDONLY); break;
	case 8: *fp = fopen(path, "r"); break;
	case 9: *fp = fopen64(path, "r"); break;
	case 10: *fp = fdopen(open(path, O_RDONLY), "r"); break;
	case 11:	/* the original closed: the duplicate alone refers to it */
		tmp = open(path, O_RDONLY);
		fd = dup(tmp);
		close(tmp);
		break;
	case 12:
		tmp = open(path, O_RDONLY);
		fd = dup2(tmp, tmp + 100);
		close(tmp);
		break;
	case 13:
		tmp = open(path, O_RDONLY);
		fd = dup3(tmp, tmp + 200, O_CLOEXEC);
		close(tmp);
		break;
	default:
		tmp = open(path, O_RDONLY);
		fd = fcntl(tmp, how % 2 ? F_DUPFD : F_DUPFD_CLOEXEC, 300);
		close(tmp);
		break;
	}
	if (*fp)
		fd = fileno(*fp);
	return fd;
}

/* One read of len at off the op-th way; the byte count or -1. */
static ssize_t read_how(int fd, FILE *fp, int op, uint8_t *buf, size_t len, uint64_t off)
{
	if (fp) {
		if (fseeko(fp, (off_t)off, SEEK_SET) < 0)
			return -1;
		switch (op % 3) {
		case 0: return (ssize_t)fread(buf, 1, len, fp);
		case 1: return (ssize_t)(fread_unlocked)(buf, 1, len, fp);
		default: return (ssize_t)__fread_chk(buf, MAX_REQ, 1, len, fp);
		}
	}
	struct iovec iov[2] = {{buf, len / 2}, {buf + len / 2, len - len / 2}};
	switch (op % 10) {
	case 0: return lseek(fd, (off_t)off, SEEK_SET) < 0 ? -1 : read(fd, buf, len);
	case 1: return pread(fd, buf, len, (off_t)off);
	case 2: return pread64(fd, buf, len, (off64_t)off);
	case 3: return lseek(fd, (off_t)off, SEEK_SET) < 0 ? -1 : readv(fd, iov, 2);
	case 4: return preadv(fd, iov, 2, (off_t)off);
	case 5: return preadv2(fd, iov, 2, (off_t)off, 0);
	case 6: return lseek64(fd, (off64_t)off, SEEK_SET) < 0 ? -1 : preadv2(fd, iov, 2, -1, 0);
	case 7: return lseek(fd, (off_t)off, SEEK_SET) < 0 ? -1 : __read_chk(fd, buf, len, MAX_REQ);
	case 8: return __pread_chk(fd, buf, len, (off_t)off, MAX_REQ);
	default: return __pread64_chk(fd, buf, len, (off64_t)off, MAX_REQ);
	}
}

static void *pattern_job(void *arg)
{
	struct job *j = arg;
	uint8_t *buf = malloc(MAX_REQ);
	FILE *fp;
	uint64_t s = j->seed * 0x9e3779b97f4a7c15ull + 1;
	int fd = open_how(j->path, j->how, &fp);
	if (fd < 0 || !buf) {
		j->failed = "open";
		free(buf);
		return NULL;
	}
	j->digest = 1469598103934665603ull;
	for (uint64_t i = 0; i < j->n; i++) {
		uint64_t off = rnd(&s) % j->size;
		size_t len = 1 + rnd(&s) % MAX_REQ;
		ssize_t got = read_how(fd, fp, (int)(rnd(&s) % 30), buf, len, off);
		size_t want = off + len > j->size ? (size_t)(j->size - off) : len;
		if (got != (ssize_t)want) {
			j->failed = "short or failed read";
			break;
		}
		for (ssize_t k = 0; k < got; k++) {
			j->bad += buf[k] != pf_byte(off + (uint64_t)k);
			j->digest = (j->digest ^ buf[k]) * 1099511628211ull;
		}
		j->reads++;
		j->bytes += (uint64_t)got;
	}
	if (fp)
		fclose(fp);
	else
		close(fd);
	free(buf);
	return NULL;
}

static int pattern(const char *path, uint64_t seed, int threads, uint64_t n)
{
	struct stat st;
	if (stat(path, &st) < 0)
		die(path);
	struct job *jobs = calloc((size_t)threads, sizeof(*jobs));
	pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
	for (int t = 0; t < threads; t++) {
		jobs[t] = (struct job){.path = path, .seed = seed + (uint64_t)t, .n = n,
				       .size = (uint64_t)st.st_size, .how = t % NOPEN};
		if (pthread_create(&tids[t], NULL, pattern_job, &jobs[t]) != 0)
			die("pthread_create");
	}
	uint64_t reads = 0, bytes = 0, bad = 0, digest = 0;
	const char *failed = NULL;
	for (int t = 0; t < threads; t++) {
		pthread_join(tids[t], NULL);
		reads += jobs[t].reads;
		bytes += jobs[t].bytes;
		bad += jobs[t].bad;
		digest ^= jobs[t].digest;
		failed = failed ? failed : jobs[t].failed;
	}
	int ok = !bad && !failed;
	printf("{\"ok\":%s,\"reads\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"mismatches\":%" PRIu64
	       ",\"digest\":\"%016" PRIx64 "\",\"failed\":\"%s\"}\n",
	       ok ? "true" : "false", reads, bytes, bad, digest, failed ? failed : "");
	free(jobs);
	free(tids);
	return ok ? 0 : 1;
}

struct cachestat_range {
	uint64_t off, len;
};

struct cachestat {
	uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
};

#define SYS_CACHESTAT 451

/* Pages of [off, off + len) of the file (mapped at map) in the page cache. */
static uint64_t resident(int fd, uint8_t *map, uint64_t off, uint64_t len)
{
	static int no_cachestat;
	struct cachestat_range r = {off, len};
	struct cachestat cs;
	if (!no_cachestat && syscall(SYS_CACHESTAT, fd, &r, &cs, 0) == 0)
		return cs.nr_cache;
	if (errno != ENOSYS)
		die("cachestat");
	no_cachestat = 1;
	unsigned char vec[64];
	uint64_t n = 0;
	for (uint64_t at = off; at < off + len; at += sizeof(vec) * 4096) {
		uint64_t part = off + len - at < sizeof(vec) * 4096 ? off + len - at
								   : sizeof(vec) * 4096;
		if (mincore(map + at, part, vec) < 0)
			die("mincore");
		for (uint64_t i = 0; i < (part + 4095) / 4096; i++)
			n += vec[i] & 1;
	}
	return n;
}

static int window(const char *path, size_t req, uint64_t stride)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	size_t size = (size_t)st.st_size;
	uint8_t *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	uint8_t *buf = malloc(req);
	if ((map == MAP_FAILED && errno != ENODEV) || !buf)
		die("mmap");
	uint64_t most = 0, reads = 0, bad = 0, off = 0;
	for (; off + req <= size; off += stride) {
		/* every 8th read goes back 3 strides, as the seed's reader does */
		uint64_t at = reads % 8 == 7 && off >= 3 * stride ? off - 3 * stride : off;
		if (lseek(fd, (off_t)at, SEEK_SET) < 0 || read(fd, buf, req) != (ssize_t)req)
			die("read");
		for (size_t k = 0; k < req; k++)
			bad += buf[k] != pf_byte(at + k);
		uint64_t r = map == MAP_FAILED ? 0 : resident(fd, map, 0, size);
		most = r > most ? r : most;
		reads++;
	}
	printf("{\"ok\":%s,\"reads\":%" PRIu64 ",\"max_resident_pages\":", bad ? "false" : "true",
	       reads);
	printf(map == MAP_FAILED ? "null}\n" : "%" PRIu64 "}\n", most);
	if (map != MAP_FAILED)
		munmap(map, size);
	close(fd);
	return bad ? 1 : 0;
}

static int touch(const char *path, int n, char **ranges)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	uint8_t *buf = malloc(MAX_REQ);
	for (int i = 0; i < n; i++) {
		uint64_t off, len;
		if (strcmp(ranges[i], "advise") == 0) {
			if (posix_fadvise(fd, 0, 0, POSIX_FADV_NORMAL) != 0)
				die("posix_fadvise");
			continue;
		}
		if (sscanf(ranges[i], "%" SCNu64 ":%" SCNu64, &off, &len) != 2 || len > MAX_REQ) {
			fprintf(stderr, "pf_read: %s: not OFF:LEN with LEN <= %d\n", ranges[i],
				MAX_REQ);
			return 2;
		}
		if (pread(fd, buf, len, (off_t)off) < 0)
			die("pread");
	}
	size_t size = (size_t)st.st_size;
	uint8_t *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		die("mmap");
	printf("{\"ok\":true,\"resident\":\"");
	for (uint64_t c = 0; c < size; c += 65536) {
		uint64_t len = size - c < 65536 ? size - c : 65536;
		uint64_t have = resident(fd, map, c, len);
		putchar(have == 0 ? '0' : have == (len + 4095) / 4096 ? '2' : '1');
	}
	printf("\"}\n");
	return 0;
}

static int strided(const char *path, size_t req, uint64_t stride)
{
	struct stat st;
	struct timespec t0, t1;
	int fd = open(path, O_RDONLY);
	uint8_t *buf = malloc(req);
	if (fd < 0 || fstat(fd, &st) < 0 || !buf || !stride)
		die(path);
	uint64_t reads = 0, bytes = 0, bad = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint64_t off = 0; off + req <= (uint64_t)st.st_size; off += stride) {
		if (lseek(fd, (off_t)off, SEEK_SET) < 0 || read(fd, buf, req) != (ssize_t)req)
			die("read");
		for (size_t k = 0; k < req; k++)
			bad += buf[k] != pf_byte(off + k);
		reads++;
		bytes += req;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("{\"ok\":%s,\"reads\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"seconds\":%.6f}\n",
	       bad ? "false" : "true", reads, bytes, secs);
	free(buf);
	close(fd);
	return bad ? 1 : 0;
}

static int words(const char *path, uint64_t size)
{
	static uint64_t buf[8192];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd < 0)
		die(path);
	for (uint64_t off = 0; off < size; off += sizeof(buf)) {
		size_t n = size - off < sizeof(buf) ? (size_t)(size - off) : sizeof(buf);
		for (size_t i = 0; i < n / 8; i++)
			buf[i] = off + i * 8;
		if (write(fd, buf, n) != (ssize_t)n)
			die("write");
	}
	close(fd);
	printf("{\"ok\":true,\"size\":%" PRIu64 "}\n", size);
	return 0;
}

/* The words of buf, read at an unknown offset: that offset, or -1 when the
 * words are not consecutive offsets. */
static int64_t words_at(const uint8_t *buf, size_t n)
{
	uint64_t w0, w;
	if (n < 8 || n % 8)
		return -1;
	memcpy(&w0, buf, 8);
	for (size_t i = 8; i < n; i += 8) {
		memcpy(&w, buf + i, 8);
		if (w != w0 + i)
			return -1;
	}
	return (int64_t)w0;
}

struct chunk {
	uint64_t off, len;
};

struct reader {
	int fd;
	size_t req;
	struct chunk *chunks;
	size_t n, cap;
	uint64_t bad;
};

static void *shared_job(void *arg)
{
	struct reader *r = arg;
	uint8_t *buf = malloc(r->req);
	ssize_t got;
	while (buf && (got = read(r->fd, buf, r->req)) > 0) {
		int64_t at = words_at(buf, (size_t)got);
		if (at < 0) {
			r->bad++;
			continue;
		}
		if (r->n == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 256;
			r->chunks = realloc(r->chunks, r->cap * sizeof(*r->chunks));
			if (!r->chunks)
				die("realloc");
		}
		r->chunks[r->n++] = (struct chunk){(uint64_t)at, (uint64_t)got};
	}
	free(buf);
	return NULL;
}

static int by_off(const void *a, const void *b)
{
	const struct chunk *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int shared(const char *path, int threads, size_t req)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	struct reader *rs = calloc((size_t)threads, sizeof(*rs));
	pthread_t *tids = calloc((size_t)threads, sizeof(*tids));
	for (int t = 0; t < threads; t++) {
		rs[t] = (struct reader){.fd = fd, .req = req};
		if (pthread_create(&tids[t], NULL, shared_job, &rs[t]) != 0)
			die("pthread_create");
	}
	uint64_t n = 0, bytes = 0, bad = 0;
	for (int t = 0; t < threads; t++) {
		pthread_join(tids[t], NULL);
		n += rs[t].n;
		bad += rs[t].bad;
	}
	struct chunk *all = calloc(n + 1, sizeof(*all));
	size_t k = 0;
	for (int t = 0; t < threads; t++)
		for (size_t i = 0; i < rs[t].n; i++)
			all[k++] = rs[t].chunks[i];
	qsort(all, n, sizeof(*all), by_off);
	/* exactly once: each chunk starts where the one before ended */
	uint64_t end = 0, overlaps = 0, gaps = 0;
	for (size_t i = 0; i < n; i++) {
		overlaps += all[i].off < end;
		gaps += all[i].off > end;
		end = all[i].off + all[i].len > end ? all[i].off + all[i].len : end;
		bytes += all[i].len;
	}
	gaps += end != (uint64_t)st.st_size;
	int ok = !bad && !overlaps && !gaps && bytes == (uint64_t)st.st_size;
	printf("{\"ok\":%s,\"reads\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"size\":%" PRIu64
	       ",\"bad\":%" PRIu64 ",\"overlaps\":%" PRIu64 ",\"gaps\":%" PRIu64 "}\n",
	       ok ? "true" : "false", n, bytes, (uint64_t)st.st_size, bad, overlaps, gaps);
	close(fd);
	return ok ? 0 : 1;
}

/* 1 when 64 KiB read() at 0 of fd are the pattern file's (words: 0) bytes. */
static int reads_as(int fd, int pattern)
{
	static uint8_t buf[1 << 16];
	if (lseek(fd, 0, SEEK_SET) != 0 || read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		die("read");
	if (!pattern)
		return words_at(buf, sizeof(buf)) == 0;
	for (size_t k = 0; k < sizeof(buf); k++)
		if (buf[k] != pf_byte(k))
			return 0;
	return 1;
}

static int reuse(const char *pattern, const char *wordfile)
{
	int a = open(pattern, O_RDONLY);
	if (a < 0)
		die(pattern);
	int first = reads_as(a, 1);
	if (syscall(SYS_close, a) != 0)
		die("SYS_close");
	int b = open(wordfile, O_RDONLY);
	if (b != a)
		die("the number was not reused");
	int by_open = reads_as(b, 0);
	if (syscall(SYS_close, b) != 0)
		die("SYS_close");
	int c = (int)syscall(SYS_openat, AT_FDCWD, pattern, O_RDONLY);
	if (c != a)
		die("the number was not reused by SYS_openat");
	int by_syscall = reads_as(c, 1);
	close(c);
	int ok = first && by_open && by_syscall;
	printf("{\"ok\":%s,\"first\":%d,\"by_open\":%d,\"by_syscall\":%d}\n",
	       ok ? "true" : "false", first, by_open, by_syscall);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "make") == 0)
		return make(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 6 && strcmp(argv[1], "pattern") == 0)
		return pattern(argv[2], strtoull(argv[3], NULL, 0), atoi(argv[4]),
			       strtoull(argv[5], NULL, 0));
	if (argc == 5 && strcmp(argv[1], "window") == 0)
		return window(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	if (argc >= 4 && strcmp(argv[1], "touch") == 0)
		return touch(argv[2], argc - 3, argv + 3);
	if (argc == 5 && strcmp(argv[1], "strided") == 0)
		return strided(argv[2], strtoull(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
	if (argc == 4 && strcmp(argv[1], "words") == 0)
		return words(argv[2], strtoull(argv[3], NULL, 0));
	if (argc == 5 && strcmp(argv[1], "shared") == 0)
		return shared(argv[2], atoi(argv[3]), strtoull(argv[4], NULL, 0));
	if (argc == 4 && strcmp(argv[1], "reuse") == 0)
		return reuse(argv[2], argv[3]);
	fputs("usage: pf_read make|pattern|window|touch|strided|words|shared|reuse FILE ... (see its "
	      "header)\n", stderr);
	return 2;
}
