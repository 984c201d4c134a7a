/* SPDX-License-Identifier: MIT */
/*
 * Output of loggp-calibrate: the human table on stdout and the JSON
 * document other tools read (shape documented in README.md).
 */
#ifndef CALIB_REPORT_H
#define CALIB_REPORT_H

#include <stdio.h>

#include "calib_bench.h"
#include "calib_opts.h"

void calib_report_table(FILE *out, const struct calib_opts *opts,
			const char *provider, const struct calib_results *r);

/* Writes the JSON file; returns 0 or a negative errno after one error line. */
int calib_report_json(const char *path, const struct calib_opts *opts,
		      const char *provider, const struct calib_results *r);

#endif /* CALIB_REPORT_H */
