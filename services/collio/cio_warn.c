/* cio_warn.c: the library's one-line messages, on stderr. */
#include <stdarg.h>
#include <stdio.h>

#include "cio.h"

void cio_warn(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "collio: %s\n", msg);
}
