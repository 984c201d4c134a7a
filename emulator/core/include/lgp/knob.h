/* SPDX-License-Identifier: MIT */
/*
 * LogGP knobs: names, units and parsing, all from the registry
 * lgp/knobs.def (the same file loggp/knobs.py reads).
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

/* Longest part of an offending value echoed in an error line. */
#define LGP_ECHO_MAX 64

/* How a value is written (lgp/knobs.def, LGP_FAMILY). */
enum lgp_family {
#define LGP_FAMILY(id, metavar, report_unit, report_label, forms) \
	LGP_FAMILY_##id,
#include "lgp/knobs.def"
	LGP_FAMILY_COUNT
};

/* The knobs, in the order they are applied (lgp/knobs.def, LGP_KNOB). */
enum lgp_knob {
#define LGP_KNOB(id, name, family, sets, group, shims, symbol, what, help) \
	LGP_KNOB_##id,
#include "lgp/knobs.def"
	LGP_KNOB_COUNT
};

/* A set of knobs, e.g. those given, for lgp_knob_conflict(). */
#define LGP_KNOB_BIT(knob) (1U << (knob))

/*
 * The resolved delays one shim applies, one member per LGP_PARAM
 * (send_overhead_ns, recv_overhead_ns, gap_ns, latency_ns, bulk_gap_fs in
 * femtoseconds per byte); all zero means "pass through".
 */
struct lgp_params {
#define LGP_PARAM(name, suffix, unit) uint64_t name##_##suffix;
#include "lgp/knobs.def"
};

/*
 * Knob name as used in YAML and CLI ("bulk_gap"), and upper-cased with a
 * LOGGP_ prefix in the environment; NULL for an invalid knob.
 */
const char *lgp_knob_name(enum lgp_knob knob);

/* The knob's environment variable ("LOGGP_BULK_GAP"); NULL if invalid. */
const char *lgp_knob_env(enum lgp_knob knob);

/* The knob's one-line description; NULL for an invalid knob. */
const char *lgp_knob_help(enum lgp_knob knob);

/* Accepted forms of a knob's value, for error messages and help text. */
const char *lgp_knob_forms(enum lgp_knob knob);

/* Knob by its exact lower-case name ("latency", "bulk_gap"); -1 if unknown. */
int lgp_knob_lookup(const char *name);

/*
 * The mutual exclusion of knobs that set the same thing (bulk_gap and
 * bandwidth): if given (a set of LGP_KNOB_BIT()s) holds two knobs of one
 * group, stores them in enum order in *first and *second and returns 1;
 * otherwise returns 0.  Every caller words its own error with the names
 * it knows the knobs by.
 */
int lgp_knob_conflict(unsigned int given, enum lgp_knob *first,
		      enum lgp_knob *second);

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
 * Copies text for an error line into dst of len bytes (LGP_ECHO_MAX + 1
 * in every message of the core): a longer text is cut and ends in "...",
 * non-printable characters are shown as '?'.
 */
void lgp_echo(char *dst, size_t len, const char *text);

/*
 * Apply one parsed knob to a parameter set: it is stored in every param
 * its registry row sets (overhead in both overheads, bandwidth and
 * bulk_gap in bulk_gap_fs).
 */
void lgp_params_set(struct lgp_params *p, enum lgp_knob knob, uint64_t value);

/* Where a knob's text comes from: NULL when the knob is not set. */
typedef const char *(*lgp_knob_source)(enum lgp_knob knob, void *ctx);

/*
 * Read every knob's text from get into *p (unset knobs are zero, set but
 * empty is a bad value).  Two knobs of one group (lgp_knob_conflict()) are
 * -EINVAL, reported as a bad value of the second:
 *   bad value '<text>' for LOGGP_BANDWIDTH: expected LOGGP_BANDWIDTH or
 *   LOGGP_BULK_GAP, not both
 * Otherwise knobs are parsed and applied in enum order, so LOGGP_OVERHEAD
 * comes before the per-side overheads that refine it.  Returns 0 or the
 * first error, with its message in err; *p is written only on success.
 */
int lgp_params_read(struct lgp_params *p, lgp_knob_source get, void *ctx,
		    char *err, size_t errlen);

/* lgp_params_read() from the LOGGP_<KNOB> environment variables. */
int lgp_params_from_env(struct lgp_params *p, char *err, size_t errlen);

/* Nonzero if any delay is configured. */
int lgp_params_active(const struct lgp_params *p);

/* Writes "send_overhead=10000ns recv_overhead=... bulk_gap=...fs/B". */
int lgp_params_format(const struct lgp_params *p, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LGP_KNOB_H */
