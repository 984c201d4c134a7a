/* SPDX-License-Identifier: MIT */
/* loggp-calibrate's error line: every file reports failures through it. */
#ifndef CALIB_ERR_H
#define CALIB_ERR_H

#define CALIB_NAME "loggp-calibrate"

/* Prints "loggp-calibrate: <msg>" as one line on stderr. */
void calib_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* CALIB_ERR_H */
