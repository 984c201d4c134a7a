/* SPDX-License-Identifier: MIT */
/*
 * ofi_hook_loggp: a libfabric hooking provider that adds LogGP delays
 * (README.md; docs/design.md, "LogGP semantics").
 *
 * libfabric calls lgp_fabric_hook() for every fabric the application opens
 * (FI_HOOK=loggp).  For a core provider (tcp, shm, udp, verbs ...) it wraps
 * the fabric and, through it, every object opened below: domains,
 * endpoints, completion queues, counters, address vectors, event queues,
 * memory regions and poll sets.  Utility providers (ofi_rxm, ofi_rxd,
 * ofi_mrail) are not wrapped: their own traffic runs over a core fabric
 * that is itself hooked, so each message is delayed exactly once, at the
 * provider nearest the wire; only o_r moves up to the utility's CQ
 * (lgp_util.h).
 */
#ifndef LGP_FABRIC_H
#define LGP_FABRIC_H

#include <stdbool.h>

#include <rdma/fabric.h>

#include <lgp/stats.h>

#include "lgp_topo.h"

struct lgp_fabric {
	struct fid_fabric fabric;
	struct fid_fabric *hfabric;
	const char *prov_name;
	struct lgp_stats stats;
	/*
	 * With a topology (lgp_topo.h), per destination rank: messages, the
	 * latency the topology added to them, their bytes and how much later
	 * its path's g and G let them leave (LGP_PAIR_* blocks of ranks); and
	 * messages to a destination of no known rank.
	 */
	uint64_t *pair;
	uint64_t pair_unmatched;
	/*
	 * With a schedule (lgp/sched.h), per step: messages and the latency
	 * they got ([0, steps) and [steps, 2 steps)).
	 */
	uint64_t *steps;
	bool stats_written;
	struct lgp_fabric *next;	/* list of open fabrics for exit dump */
};

extern struct fi_ops lgp_fabric_fi_ops;

int lgp_fabric_hook(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
		    void *context);
/* Writes the fabric's counters once (LOGGP_STATS_FILE, the log). */
void lgp_fabric_stats_write(struct lgp_fabric *fab);
enum { LGP_PAIR_MSGS, LGP_PAIR_LATENCY, LGP_PAIR_BYTES, LGP_PAIR_PACED, LGP_PAIR_COUNT };

struct lgp_eng_msg;
struct lgp_eng_plan;

/* Counts a message to a destination (NULL: none looked up) of the topology. */
void lgp_fabric_count_pair(struct lgp_fabric *fab, const struct lgp_topo_dest *d,
			   const struct lgp_eng_msg *msg, const struct lgp_eng_plan *plan);
/* The same for every fabric still open. */
void lgp_fabric_stats_write_all(void);

#endif /* LGP_FABRIC_H */
