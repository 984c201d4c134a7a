/*
 * cio_hints.c: collio's hints, their defaults, where they come from at open
 * and what MPI_File_get_info reports.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

void cio_hints_default(struct cio_hints *h)
{
	const char *tmp = getenv("TMPDIR");

	memset(h, 0, sizeof(*h));
	h->cache = CIO_CACHE_DISABLE;
	h->flush = CIO_FLUSH_IMMEDIATE;
	h->discard = 1;
	h->threads = 1;
	h->cb_buffer_size = 16 << 20;
	h->ind_wr_buffer_size = 512 << 10;
	snprintf(h->cache_path, sizeof(h->cache_path), "%s", tmp && *tmp ? tmp : "/tmp");
}

static const char *const cache_names[] = { "disable", "enable", "coherent", NULL };
static const char *const flush_names[] = { "flush_immediate", "flush_onclose", "flush_none",
					   NULL };
static const char *const flag_names[] = { "disable", "enable", NULL };

static int word(const char *key, const char *value, const char *const *names, const char *what,
		int *out)
{
	for (int i = 0; names[i]; i++) {
		if (!strcmp(value, names[i])) {
			*out = i;
			return 0;
		}
	}
	cio_warn("hint %s=%s: expected %s", key, value, what);
	return -EINVAL;
}

static int number(const char *key, const char *value, int64_t min, int64_t max, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(value, &end, 10);
	if (errno || end == value || *end || v < min || v > max) {
		cio_warn("hint %s=%s: expected an integer from %lld to %lld", key, value,
			 (long long)min, (long long)max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

int cio_hints_set(struct cio_hints *h, const char *key, const char *value)
{
	int64_t v;
	int ret;

	if (!strncmp(key, "e10_", 4))
		h->handled = 1;
	if (!strcmp(key, "e10_cache"))
		return word(key, value, cache_names, "enable, coherent or disable", &h->cache);
	if (!strcmp(key, "e10_cache_flush_flag"))
		return word(key, value, flush_names,
			    "flush_immediate, flush_onclose or flush_none", &h->flush);
	if (!strcmp(key, "e10_cache_discard_flag"))
		return word(key, value, flag_names, "enable or disable", &h->discard);
	if (!strcmp(key, "e10_deferred_close"))
		return word(key, value, flag_names, "enable or disable", &h->deferred_close);
	if (!strcmp(key, "e10_cache_path")) {
		if (!*value || strlen(value) >= sizeof(h->cache_path)) {
			cio_warn("hint %s=%s: expected a directory path", key, value);
			return -EINVAL;
		}
		snprintf(h->cache_path, sizeof(h->cache_path), "%s", value);
		return 0;
	}
	if (!strcmp(key, "e10_cache_threads")) {
		ret = number(key, value, 1, 64, &v);
		h->threads = ret ? h->threads : (int)v;
		return ret;
	}
	if (!strcmp(key, "cb_nodes") || !strcmp(key, "striping_factor")) {
		ret = number(key, value, 1, 1 << 20, &v);
		if (!ret)
			*(key[0] == 'c' ? &h->cb_nodes : &h->striping_factor) = (int)v;
		return ret;
	}
	if (!strcmp(key, "cb_buffer_size") || !strcmp(key, "ind_wr_buffer_size") ||
	    !strcmp(key, "striping_unit")) {
		ret = number(key, value, 1, INT32_MAX, &v);
		if (!ret)
			*(key[0] == 'c' ? &h->cb_buffer_size :
			  key[0] == 'i' ? &h->ind_wr_buffer_size : &h->striping_unit) = v;
		return ret;
	}
	return 0;
}

static int set_cb(void *arg, const char *key, const char *value)
{
	return cio_hints_set(arg, key, value);
}

/* ROMIO_HINTS: one "key value" per line; '#' starts a comment. */
static int romio_file(struct cio_hints *h, const char *file)
{
	char line[PATH_MAX + 128], key[128], value[PATH_MAX];
	FILE *fp = fopen(file, "r");
	int ret = 0;

	if (!fp) {
		cio_warn("ROMIO_HINTS=%s: %s", file, strerror(errno));
		return -errno;
	}
	while (!ret && fgets(line, sizeof(line), fp)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = 0;
		switch (sscanf(line, "%127s %4095s", key, value)) {
		case 2:
			ret = cio_hints_set(h, key, value);
			break;
		case 1:
			cio_warn("ROMIO_HINTS=%s: '%s' has no value (expected 'key value' lines)",
				 file, key);
			ret = -EINVAL;
		}
	}
	fclose(fp);
	return ret;
}

int cio_hints_resolve(struct cio_hints *h, const char *path, MPI_Info info)
{
	const char *json = getenv("LOGGP_COLLIO_HINTS"), *romio = getenv("ROMIO_HINTS");
	char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
	int nkeys, flag, ret;

	cio_hints_default(h);
	if (json && *json) {
		ret = cio_json_hints(json, path, set_cb, h);
		if (ret)
			return ret;
	}
	if (romio && *romio) {
		ret = romio_file(h, romio);
		if (ret)
			return ret;
	}
	if (info == MPI_INFO_NULL)
		return 0;
	MPI_Info_get_nkeys(info, &nkeys);
	for (int i = 0; i < nkeys; i++) {
		MPI_Info_get_nthkey(info, i, key);
		MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
		ret = flag ? cio_hints_set(h, key, value) : 0;
		if (ret)
			return ret;
	}
	return 0;
}

static void put_num(MPI_Info info, const char *key, int64_t v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	MPI_Info_set(info, key, buf);
}

int cio_hints_to_info(const struct cio_hints *h, int nprocs, MPI_Info info)
{
	MPI_Info_set(info, "e10_cache", cache_names[h->cache]);
	MPI_Info_set(info, "e10_cache_flush_flag", flush_names[h->flush]);
	MPI_Info_set(info, "e10_cache_discard_flag", flag_names[h->discard]);
	MPI_Info_set(info, "e10_deferred_close", flag_names[h->deferred_close]);
	MPI_Info_set(info, "e10_cache_path", h->cache_path);
	put_num(info, "e10_cache_threads", h->threads);
	put_num(info, "cb_nodes", h->cb_nodes > 0 && h->cb_nodes < nprocs ? h->cb_nodes : nprocs);
	put_num(info, "cb_buffer_size", h->cb_buffer_size);
	put_num(info, "ind_wr_buffer_size", h->ind_wr_buffer_size);
	put_num(info, "striping_unit", h->striping_unit);
	put_num(info, "striping_factor", h->striping_factor);
	MPI_Info_set(info, "romio_cb_write", "enable");
	return 0;
}
