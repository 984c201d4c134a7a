/* SPDX-License-Identifier: MIT */
/* loggp-calibrate's error line (calib_err.h). */
#include <stdarg.h>
#include <stdio.h>

#include "calib_err.h"

void calib_err(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", CALIB_NAME);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
