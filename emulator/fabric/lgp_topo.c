/* SPDX-License-Identifier: MIT */
/* A network's per-destination latency, gap and bulk gap (lgp_topo.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rdma/fi_cm.h>

#include <lgp/env.h>
#include <lgp/pairs.h>

#include "lgp_log.h"
#include "lgp_topo.h"

#define LGP_TOPO_NAME_MAX	512		/* bytes of an endpoint name */
#define LGP_TOPO_NAMES_MAX	(1 << 20)	/* bytes read of one rank's names: 2 a connection */

static const char *lgp_topo_env(void)
{
	return lgp_setting_env(LGP_SETTING_TOPOLOGY);
}

static int lgp_topo_line(struct lgp_topo *t, const char *line, unsigned n,
			 const char *path, char *errmsg, size_t len)
{
	uint64_t v[5];
	int kind = lgp_pairs_line(line, v);

	if (kind == LGP_PAIRS_BLANK)
		return 0;
	if (kind == LGP_PAIRS_COUNT) {
		if (t->ranks || v[0] > LGP_TOPO_MAX_RANKS)
			goto bad;
		t->ranks = (uint32_t)v[0];
		t->latency_ns = calloc(3 * (size_t)t->ranks, sizeof(*t->latency_ns));
		if (!t->latency_ns)
			return -ENOMEM;
		t->gap_ns = t->latency_ns + t->ranks;
		t->bulk_gap_fs = t->gap_ns + t->ranks;
		return 0;
	}
	if (!t->ranks || kind != LGP_PAIRS_PAIR || v[0] >= t->ranks ||
	    v[1] >= t->ranks)
		goto bad;
	if (v[0] != t->rank)
		return 0;
	t->latency_ns[v[1]] = v[2];
	t->gap_ns[v[1]] = v[3];
	t->bulk_gap_fs[v[1]] = v[4];
	t->paces |= v[3] || v[4];
	t->adds |= v[2] || v[3] || v[4];
	return 0;
bad:
	snprintf(errmsg, len, "bad line %u of %s '%.200s': expected " LGP_PAIRS_FORMS
		 ", at most %d ranks", n, lgp_topo_env(), path, LGP_TOPO_MAX_RANKS);
	return -EINVAL;
}

int lgp_topo_load(struct lgp_topo *t, const char *path, long rank,
		  char *errmsg, size_t len)
{
	char line[256];
	unsigned n = 0;
	int ret = 0;
	FILE *f;

	memset(t, 0, sizeof(*t));
	/* Without a rank the table is still checked: a bad one is refused. */
	t->rank = rank < 0 ? UINT32_MAX : (uint32_t)rank;
	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(errmsg, len, "cannot read %s '%.200s': %s (expected the pair table "
			 "of a network)", lgp_topo_env(), path, strerror(errno));
		return ret;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		n++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(errmsg, len, "line %u of %s '%.200s' is too long: expected "
				 LGP_PAIRS_FORMS, n, lgp_topo_env(), path);
			ret = -EINVAL;
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		ret = lgp_topo_line(t, line, n, path, errmsg, len);
	}
	fclose(f);
	if (!ret && !t->ranks) {
		snprintf(errmsg, len, "no 'ranks N' line in %s '%.200s': expected " LGP_PAIRS_FORMS,
			 lgp_topo_env(), path);
		ret = -EINVAL;
	}
	if (!ret && rank >= 0 && t->rank >= t->ranks) {
		snprintf(errmsg, len, "rank %u is not in %s '%.200s': expected ranks 0 to %u",
			 t->rank, lgp_topo_env(), path, t->ranks - 1);
		ret = -EINVAL;
	}
	if (ret || rank < 0) {
		if (!ret)
			LGP_INFO(FI_LOG_CORE, "%s set, but no launcher gave a rank: "
				 "uniform knobs\n", lgp_topo_env());
		lgp_topo_fini(t);
		return ret;
	}
	snprintf(t->names, sizeof(t->names), "%s.names", path);
	if (mkdir(t->names, 0755) && errno != EEXIST)
		LGP_WARN(FI_LOG_CORE, "cannot create %s: %s\n", t->names, strerror(errno));
	t->on = true;
	return 0;
}

void lgp_topo_fini(struct lgp_topo *t)
{
	free(t->latency_ns);
	memset(t, 0, sizeof(*t));
}

static void lgp_topo_hex(const unsigned char *name, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[name[i] >> 4];
		out[2 * i + 1] = digits[name[i] & 15];
	}
	out[2 * len] = '\0';
}

void lgp_topo_publish(const struct lgp_topo *t, struct fid *fid)
{
	unsigned char name[LGP_TOPO_NAME_MAX];
	char hex[2 * LGP_TOPO_NAME_MAX + 2], file[4200];
	size_t len = sizeof(name), n;
	int fd;

	if (!t->on || fi_getname(fid, name, &len) || !len || len > sizeof(name))
		return;
	lgp_topo_hex(name, len, hex);
	n = 2 * len;
	hex[n++] = '\n';
	snprintf(file, sizeof(file), "%s/%u", t->names, t->rank);
	/* One O_APPEND write: a reader sees whole lines. */
	fd = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, hex, n) != (ssize_t)n)
		LGP_WARN(FI_LOG_CORE, "cannot publish an endpoint name in %s: %s\n",
			 file, strerror(errno));
	if (fd >= 0)
		close(fd);
}

/* Whether the hex line appears as a whole line in buf. */
static bool lgp_topo_has_line(const char *buf, const char *line, size_t n)
{
	const char *p = buf;

	while ((p = strstr(p, line))) {
		if ((p == buf || p[-1] == '\n') && p[n] == '\n')
			return true;
		p++;
	}
	return false;
}

int32_t lgp_topo_find(const struct lgp_topo *t, const void *name, size_t len)
{
	char hex[2 * LGP_TOPO_NAME_MAX + 1], file[4200];
	char *buf;
	ssize_t got;
	uint32_t r;
	int32_t found = LGP_TOPO_NONE;
	int fd;

	if (!len || len > LGP_TOPO_NAME_MAX)
		return LGP_TOPO_NONE;
	buf = malloc(LGP_TOPO_NAMES_MAX + 1);
	if (!buf)
		return LGP_TOPO_NONE;
	lgp_topo_hex(name, len, hex);
	for (r = 0; r < t->ranks && found == LGP_TOPO_NONE; r++) {
		snprintf(file, sizeof(file), "%s/%u", t->names, r);
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		got = read(fd, buf, LGP_TOPO_NAMES_MAX);
		close(fd);
		if (got <= 0)
			continue;
		buf[got] = '\0';
		if (lgp_topo_has_line(buf, hex, 2 * len))
			found = (int32_t)r;
	}
	free(buf);
	return found;
}

void lgp_topo_resolve(const struct lgp_topo *t, struct lgp_topo_dest *d,
		      uint64_t now,
		      int (*lookup)(void *ctx, void *name, size_t *len), void *ctx)
{
	unsigned char name[LGP_TOPO_NAME_MAX];
	size_t len = sizeof(name);

	if (d->rank >= 0 || (d->rank == LGP_TOPO_NONE && now < d->retry_at))
		return;
	d->rank = lookup(ctx, name, &len) || len > sizeof(name) ?
		  LGP_TOPO_NONE : lgp_topo_find(t, name, len);
	d->retry_at = now + LGP_TOPO_RETRY_NS;
}
