/* cio_warn.c: the library's one-line messages, on stderr, or held back while
 * every rank checks something that only one of them should report. */
#include <stdarg.h>
#include <stdio.h>

#include "cio.h"

static char *held;
static size_t held_len;

void cio_warn_hold(char *buf, size_t len)
{
	held = buf;
	held_len = len;
	if (buf && len)
		buf[0] = 0;
}

void cio_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!held) {
		fprintf(stderr, "collio: %s\n", msg);
		return;
	}
	if (!held[0])	/* the first message says what went wrong */
		snprintf(held, held_len, "collio: %s\n", msg);
}
