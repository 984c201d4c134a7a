/*
 * loggp-pfs: the command line of the parallel file store, over the C API
 * (pfs.h).
 *
 *   loggp-pfs [-i DIR] [-t MS] COMMAND ARGS
 *
 * DIR is the instance directory (default $LOGGP_PFS_INSTANCE).  Commands:
 * put LOCAL PATH [SIZE COUNT], get PATH LOCAL ('-' is stdout), ls PATH,
 * stat PATH, mkdir PATH, rmdir PATH, rm PATH, mv FROM TO, truncate PATH
 * SIZE, setstripe DIR SIZE COUNT, stats [SERVER], mount [--direct-io]
 * [--allow-other] DIR (mount.h).  stat and stats print JSON.  Exit status:
 * 0 done, 1 refused by the store, 2 bad usage, 3 a
 * server did not answer (EIO).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount.h"
#include "pfs.h"

#define BUF_SIZE (4u << 20)

static const char usage[] =
	"usage: loggp-pfs [-i DIR] [-t MS] COMMAND ARGS\n"
	"  -i DIR   instance directory (default $LOGGP_PFS_INSTANCE)\n"
	"  -t MS    per-request timeout in milliseconds (default 10000)\n"
	"commands:\n"
	"  put LOCAL PATH [SIZE COUNT]  copy a local file in (new file's stripe size/count)\n"
	"  get PATH LOCAL               copy a file out ('-': standard output)\n"
	"  ls PATH | stat PATH | mkdir PATH | rmdir PATH | rm PATH | mv FROM TO\n"
	"  truncate PATH SIZE | setstripe DIR SIZE COUNT (COUNT -1: every server)\n"
	"  stats [SERVER]               every server's counters, one JSON line each\n"
	"  mount [--direct-io] [--allow-other] DIR\n"
	"                               serve the store at DIR (FUSE 3) until unmounted\n";

static int failed(const char *what, int ret)
{
	fprintf(stderr, "loggp-pfs: %s: %s\n", what, pfs_errmsg());
	return ret == -EIO ? 3 : 1;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-')
		return -1;
	*out = v;
	return 0;
}

static int print_entry(void *arg, const char *name, uint64_t ino, unsigned type)
{
	(void)arg;
	(void)ino;
	printf("%s%s\n", name, type == S_IFDIR ? "/" : type == S_IFLNK ? "@" : "");
	return 0;
}

static int cmd_put(pfs_t *p, const char *local, const char *path, uint64_t ss, int sc)
{
	int fd = open(local, O_RDONLY);
	if (fd < 0) {
		fprintf(stderr, "loggp-pfs: put: cannot open %s: %s\n", local, strerror(errno));
		return 1;
	}
	pfs_file_t *f;
	int ret = pfs_create(p, path, O_WRONLY | O_CREAT | O_TRUNC, 0644, ss, sc, &f);
	if (ret) {
		close(fd);
		return failed("put", ret);
	}
	char *buf = malloc(BUF_SIZE);
	ssize_t n;
	while ((n = read(fd, buf, BUF_SIZE)) > 0) {
		ssize_t w = pfs_write(f, buf, (size_t)n);
		if (w < 0) {
			ret = (int)w;
			break;
		}
	}
	if (!ret && n < 0) {
		fprintf(stderr, "loggp-pfs: put: read %s: %s\n", local, strerror(errno));
		ret = 1;
	}
	if (!ret)
		ret = pfs_fsync(f);
	free(buf);
	close(fd);
	pfs_close(f);
	return ret < 0 ? failed("put", ret) : ret;
}

static int cmd_get(pfs_t *p, const char *path, const char *local)
{
	pfs_file_t *f;
	int ret = pfs_open(p, path, O_RDONLY, 0, &f);
	if (ret)
		return failed("get", ret);
	int fd = strcmp(local, "-") ? open(local, O_WRONLY | O_CREAT | O_TRUNC, 0644) : 1;
	if (fd < 0) {
		fprintf(stderr, "loggp-pfs: get: cannot open %s: %s\n", local, strerror(errno));
		pfs_close(f);
		return 1;
	}
	char *buf = malloc(BUF_SIZE);
	ssize_t n;
	while ((n = pfs_read(f, buf, BUF_SIZE)) > 0)
		if (write(fd, buf, (size_t)n) != n) {
			fprintf(stderr, "loggp-pfs: get: write %s: %s\n", local, strerror(errno));
			n = 0;
			ret = 1;
			break;
		}
	free(buf);
	if (fd != 1)
		close(fd);
	pfs_close(f);
	return n < 0 ? failed("get", (int)n) : ret;
}

static int cmd_stat(pfs_t *p, const char *path)
{
	struct pfs_attr st;
	int ret = pfs_stat(p, path, &st);
	if (ret)
		return failed("stat", ret);
	printf("{\"path\": \"%s\", \"ino\": %" PRIu64 ", \"type\": \"%s\", \"mode\": %u, "
	       "\"size\": %" PRIu64 ", \"stripe_size\": %" PRIu64 ", \"stripe_count\": %u, "
	       "\"stripe_start\": %u}\n",
	       path, st.ino, st.is_dir ? "dir" : "file", st.mode, st.size, st.stripe_size,
	       st.stripe_count, st.stripe_start);
	return 0;
}

static int cmd_stats(pfs_t *p, int argc, char **argv)
{
	unsigned lo = 0, hi = pfs_servers(p);
	if (argc == 1) {
		uint64_t s;
		if (parse_u64(argv[0], &s) || s >= hi) {
			fprintf(stderr, "loggp-pfs: stats: bad server '%s': expected 0 to %u\n",
				argv[0], hi - 1);
			return 2;
		}
		lo = (unsigned)s;
		hi = lo + 1;
	}
	char buf[4096];
	for (unsigned s = lo; s < hi; s++) {
		ssize_t n = pfs_server_stats(p, s, buf, sizeof buf);
		if (n < 0)
			return failed("stats", (int)n);
		printf("%s\n", buf);
	}
	return 0;
}

static int run(pfs_t *p, int argc, char **argv)
{
	const char *cmd = argv[0];
	int n = argc - 1;
	char **a = argv + 1;
	int ret;
	if (!strcmp(cmd, "put") && (n == 2 || n == 4)) {
		uint64_t ss = 0, sc = 0;
		int count = 0;
		if (n == 4) {
			if (parse_u64(a[2], &ss) ||
			    (strcmp(a[3], "-1") && (parse_u64(a[3], &sc) || sc > 1024))) {
				fprintf(stderr, "loggp-pfs: put: bad SIZE '%s' or COUNT '%s'\n",
					a[2], a[3]);
				return 2;
			}
			count = strcmp(a[3], "-1") ? (int)sc : -1;
		}
		if (n == 4 && (ret = pfs_layout_check(p, ss, count)))
			return failed("put", ret);
		return cmd_put(p, a[0], a[1], ss, count);
	}
	if (!strcmp(cmd, "get") && n == 2)
		return cmd_get(p, a[0], a[1]);
	if (!strcmp(cmd, "stat") && n == 1)
		return cmd_stat(p, a[0]);
	if (!strcmp(cmd, "stats") && n <= 1)
		return cmd_stats(p, n, a);
	if (!strcmp(cmd, "ls") && n == 1)
		return (ret = pfs_readdir(p, a[0], print_entry, NULL)) ? failed("ls", ret) : 0;
	if (!strcmp(cmd, "mkdir") && n == 1)
		return (ret = pfs_mkdir(p, a[0], 0755)) ? failed("mkdir", ret) : 0;
	if (!strcmp(cmd, "rmdir") && n == 1)
		return (ret = pfs_rmdir(p, a[0])) ? failed("rmdir", ret) : 0;
	if (!strcmp(cmd, "rm") && n == 1)
		return (ret = pfs_unlink(p, a[0])) ? failed("rm", ret) : 0;
	if (!strcmp(cmd, "mv") && n == 2)
		return (ret = pfs_rename(p, a[0], a[1])) ? failed("mv", ret) : 0;
	if (!strcmp(cmd, "truncate") && n == 2) {
		uint64_t size;
		if (parse_u64(a[1], &size)) {
			fprintf(stderr, "loggp-pfs: truncate: bad SIZE '%s'\n", a[1]);
			return 2;
		}
		return (ret = pfs_truncate(p, a[0], size)) ? failed("truncate", ret) : 0;
	}
	if (!strcmp(cmd, "setstripe") && n == 3) {
		uint64_t ss, sc = 0;
		if (parse_u64(a[1], &ss) ||
		    (strcmp(a[2], "-1") && (parse_u64(a[2], &sc) || sc > 1024))) {
			fprintf(stderr, "loggp-pfs: setstripe: bad SIZE '%s' or COUNT '%s'\n",
				a[1], a[2]);
			return 2;
		}
		int count = strcmp(a[2], "-1") ? (int)sc : -1;
		if ((ret = pfs_layout_check(p, ss, count)))
			return failed("setstripe", ret);
		return (ret = pfs_setstripe(p, a[0], ss, count)) ? failed("setstripe", ret) : 0;
	}
	if (!strcmp(cmd, "mount") && n >= 1) {
		unsigned flags = 0;
		for (int i = 0; i < n - 1; i++) {
			if (!strcmp(a[i], "--direct-io"))
				flags |= PFS_MOUNT_DIRECT_IO;
			else if (!strcmp(a[i], "--allow-other"))
				flags |= PFS_MOUNT_ALLOW_OTHER;
			else {
				fprintf(stderr, "loggp-pfs: mount: unknown option '%s' (expected "
						"--direct-io or --allow-other)\n", a[i]);
				return 2;
			}
		}
#ifdef LOGGP_PFS_FUSE
		return pfs_mount(p, a[n - 1], flags);
#else
		fputs("loggp-pfs: mount: built without FUSE 3 (install libfuse3-dev and "
		      "rebuild)\n", stderr);
		return 1;
#endif
	}
	fputs(usage, stderr);
	return 2;
}

int main(int argc, char **argv)
{
	const char *instance = getenv("LOGGP_PFS_INSTANCE");
	struct pfs_opts opts = {0};
	int c;
	while ((c = getopt(argc, argv, "+i:t:h")) != -1) {
		switch (c) {
		case 'i': instance = optarg; break;
		case 't': {
			uint64_t ms;
			if (parse_u64(optarg, &ms) || ms < 1 || ms > 3600000) {
				fprintf(stderr, "loggp-pfs: bad -t '%s': expected milliseconds "
						"from 1 to 3600000\n", optarg);
				return 2;
			}
			opts.timeout_ms = (unsigned)ms;
			break;
		}
		case 'h': fputs(usage, stdout); return 0;
		default: fputs(usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	if (!instance || !*instance) {
		fputs("loggp-pfs: no instance: give -i DIR or set LOGGP_PFS_INSTANCE\n", stderr);
		return 2;
	}
	pfs_t *p;
	int ret = pfs_connect(instance, &opts, &p);
	if (ret)
		return failed("connect", ret);
	ret = run(p, argc - optind, argv + optind);
	pfs_disconnect(p);
	return ret;
}
