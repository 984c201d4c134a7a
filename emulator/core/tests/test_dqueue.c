/* SPDX-License-Identifier: MIT */
/*
 * Unit test of dqueue.h: release order, FIFO among equal release times,
 * bounded capacity, slots with their stamps and byte counts, requeue, and
 * the heap against a sorted reference under random pushes and pops.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lgp/dqueue.h"

/* Deterministic xorshift, so a failure reproduces. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

struct ref_item {
	uint64_t release;
	uint64_t seq;
	int id;
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_item *x = a, *y = b;

	if (x->release != y->release)
		return x->release < y->release ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void test_init(void)
{
	struct lgp_dq q;

	CHECK_EQ_INT(lgp_dq_init(&q, 0), -EINVAL);
	lgp_dq_fini(&q);
	CHECK_EQ_INT(lgp_dq_init(&q, SIZE_MAX), -ENOMEM);
	lgp_dq_fini(&q);
	CHECK_EQ_INT(lgp_dq_init(&q, SIZE_MAX / 2), -ENOMEM);
	lgp_dq_fini(&q);

	CHECK_EQ_INT(lgp_dq_init(&q, 4), 0);
	CHECK_EQ_U64(lgp_dq_size(&q), 0);
	CHECK(!lgp_dq_full(&q));
	CHECK_EQ_U64(lgp_dq_next(&q), UINT64_MAX);
	CHECK(lgp_dq_pop_due(&q, UINT64_MAX) == NULL);
	CHECK_EQ_INT(lgp_dq_push(&q, 1, NULL), -EINVAL);
	CHECK_EQ_U64(lgp_dq_size(&q), 0);
	lgp_dq_fini(&q);
	CHECK(q.heap == NULL);
}

static void test_due(void)
{
	struct lgp_dq q;
	int a, b, c;

	lgp_dq_init(&q, 8);
	CHECK_EQ_INT(lgp_dq_push(&q, 300, &c), 0);
	CHECK_EQ_INT(lgp_dq_push(&q, 100, &a), 0);
	CHECK_EQ_INT(lgp_dq_push(&q, 200, &b), 0);
	CHECK_EQ_U64(lgp_dq_next(&q), 100);
	CHECK(lgp_dq_pop_due(&q, 99) == NULL);
	CHECK(lgp_dq_pop_due(&q, 0) == NULL);
	CHECK(lgp_dq_pop_due(&q, 100) == &a);	/* due exactly at release */
	CHECK(lgp_dq_pop_due(&q, 100) == NULL);
	CHECK_EQ_U64(lgp_dq_next(&q), 200);
	CHECK(lgp_dq_pop_due(&q, 1000) == &b);
	CHECK(lgp_dq_pop_due(&q, 1000) == &c);
	CHECK(lgp_dq_pop_due(&q, 1000) == NULL);
	CHECK_EQ_U64(lgp_dq_next(&q), UINT64_MAX);

	/* extreme release times */
	CHECK_EQ_INT(lgp_dq_push(&q, UINT64_MAX, &c), 0);
	CHECK_EQ_INT(lgp_dq_push(&q, 0, &a), 0);
	CHECK(lgp_dq_pop_due(&q, 0) == &a);
	CHECK(lgp_dq_pop_due(&q, UINT64_MAX - 1) == NULL);
	CHECK(lgp_dq_pop_due(&q, UINT64_MAX) == &c);
	lgp_dq_fini(&q);
}

static void test_fifo_equal(void)
{
	enum { N = 1000 };
	static int items[N];
	struct lgp_dq q;
	int i;

	lgp_dq_init(&q, N);
	for (i = 0; i < N; i++)
		CHECK_EQ_INT(lgp_dq_push(&q, 500, &items[i]), 0);
	for (i = 0; i < N; i++)
		if (!CHECK(lgp_dq_pop_due(&q, 500) == &items[i]))
			break;
	/* ties interleaved with other times keep their own order */
	for (i = 0; i < N; i++)
		lgp_dq_push(&q, (uint64_t)(i % 3) * 10, &items[i]);
	for (i = 0; i < N; i++) {
		int want = i < 334 ? 3 * i :
			   i < 667 ? 3 * (i - 334) + 1 : 3 * (i - 667) + 2;

		if (!CHECK(lgp_dq_pop_due(&q, 100) == &items[want]))
			break;
	}
	lgp_dq_fini(&q);
}

static void test_full(void)
{
	struct lgp_dq q;
	int items[4];
	int i;

	lgp_dq_init(&q, 3);
	for (i = 0; i < 3; i++)
		CHECK_EQ_INT(lgp_dq_push(&q, 10 - (uint64_t)i, &items[i]), 0);
	CHECK(lgp_dq_full(&q));
	CHECK_EQ_INT(lgp_dq_push(&q, 0, &items[3]), -EAGAIN);
	CHECK_EQ_U64(lgp_dq_size(&q), 3);
	CHECK_EQ_U64(q.max_depth, 3);
	CHECK(lgp_dq_pop_due(&q, 100) == &items[2]);
	CHECK(!lgp_dq_full(&q));
	CHECK_EQ_INT(lgp_dq_push(&q, 0, &items[3]), 0);
	CHECK(lgp_dq_pop_due(&q, 100) == &items[3]);
	CHECK(lgp_dq_pop_due(&q, 100) == &items[1]);
	CHECK(lgp_dq_pop_due(&q, 100) == &items[0]);
	CHECK_EQ_U64(q.max_depth, 3);	/* a high-water mark, not the size */
	lgp_dq_fini(&q);
}

#define ITEM(i) ((void *)(uintptr_t)((i) + 1))

/*
 * Slots keep the caller's stamp and bytes; a requeued slot takes its old
 * place (the wire puts back what its transmit ring could not take).
 */
static void test_slots(void)
{
	static const uint64_t rel[] = { 50, 10, 30, 10, 40, 20, 10 };
	struct lgp_dq_slot s, got[7];
	struct lgp_dq q;
	uint64_t last = 0;
	unsigned int i;

	CHECK_EQ_INT(lgp_dq_init(&q, 7), 0);
	CHECK(lgp_dq_head(&q) == NULL);
	CHECK_EQ_INT(lgp_dq_pop(&q, &s), -EAGAIN);
	for (i = 0; i < 7; i++) {
		s = (struct lgp_dq_slot){ .release_ns = rel[i], .item = ITEM(i),
					  .stamp_ns = 1000 + i, .bytes = 100 };
		CHECK_EQ_INT(lgp_dq_push_slot(&q, &s), 0);
		CHECK_EQ_U64(s.seq, i);
	}
	s.item = NULL;
	CHECK_EQ_INT(lgp_dq_push_slot(&q, &s), -EINVAL);
	s.item = ITEM(7);
	CHECK_EQ_INT(lgp_dq_push_slot(&q, &s), -EAGAIN);
	CHECK_EQ_U64(lgp_dq_bytes(&q), 700);
	CHECK_EQ_U64(lgp_dq_next(&q), 10);
	CHECK(lgp_dq_head(&q)->item == ITEM(1));
	/* pop three, put the second and third back: they come out in place */
	for (i = 0; i < 3; i++)
		CHECK_EQ_INT(lgp_dq_pop(&q, &got[i]), 0);
	CHECK_EQ_U64(lgp_dq_bytes(&q), 400);
	CHECK_EQ_INT(lgp_dq_requeue(&q, &got[2]), 0);
	CHECK_EQ_INT(lgp_dq_requeue(&q, &got[1]), 0);
	CHECK_EQ_U64(lgp_dq_bytes(&q), 600);
	for (i = 1; i < 7; i++)
		CHECK_EQ_INT(lgp_dq_pop(&q, &got[i]), 0);
	CHECK_EQ_INT(lgp_dq_pop(&q, &s), -EAGAIN);
	CHECK_EQ_U64(lgp_dq_bytes(&q), 0);
	for (i = 0; i < 7; i++) {
		CHECK(got[i].release_ns >= last);
		last = got[i].release_ns;
		CHECK_EQ_U64(got[i].stamp_ns,
			     1000 + (uint64_t)((uintptr_t)got[i].item - 1));
		CHECK_EQ_U64(got[i].bytes, 100);
	}
	/* equal release times leave in arrival order: items 1, 3, 6 */
	CHECK(got[0].item == ITEM(1) && got[1].item == ITEM(3) &&
	      got[2].item == ITEM(6));
	CHECK(got[6].item == ITEM(0));

	/* a requeued slot goes before an equal time pushed after it */
	CHECK_EQ_INT(lgp_dq_push(&q, 5, ITEM(0)), 0);
	CHECK_EQ_INT(lgp_dq_pop(&q, &s), 0);
	CHECK_EQ_INT(lgp_dq_push(&q, 5, ITEM(1)), 0);
	CHECK_EQ_INT(lgp_dq_requeue(&q, &s), 0);
	CHECK(lgp_dq_pop_due(&q, 5) == ITEM(0));
	CHECK(lgp_dq_pop_due(&q, 5) == ITEM(1));
	/* requeue into a full queue is refused */
	for (i = 0; i < 7; i++)
		CHECK_EQ_INT(lgp_dq_push(&q, 1, ITEM(i)), 0);
	CHECK_EQ_INT(lgp_dq_requeue(&q, &s), -EAGAIN);
	CHECK_EQ_U64(q.max_depth, 7);
	lgp_dq_fini(&q);
	CHECK_EQ_U64(lgp_dq_bytes(&q), 0);
}

/* Random pushes, then a full drain, against qsort of the same keys. */
static void test_random_sorted(void)
{
	enum { N = 5000 };
	static struct ref_item items[N], ref[N];
	struct lgp_dq q;
	struct ref_item *got;
	int i, bad = 0;

	lgp_dq_init(&q, N);
	for (i = 0; i < N; i++) {
		/* a narrow range, so many release times are equal */
		items[i].release = rng_next() % 64;
		items[i].seq = (uint64_t)i;
		items[i].id = i;
		lgp_dq_push(&q, items[i].release, &items[i]);
	}
	memcpy(ref, items, sizeof(ref));
	CHECK_EQ_U64(q.max_depth, N);
	qsort(ref, N, sizeof(ref[0]), ref_cmp);
	for (i = 0; i < N; i++) {
		got = lgp_dq_pop_due(&q, UINT64_MAX);
		if (!got || got->id != ref[i].id)
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK_EQ_U64(lgp_dq_size(&q), 0);
	lgp_dq_fini(&q);
}

/*
 * Interleaved pushes and pops with an advancing clock, against a model
 * that keeps the pending items in an array and takes the least key.
 */
static void test_random_interleaved(void)
{
	enum { CAP = 64, OPS = 200000 };
	static struct ref_item pool[OPS];
	struct ref_item *model[CAP];
	struct lgp_dq q;
	uint64_t now = 0, seq = 0;
	size_t n = 0, j, best;
	int i, bad = 0, eagain = 0, rc;
	struct ref_item *got, *want;

	lgp_dq_init(&q, CAP);
	for (i = 0; i < OPS; i++) {
		if (rng_next() % 2) {
			pool[i].release = now + rng_next() % 100;
			pool[i].id = i;
			rc = lgp_dq_push(&q, pool[i].release, &pool[i]);
			if (n == CAP) {
				eagain += rc == -EAGAIN;
				bad += rc != -EAGAIN;
				continue;
			}
			bad += rc != 0;
			pool[i].seq = seq++;
			model[n++] = &pool[i];
			continue;
		}
		now += rng_next() % 8;
		want = NULL;
		for (j = 0, best = 0; j < n; j++)
			if (ref_cmp(model[j], model[best]) < 0)
				best = j;
		if (n && model[best]->release <= now) {
			want = model[best];
			model[best] = model[--n];
		}
		got = lgp_dq_pop_due(&q, now);
		bad += got != want;
		bad += lgp_dq_size(&q) != n;
	}
	CHECK_EQ_INT(bad, 0);
	CHECK(eagain > 0);		/* the workload did fill the queue */
	CHECK_EQ_U64(q.max_depth, CAP);
	lgp_dq_fini(&q);
}

int main(void)
{
	test_init();
	test_due();
	test_fifo_equal();
	test_full();
	test_slots();
	test_random_sorted();
	test_random_interleaved();
	return check_done("test_dqueue");
}
