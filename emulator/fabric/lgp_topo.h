/* SPDX-License-Identifier: MIT */
/*
 * A network's per-destination latency, gap and bulk gap (docs/design.md,
 * "Topology").
 *
 * LOGGP_TOPOLOGY names a pair table the runner derives from an
 * experiment's network (loggp/plan/topology.py), one line per pair of
 * ranks that adds something:
 *     # comment
 *     ranks N
 *     SRC DST LATENCY_NS GAP_NS BULK_GAP_FS
 * A process learns its rank from its MPI launcher (OMPI_COMM_WORLD_RANK,
 * PMIX_RANK, PMI_RANK) and keeps its own row.  To tell which rank a
 * libfabric address belongs to, every process publishes the names of its
 * endpoints (fi_getname of enabled, connecting and listening endpoints) as
 * hex lines of the file <table>.names/<rank>, and a sender looks a
 * destination's name (fi_av_lookup, or fi_getpeer of a connected endpoint)
 * up among them.  A process without a rank, or a table with no row of
 * its, uses the uniform knobs alone.
 *
 * The pair's gap and bulk gap pace the path towards each destination
 * rank, in series with the endpoint's port (lgp_engine.h): one pacer per
 * destination and domain, so every endpoint of the domain shares it.
 */
#ifndef LGP_TOPO_H
#define LGP_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/fabric.h>

#define LGP_TOPO_MAX_RANKS	1024
/* A destination found in nobody's names is looked up again this much later. */
#define LGP_TOPO_RETRY_NS	1000000ULL

struct lgp_topo {
	bool on;		/* a table, and this process's rank in it */
	bool adds;		/* some destination adds latency, gap or bulk gap */
	bool paces;		/* some destination has a gap or bulk gap */
	uint32_t rank;
	uint32_t ranks;
	uint64_t *latency_ns;	/* [ranks]: from this rank to each */
	uint64_t *gap_ns;	/* [ranks] */
	uint64_t *bulk_gap_fs;	/* [ranks] */
	char names[4096];	/* directory of published names */
};

/* What a sender knows of one destination. */
struct lgp_topo_dest {
	int32_t rank;		/* LGP_TOPO_UNKNOWN, LGP_TOPO_NONE or the rank */
	uint64_t retry_at;	/* LGP_TOPO_NONE: when to look again */
};

#define LGP_TOPO_UNKNOWN	(-2)	/* never looked up */
#define LGP_TOPO_NONE		(-1)	/* in nobody's names yet */

/*
 * Loads rank's row of the table at path (rank < 0: none known, the
 * topology is off).  Returns 0, or a negative errno with errmsg set to
 * one line naming what is wrong and what is accepted.
 */
int lgp_topo_load(struct lgp_topo *t, const char *path, long rank,
		  char *errmsg, size_t len);

/* Publishes the name of a real endpoint or passive endpoint, if it has one. */
void lgp_topo_publish(const struct lgp_topo *t, struct fid *fid);

/* The rank that published name, or LGP_TOPO_NONE. */
int32_t lgp_topo_find(const struct lgp_topo *t, const void *name, size_t len);

/*
 * Resolves d if it is unknown, or was not found and its retry time has
 * come: lookup() fills a destination's name (0) or fails.
 */
void lgp_topo_resolve(const struct lgp_topo *t, struct lgp_topo_dest *d,
		      uint64_t now,
		      int (*lookup)(void *ctx, void *name, size_t *len), void *ctx);

/* Frees what lgp_topo_load() allocated. */
void lgp_topo_fini(struct lgp_topo *t);

/* The latency the table adds towards d: 0 for none or an unknown rank. */
static inline uint64_t lgp_topo_latency(const struct lgp_topo *t,
					const struct lgp_topo_dest *d)
{
	return d->rank >= 0 ? t->latency_ns[d->rank] : 0;
}

#endif /* LGP_TOPO_H */
