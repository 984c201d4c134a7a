/* SPDX-License-Identifier: MIT */
/*
 * LogGP knobs: names, units and parsing.
 *
 * Every knob value carries a unit (docs/design.md, "Knobs"):
 *   time knobs (overhead, send_overhead, recv_overhead, gap, latency):
 *       <number>{ns|us|ms|s}           e.g. "10us", "2.5ms", "0ns"
 *   bulk_gap (time per byte):
 *       <number>{ps/B|ns/B|us/B}       e.g. "1ns/B", "0.08ns/B"
 *   bandwidth (the inverse of bulk_gap):
 *       <number>{B/s|kB/s|MB/s|GB/s|KiB/s|MiB/s|GiB/s|kbit/s|Mbit/s|Gbit/s}
 * A number is <digits>[.<digits>]: it may not be negative, signed, empty,
 * start or end with '.', carry an exponent, or lack a unit.  Units are
 * case-sensitive and follow the number directly or after exactly one space
 * ("10us", "10 us"); nothing may precede or follow.  Fractional digits
 * past the eighteenth are ignored; results are rounded to the nearest
 * nanosecond or femtosecond per byte.  A bandwidth of zero is an error (it
 * would mean infinite time per byte), and so is one so high that its time
 * per byte rounds to 0 fs (-ERANGE).
 *
 * Error lines (the shim prefixes "loggp: "):
 *   bad value '<text>' for LOGGP_<KNOB>: expected <forms>
 * with " (out of range)" appended for -ERANGE; <text> is cut to 64
 * characters and non-printable characters are shown as '?', so the
 * message is always one line.
 *
 * Internally times are nanoseconds and the bulk gap is femtoseconds per
 * byte, so that bandwidths up to 1 PB/s keep three significant digits.
 */
#ifndef LGP_KNOB_H
#define LGP_KNOB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LGP_FS_PER_NS 1000000ULL

/* An err buffer of this size always holds a whole error line. */
#define LGP_KNOB_ERRLEN 256

enum lgp_knob {
	LGP_KNOB_OVERHEAD,	/* sets send_overhead and recv_overhead */
	LGP_KNOB_SEND_OVERHEAD,
	LGP_KNOB_RECV_OVERHEAD,
	LGP_KNOB_GAP,
	LGP_KNOB_LATENCY,
	LGP_KNOB_BULK_GAP,
	LGP_KNOB_BANDWIDTH,	/* sets bulk_gap = 1 / bandwidth */
	LGP_KNOB_COUNT
};

/* The resolved delays one shim applies; all zero means "pass through". */
struct lgp_params {
	uint64_t send_overhead_ns;
	uint64_t recv_overhead_ns;
	uint64_t gap_ns;
	uint64_t latency_ns;
	uint64_t bulk_gap_fs;	/* femtoseconds per byte */
};

/*
 * Knob name as used in YAML and CLI ("bulk_gap"), and upper-cased with a
 * LOGGP_ prefix in the environment; NULL for an invalid knob.
 */
const char *lgp_knob_name(enum lgp_knob knob);

/* Accepted forms of a knob's value, for error messages and help text. */
const char *lgp_knob_forms(enum lgp_knob knob);

/* Knob by its exact lower-case name ("latency", "bulk_gap"); -1 if unknown. */
int lgp_knob_lookup(const char *name);

/*
 * Parse one value of a knob.  On success stores nanoseconds (time knobs)
 * or femtoseconds per byte (bulk_gap, bandwidth) in *out and returns 0.
 * On failure returns -EINVAL (malformed, negative, no or unknown unit,
 * zero bandwidth) or -ERANGE (does not fit), and writes one line into
 * err naming the knob, the offending text and the accepted forms.  err
 * may be NULL; on success it holds the empty string.
 */
int lgp_knob_parse(enum lgp_knob knob, const char *text, uint64_t *out,
		   char *err, size_t errlen);

/*
 * Apply one parsed knob to a parameter set: overhead sets both overheads,
 * bandwidth and bulk_gap both set bulk_gap_fs.
 */
void lgp_params_set(struct lgp_params *p, enum lgp_knob knob, uint64_t value);

/*
 * Read the LOGGP_<KNOB> environment variables into *p (unset knobs are
 * zero; set but empty is a bad value).  LOGGP_OVERHEAD is applied before
 * the per-side overheads, so LOGGP_SEND_OVERHEAD/LOGGP_RECV_OVERHEAD
 * refine it; setting both LOGGP_BULK_GAP and LOGGP_BANDWIDTH is -EINVAL.
 * Returns 0 or the first error in enum order, with its message in err;
 * *p is written only on success.
 */
int lgp_params_from_env(struct lgp_params *p, char *err, size_t errlen);

/* Nonzero if any delay is configured. */
int lgp_params_active(const struct lgp_params *p);

/* Writes "send_overhead=10000ns recv_overhead=... bulk_gap=...fs/B". */
int lgp_params_format(const struct lgp_params *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LGP_KNOB_H */
