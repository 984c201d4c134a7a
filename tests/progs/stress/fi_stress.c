/* SPDX-License-Identifier: MIT */
/*
 * fi_stress: no loss, duplication, reordering or corruption over libfabric.
 *
 *   mpirun -np N fi_stress -p PROVIDER [-e rdm|msg] [-m MSGS] [-M MAXSIZE]
 *                          [-o OPS] [-k CHUNKS] [-s SEED] [-t TIMEOUT_S]
 *                          [-w WINDOW] [-r RXBUFS]
 *
 * MPI only starts the ranks, exchanges endpoint addresses and windows and
 * synchronises; run it with MPI on its own transport (pml ob1, btl
 * self,vader,tcp) so that every libfabric message counted is one of ours.
 *
 * OPS is a comma-separated list of send, tsend, inject, tinject (the
 * message operations, used round-robin; at least one), write, read and
 * atomic; default "send".  First the message phase (stress_xfer.c): rank r
 * sends its share of MSGS (total over all ranks) round-robin to the other
 * ranks; each message is a struct stress_hdr followed by a payload whose
 * size and bytes are a pure function of (seed, src, dst, k) (stress_msg.h).
 * Receivers check magic, source, tag, size, checksum, that every k from
 * every source arrives exactly once and in the order sent.  Then, if OPS
 * names any, the RMA and atomic phase (stress_rma.c): CHUNKS writes and
 * atomics into every peer's window, reads back, and checks of every
 * window and counter.
 *
 * -e msg (needed by plain "tcp", which has no RDM endpoint in 1.17) runs two
 * ranks over one connection: rank 0 listens, rank 1 connects.
 *
 * Every wait is bounded by TIMEOUT_S of no progress and then reports the
 * peer and step that stalled.  Rank 0 prints one JSON line: totals, the
 * operations posted by kind, the errors by kind and, per rank, its pid, its
 * time from the start barrier to the end barrier and the operations and
 * bytes it issued to each rank (which the shim's pacing bounds below);
 * the exit status is 0 only if every check on every rank passed.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>
#include <rdma/fi_errno.h>

#include "stress.h"
#include "stress_msg.h"

const char *const stress_op_names[STRESS_OP_COUNT] = {
	[STRESS_OP_SEND] = "send",
	[STRESS_OP_TSEND] = "tsend",
	[STRESS_OP_INJECT] = "inject",
	[STRESS_OP_TINJECT] = "tinject",
	[STRESS_OP_WRITE] = "write",
	[STRESS_OP_READ] = "read",
	[STRESS_OP_ATOMIC] = "atomic",
};

const char *const stress_err_names[STRESS_NERRS] = {
	"magic", "size", "checksum", "duplicate", "order", "lost", "extra", "cq",
	"tag", "window", "counter", "read",
};

static void stress_usage(void)
{
	fprintf(stderr, "usage: fi_stress -p PROVIDER [-e rdm|msg] [-m MSGS] [-M MAXSIZE]\n"
		"                 [-o OPS] [-k CHUNKS] [-s SEED] [-t TIMEOUT_S] [-w WINDOW]\n"
		"                 [-r RXBUFS]\n"
		"  OPS: comma-separated send,tsend,inject,tinject,write,read,atomic "
		"(default send)\n");
}

/* Parses -o; says what is wrong on stderr if loud. */
static int stress_ops_parse(struct stress_opts *o, char *list, bool loud)
{
	char *tok, *save = NULL;
	int op;

	o->ops = 0;
	o->n_msg_ops = 0;
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (op = 0; op < STRESS_OP_COUNT && strcmp(tok, stress_op_names[op]); op++)
			;
		if (op == STRESS_OP_COUNT || (o->ops & STRESS_OP_BIT(op))) {
			if (loud)
				fprintf(stderr, "fi_stress: -o: '%s' is %s: expected each of send, "
					"tsend, inject, tinject, write, read, atomic at most once\n",
					tok, op == STRESS_OP_COUNT ? "unknown" : "listed twice");
			return -FI_EINVAL;
		}
		o->ops |= STRESS_OP_BIT(op);
		if (STRESS_OP_BIT(op) & STRESS_MSG_OPS)
			o->msg_ops[o->n_msg_ops++] = (enum stress_op)op;
	}
	if (!o->n_msg_ops) {
		if (loud)
			fprintf(stderr, "fi_stress: -o: needs a message operation: send, tsend, "
				"inject or tinject\n");
		return -FI_EINVAL;
	}
	return 0;
}

static int stress_opts_parse(struct stress_opts *o, int argc, char **argv, bool loud)
{
	int c;

	*o = (struct stress_opts){ .ep_type = FI_EP_RDM, .msgs = 100000,
				   .max_size = 1 << 20, .seed = 1, .timeout_s = 120,
				   .window = 8, .rxbufs = 16, .n_msg_ops = 1,
				   .ops = STRESS_OP_BIT(STRESS_OP_SEND),
				   .msg_ops = { STRESS_OP_SEND }, .chunks = 256 };
	while ((c = getopt(argc, argv, "p:e:m:M:o:k:s:t:w:r:")) != -1) {
		switch (c) {
		case 'p': o->prov = optarg; break;
		case 'e':
			if (!strcmp(optarg, "msg"))
				o->ep_type = FI_EP_MSG;
			else if (strcmp(optarg, "rdm"))
				return -FI_EINVAL;
			break;
		case 'm': o->msgs = strtoull(optarg, NULL, 0); break;
		case 'M': o->max_size = strtoull(optarg, NULL, 0); break;
		case 'o':
			if (stress_ops_parse(o, optarg, loud))
				return -FI_EINVAL;
			break;
		case 'k': o->chunks = atoi(optarg); break;
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 't': o->timeout_s = atoi(optarg); break;
		case 'w': o->window = atoi(optarg); break;
		case 'r': o->rxbufs = atoi(optarg); break;
		default: return -FI_EINVAL;
		}
	}
	/* A tag carries k in 32 bits. */
	if (!o->prov || !o->max_size || o->timeout_s <= 0 || o->window <= 0 ||
	    o->rxbufs <= 0 || o->chunks <= 0 || o->msgs >> 32)
		return -FI_EINVAL;
	return 0;
}

/* Per rank: pid, nanoseconds, messages received, posts refused, then ops and
 * bytes to each rank. */
#define STRESS_RANK_FIXED 4

static void stress_print_rank(const uint64_t *v, int nranks, bool last)
{
	int i;

	printf("{\"pid\":%" PRIu64 ",\"seconds\":%.6f,\"received\":%" PRIu64
	       ",\"refused\":%" PRIu64 ",\"ops_to\":[", v[0], (double)v[1] * 1e-9, v[2], v[3]);
	for (i = 0; i < nranks; i++)
		printf("%s%" PRIu64, i ? "," : "", v[STRESS_RANK_FIXED + i]);
	printf("],\"bytes_to\":[");
	for (i = 0; i < nranks; i++)
		printf("%s%" PRIu64, i ? "," : "", v[STRESS_RANK_FIXED + nranks + i]);
	printf("]}%s", last ? "" : ",");
}

/*
 * Gathers every rank's counts to rank 0, which prints the summary line.
 * Returns whether every check on every rank passed (on rank 0; elsewhere
 * whether this rank's did).
 */
static bool stress_report(struct stress *s, double secs)
{
	uint64_t errs[STRESS_NERRS], sum[STRESS_NERRS], ops[STRESS_OP_COUNT];
	size_t width = STRESS_RANK_FIXED + 2 * (size_t)s->nranks;
	uint64_t *mine = calloc(width, sizeof(uint64_t));
	uint64_t *all = calloc(width * (size_t)s->nranks, sizeof(uint64_t));
	uint64_t bytes = 0, bad = 0;
	size_t i;

	if (!mine || !all) {
		fprintf(stderr, "fi_stress: rank %d: out of memory for the summary\n", s->rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	mine[0] = (uint64_t)getpid();
	mine[1] = (uint64_t)(secs * 1e9);
	mine[2] = s->rx_got;
	mine[3] = s->refused;
	for (i = 0; i < (size_t)s->nranks; i++) {
		mine[STRESS_RANK_FIXED + i] = s->peer[i].ops;
		mine[STRESS_RANK_FIXED + s->nranks + i] = s->peer[i].bytes;
	}
	memcpy(errs, &s->err, sizeof(errs));
	MPI_Reduce(errs, sum, STRESS_NERRS, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(s->op_count, ops, STRESS_OP_COUNT, MPI_UINT64_T, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	MPI_Reduce(&s->bytes, &bytes, 1, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Gather(mine, (int)width, MPI_UINT64_T, all, (int)width, MPI_UINT64_T, 0,
		   MPI_COMM_WORLD);
	for (i = 0; i < STRESS_NERRS; i++)
		bad |= s->rank ? errs[i] : sum[i];
	if (!s->rank) {
		printf("{\"test\":\"fi_stress\",\"provider\":\"%s\",\"ep_type\":\"%s\","
		       "\"ranks\":%d,\"messages\":%" PRIu64 ",\"bytes\":%" PRIu64 ","
		       "\"seconds\":%.3f,\"chunks\":%d,\"inject_size\":%zu,\"ops\":{",
		       s->o.prov, s->o.ep_type == FI_EP_MSG ? "msg" : "rdm", s->nranks,
		       s->o.msgs, bytes, secs, s->o.chunks, s->info->tx_attr->inject_size);
		for (i = 0; i < STRESS_OP_COUNT; i++)
			printf("%s\"%s\":%" PRIu64, i ? "," : "", stress_op_names[i], ops[i]);
		printf("},\"errors\":{");
		for (i = 0; i < STRESS_NERRS; i++)
			printf("%s\"%s\":%" PRIu64, i ? "," : "", stress_err_names[i], sum[i]);
		printf("},\"per_rank\":[");
		for (i = 0; i < (size_t)s->nranks; i++)
			stress_print_rank(all + i * width, s->nranks, i + 1 == (size_t)s->nranks);
		printf("],\"ok\":%s}\n", bad ? "false" : "true");
		fflush(stdout);
	}
	free(mine);
	free(all);
	return !bad;
}

int main(int argc, char **argv)
{
	struct stress s = { 0 };
	double t0, secs;
	bool ok;
	int ret;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &s.nranks);
	if (stress_opts_parse(&s.o, argc, argv, !s.rank)) {
		if (!s.rank)
			stress_usage();
		MPI_Finalize();
		return 2;
	}
	if (s.nranks < 2 || s.nranks > STRESS_RANKS_MAX ||
	    (s.o.ep_type == FI_EP_MSG && s.nranks != 2)) {
		if (!s.rank)
			fprintf(stderr, "fi_stress: needs 2 to %d ranks (exactly 2 with -e msg)\n",
				STRESS_RANKS_MAX);
		MPI_Finalize();
		return 2;
	}
	s.buf_len = sizeof(struct stress_hdr) + s.o.max_size;
	ret = stress_plan(&s);
	if (!ret)
		ret = stress_setup(&s);
	if (!ret)
		ret = stress_barrier(&s, "start barrier");
	t0 = stress_now();
	if (!ret)
		ret = stress_run(&s);
	if (!ret)
		ret = stress_rma_run(&s);
	if (!ret)
		ret = stress_barrier(&s, "end barrier");
	secs = stress_now() - t0;
	if (ret) {
		fprintf(stderr, "fi_stress: rank %d failed: %s\n", s.rank, fi_strerror(-ret));
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	stress_final_check(&s);
	stress_rma_check(&s);
	ok = stress_report(&s, secs);
	/*
	 * A rank leaving the end barrier first must not close its endpoint
	 * while a peer still polls its CQ there: closing an MSG connection
	 * cancels the peer's posted receives (FI_ECANCELED completions).
	 */
	MPI_Barrier(MPI_COMM_WORLD);
	stress_close(&s);
	MPI_Finalize();
	return ok ? 0 : 1;
}
