/* SPDX-License-Identifier: MIT */
/*
 * Knobs over time: a schedule of knob changes (docs/design.md, "Knobs
 * over time").
 *
 * LOGGP_SCHEDULE names a file of lines (the runner writes it from an
 * experiment's emulator.schedule, loggp/plan/schedule.py):
 *     # comment
 *     start UNIX_NS          optional, before the steps: the common origin
 *     TIME KNOB VALUE        from TIME on, KNOB is VALUE
 * TIME is a time knob's form (2s, 1500ms), KNOB a knob's name (latency,
 * bandwidth, ...), VALUE that knob's form.  Lines of one TIME make one
 * step; times may repeat but never decrease.  A step changes only the
 * knobs it names: the others keep the value they had, starting from the
 * LOGGP_<KNOB> variables.  Step 0 is in effect from time 0: those values
 * and the lines at 0.  Two knobs of one group (bulk_gap, bandwidth) in one
 * step are an error, in different steps the later one wins.
 *
 * Times count from start (CLOCK_REALTIME nanoseconds since the epoch, so
 * that the ranks of a job agree), or, without a start line, from when the
 * process loaded its configuration.
 */
#ifndef LGP_SCHED_H
#define LGP_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lgp/knob.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LGP_SCHED_MAX_STEPS	4096

struct lgp_sched_step {
	uint64_t at_ns;			/* since the origin */
	struct lgp_params params;	/* every knob from at_ns on */
};

struct lgp_sched {
	uint32_t steps;			/* 0: no schedule */
	struct lgp_sched_step *step;	/* [steps], at_ns increasing */
	bool has_start;
	uint64_t start_unix_ns;		/* the start line's */
	struct lgp_params peak;		/* each param's largest over the steps */
};

/*
 * Reads the schedule at path, with base the knobs of step 0 before its
 * lines.  Returns 0, or a negative errno with one line in err naming the
 * file's line, what is wrong and what is accepted; *s then has no steps.
 */
int lgp_sched_load(struct lgp_sched *s, const char *path,
		   const struct lgp_params *base, char *err, size_t errlen);

void lgp_sched_fini(struct lgp_sched *s);

/*
 * The origin on a clock whose now is now_ns, CLOCK_REALTIME being
 * realtime_ns at the same moment: start mapped onto it (negative if it
 * lies before that clock's zero), or now_ns without a start line.
 */
int64_t lgp_sched_origin(const struct lgp_sched *s, uint64_t now_ns,
			 uint64_t realtime_ns);

/* When step k falls due on that clock: 0 if at once, UINT64_MAX for none. */
uint64_t lgp_sched_due(const struct lgp_sched *s, int64_t origin, uint32_t k);

/* The step in effect at now_ns, looking from step k on. */
uint32_t lgp_sched_step_at(const struct lgp_sched *s, int64_t origin, uint32_t k,
			   uint64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif /* LGP_SCHED_H */
