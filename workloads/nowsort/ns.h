/* SPDX-License-Identifier: MIT */
/*
 * ns.h: what the files of nowsort share.
 *
 * Records are Datamation's: NS_REC bytes, the first NS_KEY of them the key
 * (compared as unsigned bytes).  Record g of the global input is a function
 * of (seed, g) alone; rank r's input file holds records [lo, lo + n) of an
 * even split.  The owner of a key is its first two bytes scaled to the
 * rank count, so uniform keys give every rank an even share.
 *
 * - ns_dist.c: the pipelined distribution of the records (timed).
 * - ns_io.c: the run directory, whole-file reads and writes that check
 *   every call and name the path in their one-line error, and the input's
 *   generation.
 * - ns_sort.c: the local sort, record checksums, the output's check.
 *
 * Functions return 0 or a negative errno and have already printed the one
 * line that says what failed and where; nothing here exits.
 */
#ifndef NS_H
#define NS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#include "wl.h"
#include "wl_part.h"

#define NS_REC		100
#define NS_KEY		10
#define NS_TAG_DATA	51
#define NS_TAG_LAST	52

/* Order-independent digest of a multiset of records. */
struct ns_sum {
	uint64_t count;
	uint64_t sum;		/* sum of record hashes mod 2^64 */
	uint64_t xor;		/* xor of a second hash */
};

/* An open file and the path its errors name. */
struct ns_file {
	int fd;
	const char *path;
	int rank;
};

static inline int ns_owner(const unsigned char *rec, int nranks)
{
	return (int)((((uint32_t)rec[0] << 8 | rec[1]) * (uint64_t)nranks) >> 16);
}

/* The distribution of one rank's records (the first timed phase). */
struct ns_dist {
	const struct wl_prog *p;
	struct wl_msgs *m;
	size_t per;			/* records per send buffer */
	unsigned char **sbuf;		/* [2 * dest + which] */
	size_t *fill;			/* records in dest's current buffer */
	int *cur;			/* dest's buffer being filled */
	MPI_Request *sreq;		/* [2 * dest + which] */
	unsigned char *rbuf;		/* records this rank owns */
	int64_t rn, rcap;
	int lasts;			/* final messages received */
	bool corrupt;
};

/* ns_dist.c */
int ns_dist_init(struct ns_dist *x, const struct wl_prog *p, struct wl_msgs *m,
		 size_t per, int64_t expect);
void ns_dist_fini(struct ns_dist *x);
int ns_distribute(struct ns_dist *x, const char *path, int64_t n, unsigned char *chunk,
		  double *read_s);

/* ns_io.c */
int ns_dir_make(const struct wl_prog *p, const char *parent, char *dir, size_t len);
void ns_dir_remove(const struct wl_prog *p, const char *dir, const char *const *paths,
		   int npaths);
int ns_file_open(struct ns_file *f, const char *path, int rank, bool writing);
int ns_file_close(struct ns_file *f, bool sync);
int ns_file_read(struct ns_file *f, void *buf, size_t len, size_t *got);
int ns_file_write(struct ns_file *f, const void *buf, size_t len);
int ns_file_drop_cache(struct ns_file *f);
int ns_gen(const char *path, int rank, uint64_t seed, int64_t lo, int64_t n,
	   size_t chunk, bool sync, struct ns_sum *sum);

/* ns_sort.c */
void ns_record(uint64_t seed, int64_t g, unsigned char *rec);
void ns_sum_add(struct ns_sum *s, const unsigned char *rec);
int ns_sort(unsigned char *recs, int64_t n, unsigned char **sorted);

#endif /* NS_H */
