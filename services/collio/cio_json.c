/*
 * cio_json.c: hints from a JSON file of File and Directory entries, for
 * programs that open with MPI_INFO_NULL:
 *
 *   {"Directory": [{"Path": "/mnt/pfs/out", "Hints": {"e10_cache": "enable"}}],
 *    "File": [{"Path": "/mnt/pfs/out/ckpt", "Hints": {"cb_nodes": 2}}]}
 *
 * A Directory entry applies to every file beneath its path, a File entry to
 * that path only; Directory entries first, then File entries, each in file
 * order (later ones win).  Hint values are strings or numbers.  jansson
 * parses; duplicate keys are rejected, since which one wins would be a guess.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "cio.h"

static int applies(const char *entry, const char *path, int dir)
{
	size_t n = strlen(entry);

	while (dir && n > 1 && entry[n - 1] == '/')
		n--;
	if (!dir)
		return !strcmp(entry, path);
	return !strncmp(entry, path, n) && (path[n] == '/' || (n == 1 && entry[0] == '/'));
}

static int apply(const char *file, const json_t *root, const char *section, const char *path,
		 int (*set)(void *, const char *, const char *), void *arg)
{
	const json_t *list = json_object_get(root, section), *entry;
	size_t i;

	if (!list)
		return 0;
	if (!json_is_array(list)) {
		cio_warn("LOGGP_COLLIO_HINTS=%s: \"%s\" must be an array of {Path, Hints}", file,
			 section);
		return -EINVAL;
	}
	json_array_foreach(list, i, entry) {
		json_t *pp = json_object_get(entry, "Path");
		json_t *hh = json_object_get(entry, "Hints"), *v;
		const char *key;

		if (!json_is_string(pp) || !json_is_object(hh)) {
			cio_warn("LOGGP_COLLIO_HINTS=%s: %s entry %zu needs a string Path and an "
				 "object Hints", file, section, i);
			return -EINVAL;
		}
		if (!applies(json_string_value(pp), path, section[0] == 'D'))
			continue;
		json_object_foreach(hh, key, v) {
			char num[64];
			size_t n;
			int ret;

			if (json_is_string(v)) {
				ret = set(arg, key, json_string_value(v));
			} else if (json_is_number(v)) {
				/* the number as JSON text, which cio_hints_set parses */
				n = json_dumpb(v, num, sizeof(num) - 1, JSON_ENCODE_ANY);
				num[n < sizeof(num) ? n : sizeof(num) - 1] = 0;
				ret = set(arg, key, num);
			} else {
				cio_warn("LOGGP_COLLIO_HINTS=%s: hint %s must be a string or a "
					 "number", file, key);
				return -EINVAL;
			}
			if (ret)
				return ret;
		}
	}
	return 0;
}

int cio_json_hints(const char *file, const char *path,
		   int (*set)(void *arg, const char *key, const char *value), void *arg)
{
	json_error_t jerr;
	json_t *root;
	FILE *fp = fopen(file, "r");
	int ret;

	if (!fp) {
		cio_warn("LOGGP_COLLIO_HINTS=%s: %s", file, strerror(errno));
		return -ENOENT;
	}
	root = json_loadf(fp, JSON_REJECT_DUPLICATES, &jerr);
	fclose(fp);
	if (!json_is_object(root)) {
		cio_warn("LOGGP_COLLIO_HINTS=%s: not JSON of the form {\"File\": [...], "
			 "\"Directory\": [...]} (at byte %d: %s)", file,
			 root ? 0 : jerr.position, root ? "not an object" : jerr.text);
		json_decref(root);
		return -EINVAL;
	}
	ret = apply(file, root, "Directory", path, set, arg);
	if (!ret)
		ret = apply(file, root, "File", path, set, arg);
	json_decref(root);
	return ret;
}
