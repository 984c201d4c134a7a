/*
 * cio_json.c: hints from a JSON file of File and Directory entries, for
 * programs that open with MPI_INFO_NULL:
 *
 *   {"Directory": [{"Path": "/mnt/pfs/out", "Hints": {"e10_cache": "enable"}}],
 *    "File": [{"Path": "/mnt/pfs/out/ckpt", "Hints": {"cb_nodes": 2}}]}
 *
 * A Directory entry applies to every file beneath its path, a File entry to
 * that path only; Directory entries first, then File entries, each in file
 * order (later ones win).  Hint values are strings or integers.  The parser
 * is the small subset of JSON this needs: objects, arrays, strings without
 * \u escapes, numbers, true, false, null.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cio.h"

enum { J_NULL, J_STR, J_NUM, J_ARR, J_OBJ };

struct jv {
	int type;
	char *text;		/* strings and numbers */
	char **keys;		/* objects */
	struct jv *kid;		/* arrays and objects */
	size_t n;
};

struct jp {
	const char *s;
	const char *start;
};

static void jv_free(struct jv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jv_free(&v->kid[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kid);
	free(v->keys);
	free(v->text);
}

static void ws(struct jp *p)
{
	while (isspace((unsigned char)*p->s))
		p->s++;
}

static int parse(struct jp *p, struct jv *v, int depth);

static char *parse_str(struct jp *p)
{
	size_t cap = 16, n = 0;
	char *out = malloc(cap);

	p->s++;
	while (out && *p->s && *p->s != '"') {
		char c = *p->s++;

		if (c == '\\') {
			c = *p->s++;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		if (n + 2 > cap) {
			char *o = realloc(out, cap *= 2);

			if (!o)
				free(out);
			out = o;
		}
		if (out)
			out[n++] = c;
	}
	if (!out || *p->s != '"') {
		free(out);
		return NULL;
	}
	p->s++;
	out[n] = 0;
	return out;
}

static int add_kid(struct jv *v, char *key)
{
	struct jv *k = realloc(v->kid, (v->n + 1) * sizeof(*k));

	if (!k)
		return -ENOMEM;
	v->kid = k;
	memset(&k[v->n], 0, sizeof(*k));
	if (v->type == J_OBJ) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (!keys)
			return -ENOMEM;
		v->keys = keys;
		keys[v->n] = key;
	}
	v->n++;
	return 0;
}

static int parse_list(struct jp *p, struct jv *v, int depth)
{
	char close = v->type == J_OBJ ? '}' : ']';

	p->s++;
	ws(p);
	if (*p->s == close) {
		p->s++;
		return 0;
	}
	for (;;) {
		char *key = NULL;

		ws(p);
		if (v->type == J_OBJ) {
			if (*p->s != '"' || !(key = parse_str(p)))
				return -EINVAL;
			ws(p);
			if (*p->s++ != ':') {
				free(key);
				return -EINVAL;
			}
		}
		if (add_kid(v, key)) {
			free(key);
			return -ENOMEM;
		}
		if (parse(p, &v->kid[v->n - 1], depth + 1))
			return -EINVAL;
		ws(p);
		if (*p->s == ',') {
			p->s++;
			continue;
		}
		if (*p->s++ != close)
			return -EINVAL;
		return 0;
	}
}

static int parse(struct jp *p, struct jv *v, int depth)
{
	ws(p);
	if (depth > 16)
		return -EINVAL;
	switch (*p->s) {
	case '{':
	case '[':
		v->type = *p->s == '{' ? J_OBJ : J_ARR;
		return parse_list(p, v, depth);
	case '"':
		v->type = J_STR;
		v->text = parse_str(p);
		return v->text ? 0 : -EINVAL;
	}
	if (*p->s == '-' || isdigit((unsigned char)*p->s)) {
		const char *b = p->s;

		while (*p->s == '-' || *p->s == '+' || *p->s == '.' || *p->s == 'e' ||
		       *p->s == 'E' || isdigit((unsigned char)*p->s))
			p->s++;
		v->type = J_NUM;
		v->text = strndup(b, p->s - b);
		return v->text ? 0 : -ENOMEM;
	}
	for (const char *const *w = (const char *const[]){ "true", "false", "null", NULL }; *w;
	     w++) {
		if (!strncmp(p->s, *w, strlen(*w))) {
			p->s += strlen(*w);
			v->type = J_NULL;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct jv *member(const struct jv *obj, const char *key)
{
	if (obj->type != J_OBJ)
		return NULL;
	for (size_t i = 0; i < obj->n; i++)
		if (!strcmp(obj->keys[i], key))
			return &obj->kid[i];
	return NULL;
}

static int applies(const char *entry, const char *path, int dir)
{
	size_t n = strlen(entry);

	while (dir && n > 1 && entry[n - 1] == '/')
		n--;
	if (!dir)
		return !strcmp(entry, path);
	return !strncmp(entry, path, n) && (path[n] == '/' || (n == 1 && entry[0] == '/'));
}

static int apply(const char *file, const struct jv *root, const char *section, const char *path,
		 int (*set)(void *, const char *, const char *), void *arg)
{
	const struct jv *list = member(root, section);

	if (!list)
		return 0;
	if (list->type != J_ARR) {
		cio_warn("LOGGP_COLLIO_HINTS=%s: \"%s\" must be an array of {Path, Hints}", file,
			 section);
		return -EINVAL;
	}
	for (size_t i = 0; i < list->n; i++) {
		const struct jv *pp = member(&list->kid[i], "Path");
		const struct jv *hh = member(&list->kid[i], "Hints");

		if (!pp || pp->type != J_STR || !hh || hh->type != J_OBJ) {
			cio_warn("LOGGP_COLLIO_HINTS=%s: %s entry %zu needs a string Path and an "
				 "object Hints", file, section, i);
			return -EINVAL;
		}
		if (!applies(pp->text, path, section[0] == 'D'))
			continue;
		for (size_t k = 0; k < hh->n; k++) {
			int ret;

			if (hh->kid[k].type != J_STR && hh->kid[k].type != J_NUM) {
				cio_warn("LOGGP_COLLIO_HINTS=%s: hint %s must be a string or a "
					 "number", file, hh->keys[k]);
				return -EINVAL;
			}
			ret = set(arg, hh->keys[k], hh->kid[k].text);
			if (ret)
				return ret;
		}
	}
	return 0;
}

int cio_json_hints(const char *file, const char *path,
		   int (*set)(void *arg, const char *key, const char *value), void *arg)
{
	struct jv root = { 0 };
	struct jp p;
	char *text = NULL;
	size_t len = 0;
	FILE *fp = fopen(file, "r");
	int ret;

	if (!fp) {
		cio_warn("LOGGP_COLLIO_HINTS=%s: %s", file, strerror(errno));
		return -ENOENT;
	}
	ret = getdelim(&text, &len, 0, fp) < 0 ? -EINVAL : 0;
	fclose(fp);
	p.s = p.start = text ? text : "";
	if (!ret)
		ret = parse(&p, &root, 0);
	if (!ret) {
		ws(&p);
		ret = *p.s || root.type != J_OBJ ? -EINVAL : 0;
	}
	if (ret)
		cio_warn("LOGGP_COLLIO_HINTS=%s: not JSON of the form {\"File\": [...], "
			 "\"Directory\": [...]} (at byte %td)", file, p.s - p.start);
	if (!ret)
		ret = apply(file, &root, "Directory", path, set, arg);
	if (!ret)
		ret = apply(file, &root, "File", path, set, arg);
	jv_free(&root);
	free(text);
	return ret;
}
