/* SPDX-License-Identifier: MIT */
/*
 * The forwarding loop: one lcore polls every port, hands each frame to
 * the egress port(s) chosen by the mode (pair or MAC-learning switch),
 * shapes it there (wire_egress.h) and sends what is due.
 *
 * The forwarder owns the delay lines and the mbufs in them; the knobs
 * and counters it shares with the control thread are in wire_state.
 * Times come from lgp_core's clock, which wire_fwd_init() starts on the
 * TSC at the rate DPDK reports (lgp_clock_init_tsc()).
 */
#ifndef WIRE_FWD_H
#define WIRE_FWD_H

#include <signal.h>
#include <stdint.h>

#include "wire_egress.h"
#include "wire_mac.h"
#include "wire_state.h"

#define WIRE_BURST	32

struct wire_fwd {
	struct wire_state *st;
	uint16_t *port_ids;		/* wire port i -> ethdev port id */
	struct wire_egress *eg;		/* per wire port */
	struct wire_mac_table *mac;
	uint64_t idle_sleep_ns;
	uint64_t overshoot_ns;		/* recent nanosleep overshoot */
	volatile sig_atomic_t *quit;
};

/*
 * Returns 0, or -ENOMEM.  Takes about 10 ms (the clock's calibration).
 * Port i draws its delays from st's distribution (wire_dist.h) with
 * generator stream i, starting again whenever it is replaced.
 */
int wire_fwd_init(struct wire_fwd *f, struct wire_state *st,
		  uint16_t *port_ids, uint64_t seed, int jitter_reorder,
		  uint64_t idle_sleep_ns, volatile sig_atomic_t *quit);
/* Drops (and counts as drops.tx) what is still in the delay lines. */
void wire_fwd_fini(struct wire_fwd *f);

/* lcore entry point; runs until *quit.  arg is a struct wire_fwd. */
int wire_fwd_loop(void *arg);

#endif /* WIRE_FWD_H */
