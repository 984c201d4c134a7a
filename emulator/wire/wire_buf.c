/* SPDX-License-Identifier: MIT */
/* Growable text buffer (see wire_buf.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire_buf.h"

void wire_buf_init(struct wire_buf *b)
{
	memset(b, 0, sizeof(*b));
}

void wire_buf_fini(struct wire_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void wire_buf_reset(struct wire_buf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->data)
		b->data[0] = '\0';
}

static int wire_buf_reserve(struct wire_buf *b, size_t extra)
{
	size_t want = b->len + extra + 1;
	size_t cap = b->cap ? b->cap : 256;
	char *p;

	if (b->failed)
		return -1;
	if (want <= b->cap)
		return 0;
	while (cap < want)
		cap *= 2;
	p = realloc(b->data, cap);
	if (!p) {
		b->failed = 1;
		return -1;
	}
	b->data = p;
	b->cap = cap;
	return 0;
}

void wire_buf_printf(struct wire_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || wire_buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void wire_buf_json_str(struct wire_buf *b, const char *s)
{
	const unsigned char *p;

	wire_buf_printf(b, "\"");
	for (p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			wire_buf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			wire_buf_printf(b, "\\u%04x", *p);
		else
			wire_buf_printf(b, "%c", *p);
	}
	wire_buf_printf(b, "\"");
}

void wire_buf_json_double(struct wire_buf *b, double v)
{
	char tmp[64];

	snprintf(tmp, sizeof(tmp), "%.12g", v);
	if (!strpbrk(tmp, ".eEn"))
		strcat(tmp, ".0");
	wire_buf_printf(b, "%s", tmp);
}
