/* SPDX-License-Identifier: MIT */
/*
 * ns_sort.c: records, their checksums, and the local sort.
 *
 * The sort is NOW-Sort's: keys are pulled out next to the record's index,
 * the (key, index) pairs are radix sorted (LSD, 16-bit digits, a digit
 * that is the same for every record is skipped: a rank's keys share their
 * leading bits), and the records are gathered into the output order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ns.h"
#include "wl_hash.h"

/*
 * Record g: a 10-byte uniform key, then g in 20 decimal digits (records
 * are distinct), then 70 letters from the same hash, as gensort's ASCII
 * records.
 */
void ns_record(uint64_t seed, int64_t g, unsigned char *rec)
{
	uint64_t a = wl_mix64(seed * WL_GOLDEN + (uint64_t)g);
	uint64_t b = wl_mix64(a ^ 0xd1b54a32d192ed03ULL);
	uint64_t c = wl_mix64(b + (uint64_t)g);
	uint64_t v = (uint64_t)g;
	int i;

	for (i = 0; i < 8; i++)
		rec[i] = (unsigned char)(a >> (56 - 8 * i));
	rec[8] = (unsigned char)(b >> 56);
	rec[9] = (unsigned char)(b >> 48);
	for (i = 29; i >= 10; i--) {
		rec[i] = (unsigned char)('0' + v % 10);
		v /= 10;
	}
	for (i = 30; i < NS_REC; i++)
		rec[i] = (unsigned char)('A' + (c >> (i % 8 * 8) & 0xff) % 26);
}

void ns_sum_add(struct ns_sum *s, const unsigned char *rec)
{
	uint64_t h1 = 0x243f6a8885a308d3ULL, h2 = 0x13198a2e03707344ULL, w;
	int i;

	for (i = 0; i + 8 <= NS_REC; i += 8) {
		memcpy(&w, rec + i, 8);
		h1 = wl_mix64(h1 ^ w);
		h2 = wl_mix64(h2 + w * WL_GOLDEN);
	}
	w = 0;
	memcpy(&w, rec + i, NS_REC - i);
	h1 = wl_mix64(h1 ^ w);
	h2 = wl_mix64(h2 + w * WL_GOLDEN);
	s->count++;
	s->sum += h1;
	s->xor ^= h2;
}

struct ns_ent {
	uint64_t hi;		/* key bytes 0..7, big-endian */
	uint64_t lo;		/* key bytes 8..9 in the top 16 bits, the index below */
};

static unsigned ns_digit(const struct ns_ent *e, int pass)
{
	/* pass 0: key bytes 8..9; passes 1..4: 16 bits of hi, low to high */
	return pass ? (unsigned)(e->hi >> (16 * (pass - 1)) & 0xffff) :
		      (unsigned)(e->lo >> 48);
}

/* *sorted = the n records of recs in key order (malloc'd; free it). */
int ns_sort(unsigned char *recs, int64_t n, unsigned char **sorted)
{
	struct ns_ent *a, *b, *t;
	size_t *cnt;
	int64_t i;
	int pass, d, ret = -ENOMEM;

	a = malloc(sizeof(*a) * (size_t)(n ? n : 1));
	b = malloc(sizeof(*b) * (size_t)(n ? n : 1));
	cnt = malloc(sizeof(*cnt) * 65536);
	*sorted = malloc((size_t)(n ? n : 1) * NS_REC);
	if (!a || !b || !cnt || !*sorted)
		goto out;
	for (i = 0; i < n; i++) {
		const unsigned char *k = recs + i * NS_REC;
		uint64_t hi = 0;

		for (d = 0; d < 8; d++)
			hi = hi << 8 | k[d];
		a[i].hi = hi;
		a[i].lo = ((uint64_t)k[8] << 56) | ((uint64_t)k[9] << 48) | (uint64_t)i;
	}
	for (pass = 0; pass < 5; pass++) {
		size_t sum = 0, c;

		memset(cnt, 0, sizeof(*cnt) * 65536);
		for (i = 0; i < n; i++)
			cnt[ns_digit(&a[i], pass)]++;
		if (n && cnt[ns_digit(&a[0], pass)] == (size_t)n)
			continue;	/* one digit for all: already in order */
		for (d = 0; d < 65536; d++) {
			c = cnt[d];
			cnt[d] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			b[cnt[ns_digit(&a[i], pass)]++] = a[i];
		t = a;
		a = b;
		b = t;
	}
	for (i = 0; i < n; i++)
		memcpy(*sorted + i * NS_REC, recs + (a[i].lo & 0xffffffffffffULL) * NS_REC, NS_REC);
	ret = 0;
out:
	if (ret) {
		free(*sorted);
		*sorted = NULL;
	}
	free(a);
	free(b);
	free(cnt);
	return ret;
}
