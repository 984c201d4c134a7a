/* SPDX-License-Identifier: MIT */
/*
 * A growable, always NUL-terminated text buffer for the JSON and
 * Prometheus documents loggp-wire writes.  The buffer owns its memory;
 * wire_buf_fini() frees it.  After an allocation failure the buffer is
 * marked failed, further appends are ignored and wire_buf_failed()
 * reports it, so callers check once at the end instead of per append.
 */
#ifndef WIRE_BUF_H
#define WIRE_BUF_H

#include <stddef.h>

struct wire_buf {
	char *data;
	size_t len;
	size_t cap;
	int failed;
};

void wire_buf_init(struct wire_buf *b);
void wire_buf_fini(struct wire_buf *b);
void wire_buf_reset(struct wire_buf *b);
void wire_buf_printf(struct wire_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Appends s as a JSON string literal, quotes included. */
void wire_buf_json_str(struct wire_buf *b, const char *s);
/* Appends a double so that it reads back as a JSON number (0 -> 0.0). */
void wire_buf_json_double(struct wire_buf *b, double v);
static inline int wire_buf_failed(const struct wire_buf *b) { return b->failed; }
static inline const char *wire_buf_str(const struct wire_buf *b)
{
	return b->data ? b->data : "";
}

#endif /* WIRE_BUF_H */
