/* SPDX-License-Identifier: MIT */
/*
 * The shaping knobs of one egress port, and how to parse them.
 *
 * A struct wire_shape is a plain value.  Once the forwarding lcore can
 * see one (wire_state.h) it is never written again; a change builds a
 * new one.  The same knob table serves the command line ("--queue-pkts")
 * and the control socket ("queue_pkts") so both accept the same forms
 * and report the same errors; time and bandwidth values are parsed by
 * lgp_knob_parse() from lgp_core, exactly like the fabric shim, and the
 * knobs that are LogGP knobs (latency, gap, bandwidth, bulk_gap) follow
 * the registry's exclusion (lgp/knobs.def).  jitter, burst, the queue
 * limits and loss are the wire's own.
 *
 * Errors are one line: "bad value '<text>' for <name>: expected <forms>".
 */
#ifndef WIRE_SHAPE_H
#define WIRE_SHAPE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Defaults.  The queue limit must hold a bandwidth x delay product with
 * room to spare: 500 Mbit/s x 5 ms is 312 KiB, about 210 full frames, and
 * a TCP sender without loss grows its window up to its socket buffer
 * (Linux tcp_wmem max 4 MiB), i.e. ~2800 frames.  8192 frames / 16 MiB
 * covers that for one stream with margin.  The burst (token-bucket
 * depth) of 64 KiB lets a TSO-sized burst through at the line rate of
 * the host and keeps the long-run rate exact (the average over T seconds
 * is off by at most burst / T bytes per second).
 */
#define WIRE_DEF_BURST_BYTES	65536ULL
#define WIRE_DEF_QUEUE_PKTS	8192ULL
#define WIRE_DEF_QUEUE_BYTES	(16ULL << 20)

struct wire_shape {
	uint64_t latency_ns;	/* added to every packet */
	uint64_t jitter_ns;	/* uniform in [-jitter, +jitter] around latency */
	uint64_t gap_ns;	/* minimum time between two departures */
	uint64_t bulk_gap_fs;	/* time per byte; 0 = no bandwidth limit */
	uint64_t burst_bytes;	/* token-bucket depth for the bandwidth limit */
	uint64_t queue_pkts;	/* tail-drop limit of the delay line */
	uint64_t queue_bytes;
	double loss;		/* drop probability 0..1 */
};

enum wire_knob {
	WIRE_KNOB_LATENCY,
	WIRE_KNOB_JITTER,
	WIRE_KNOB_GAP,
	WIRE_KNOB_BANDWIDTH,
	WIRE_KNOB_BULK_GAP,
	WIRE_KNOB_BURST,
	WIRE_KNOB_QUEUE_PKTS,
	WIRE_KNOB_QUEUE_BYTES,
	WIRE_KNOB_LOSS,
	WIRE_KNOB_COUNT
};

/* How a knob's value is written in a control request. */
enum wire_knob_kind {
	WIRE_KIND_UNIT,		/* JSON string with a unit: "1ms", "100Mbit/s" */
	WIRE_KIND_UINT,		/* JSON integer */
	WIRE_KIND_PROB,		/* JSON number 0..1 */
};

void wire_shape_default(struct wire_shape *s);

/* Control-protocol key ("queue_pkts"); NULL for an invalid knob. */
const char *wire_knob_key(enum wire_knob k);
/* Command-line option ("--queue-pkts"). */
const char *wire_knob_option(enum wire_knob k);
enum wire_knob_kind wire_knob_kind(enum wire_knob k);
/* Knob by control key or by command-line option; -1 if unknown. */
int wire_knob_by_key(const char *key);
int wire_knob_by_option(const char *opt);
/* "latency, jitter, ..." for error messages. */
const char *wire_knob_keys(void);

/* A set of knobs, e.g. those one request gives. */
#define WIRE_KNOB_BIT(k) (1U << (k))

/*
 * The registry's exclusion (lgp_knob_conflict()) over the LogGP knobs in
 * given: 0, or -EINVAL with one line in err naming the two knobs by their
 * options (by_option) or control keys, e.g.
 *   --bandwidth and --bulk-gap set the same knob: give one of them, not both
 */
int wire_shape_conflict(unsigned int given, int by_option, char *err,
			size_t errlen);

/*
 * Parse text as a value of knob k and store it in *s.  name is how the
 * knob is called in the error message ("--latency" or "latency").
 * Returns 0, or -EINVAL/-ERANGE with one line in err.
 */
int wire_shape_parse(struct wire_shape *s, enum wire_knob k, const char *name,
		     const char *text, char *err, size_t errlen);

/* Parse a time value ("20us") for options other than knobs. */
int wire_parse_time(const char *name, const char *text, uint64_t *ns,
		    char *err, size_t errlen);
/* Parse a non-negative decimal integer with no sign, unit or spaces. */
int wire_parse_u64(const char *name, const char *text, uint64_t *v,
		   char *err, size_t errlen);

#endif /* WIRE_SHAPE_H */
