/* SPDX-License-Identifier: MIT */
/*
 * loggp-calibrate: measures the LogGP parameters of the libfabric stack
 * beneath it (a bare provider, or the same provider under the loggp shim).
 *
 *   loggp-calibrate [opts]              server
 *   loggp-calibrate [opts] <server>     client (drives the run, prints)
 *   mpirun -n 2 loggp-calibrate [opts]  rank 0 server, rank 1 client
 *
 * Method (Netgauge's PRTT, Hoefler et al., "LogGP in theory and practice"):
 * PRTT(n, 0, s) is the time at the client from posting the first of n
 * back-to-back messages of s bytes until the server's 0-byte reply to the
 * last one has been read from the CQ.  Receives are pre-posted two bursts
 * deep, so the server re-arms after replying, off the measured path.
 *
 *   o_s       duration of the fi_send call that accepts a message of the
 *             smallest size (client, per PRTT(1,0,s_min) sample)
 *   o_r       duration of the fi_cq_read call that returns that message's
 *             receive completion (server, same samples)
 *   half_rtt  PRTT(1,0,s_min) / 2
 *   L         PRTT(1,0,s_min) / 2 - median(o_s) - median(o_r), per sample
 *             (LogGP: RTT = 2 (o_s + L + o_r))
 *   gap(s)    (PRTT(n,0,s) - median PRTT(1,0,s)) / (n - 1), per sample
 *   g         gap(s_min)
 *   G         least-squares slope of median gap(s) over the sizes, in
 *             ns per byte, with R^2
 * Every sampled quantity is reported as median and 99th percentile over
 * -n samples after -w warm-up samples, following a 0.5 s ping-pong that
 * lets the scheduler spread the two processes over the cores.  Waiting
 * busy-polls the CQs, as MPI does when it has a core per rank; -Y N
 * yields the CPU every N empty polls instead, for oversubscribed hosts
 * (yielding ranks let the scheduler shuffle them, which on 2 cores adds
 * tens of microseconds to a round trip under the shim).  Delays
 * between posts (Netgauge's d) are not used: o is timed directly around
 * the calls.
 *
 * The control (-S, -R): the bare stack with the application spinning
 * where the shim would delay, before each ping-pong send (in o_s) and
 * after each ping-pong receive (in o_r), on both sides.  A host may charge
 * a process that waited for tens of microseconds more for its next system
 * calls (a cold kernel path), so a round trip with a 100 us pause on each
 * side can grow by more than 200 us with no shim at all; the shim's own
 * error is what its round trip adds beyond this control's.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_bench.h"
#include "calib_clock.h"
#include "calib_err.h"
#include "calib_fabric.h"
#include "calib_oob.h"
#include "calib_opts.h"
#include "calib_report.h"

#ifdef CALIB_HAVE_LGP_CORE
#include <lgp/env.h>
#include <lgp/knob.h>

extern char **environ;
#endif

#define CALIB_DEFAULT_PORT 47600
#define CALIB_MAX_MSG (64UL << 20)

/* What the client tells the server before both open the fabric. */
struct calib_setup {
	uint64_t max_size;
	uint32_t burst;
	uint32_t pad;
};

static void calib_usage(FILE *out)
{
	fprintf(out,
		"usage: %s [options] [server-host]\n"
		"  without server-host: act as server; with it: client\n"
		"  under mpirun (2 ranks): rank 0 server, rank 1 client\n"
		"  -p PROV    libfabric provider (shm, \"tcp;ofi_rxm\", \"udp;ofi_rxd\")\n"
		"  -e TYPE    endpoint type: rdm (default; the only one implemented)\n"
		"  -n N       samples per point (default 1000)\n"
		"  -w N       warm-up samples per point (default n/10, at least 10)\n"
		"  -b N       messages per burst for g and G (default 16, 2..%d)\n"
		"  -s LIST    message sizes, ascending, K/M suffixes\n"
		"             (default 1,64,1K,4K,16K,64K)\n"
		"  -j FILE    write the results as JSON\n"
		"  -q         quiet: no table\n"
		"  -P PORT    control port (default %d)\n"
		"  -B ADDR    server: control listen address (default any)\n"
		"  -H HOST    client under mpirun: server host (default 127.0.0.1)\n"
		"  -T SEC     timeout of every wait (default 30)\n"
		"  -Y N       yield the CPU after N empty CQ polls (default 0: never)\n"
		"  -S NS      control: spin NS ns before each ping-pong send (in o_s)\n"
		"  -R NS      control: spin NS ns after each ping-pong receive (in o_r)\n",
		CALIB_NAME, CALIB_MAX_BURST, CALIB_DEFAULT_PORT);
}

static int calib_parse_uint(const char *opt, const char *s, unsigned long min,
			    unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	*out = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || *out < min || *out > max) {
		calib_err("bad value '%s' for -%s: expected an integer in %lu..%lu",
			  s, opt, min, max);
		return -EINVAL;
	}
	return 0;
}

static int calib_parse_sizes(struct calib_opts *o, const char *list)
{
	unsigned long v;
	const char *p = list;
	char *end;

	o->nsizes = 0;
	while (*p) {
		errno = 0;
		v = strtoul(p, &end, 10);
		if (end == p || errno || *p == '-')
			goto err;
		if (*end == 'K' || *end == 'k')
			v <<= 10, end++;
		else if (*end == 'M' || *end == 'm')
			v <<= 20, end++;
		if ((*end && *end != ',') || v > CALIB_MAX_MSG ||
		    o->nsizes == CALIB_MAX_SIZES ||
		    (o->nsizes && v <= o->sizes[o->nsizes - 1]))
			goto err;
		o->sizes[o->nsizes++] = v;
		p = *end ? end + 1 : end;
	}
	if (o->nsizes)
		return 0;
err:
	calib_err("bad size list '%s': expected up to %d ascending sizes like 1,64,1K,4K (max 64M)",
		  list, CALIB_MAX_SIZES);
	return -EINVAL;
}

static int calib_parse(struct calib_opts *o, int argc, char **argv)
{
	const char *rank = getenv("OMPI_COMM_WORLD_RANK");
	const char *nprocs = getenv("OMPI_COMM_WORLD_SIZE");
	const char *mpi_host = NULL;
	unsigned long v;
	int c, warmup = -1, ret = 0;

	*o = (struct calib_opts){ .ep_type = "rdm", .port = CALIB_DEFAULT_PORT,
				  .iterations = 1000, .burst = 16,
				  .timeout_s = 30, .spin_polls = 0 };
	calib_parse_sizes(o, "1,64,1K,4K,16K,64K");
	while (!ret && (c = getopt(argc, argv, "p:e:n:w:b:s:j:qP:B:H:T:Y:S:R:h")) != -1) {
		switch (c) {
		case 'p': o->provider = optarg; break;
		case 'e': o->ep_type = optarg; break;
		case 'n':
			ret = calib_parse_uint("n", optarg, 1, 10000000, &v);
			o->iterations = (unsigned)v;
			break;
		case 'w':
			ret = calib_parse_uint("w", optarg, 0, 10000000, &v);
			warmup = (int)v;
			break;
		case 'b':
			ret = calib_parse_uint("b", optarg, 2, CALIB_MAX_BURST, &v);
			o->burst = (unsigned)v;
			break;
		case 's': ret = calib_parse_sizes(o, optarg); break;
		case 'j': o->json_path = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'P':
			ret = calib_parse_uint("P", optarg, 1, 65535, &v);
			o->port = (uint16_t)v;
			break;
		case 'B': o->bind_addr = optarg; break;
		case 'H': mpi_host = optarg; break;
		case 'T':
			ret = calib_parse_uint("T", optarg, 1, 86400, &v);
			o->timeout_s = (unsigned)v;
			break;
		case 'Y':
			ret = calib_parse_uint("Y", optarg, 0, 1000000000, &v);
			o->spin_polls = (unsigned)v;
			break;
		case 'S':
			ret = calib_parse_uint("S", optarg, 0, CALIB_MAX_SPIN_NS, &v);
			o->spin_send_ns = v;
			break;
		case 'R':
			ret = calib_parse_uint("R", optarg, 0, CALIB_MAX_SPIN_NS, &v);
			o->spin_recv_ns = v;
			break;
		case 'h': calib_usage(stdout); exit(0);
		default: calib_usage(stderr); return -EINVAL;
		}
	}
	if (ret)
		return ret;
	if (optind + 1 < argc) {
		calib_err("unexpected argument '%s' (one server host at most)",
			  argv[optind + 1]);
		return -EINVAL;
	}
	if (strcmp(o->ep_type, "rdm")) {
		calib_err("endpoint type '%s' is not supported: use -e rdm (for tcp use -p \"tcp;ofi_rxm\")",
			  o->ep_type);
		return -EINVAL;
	}
	o->server_host = optind < argc ? argv[optind] : mpi_host;
	o->warmup = warmup >= 0 ? (unsigned)warmup :
		    (o->iterations / 10 > 10 ? o->iterations / 10 : 10);
	if (!rank)
		return 0;
	/* Under mpirun the rank decides the role, and ranks share a host by default. */
	if (!nprocs || strcmp(nprocs, "2")) {
		calib_err("under mpirun run exactly 2 ranks (got %s)",
			  nprocs ? nprocs : "?");
		return -EINVAL;
	}
	if (!strcmp(rank, "0"))
		o->server_host = NULL;
	else if (!o->server_host)
		o->server_host = "127.0.0.1";
	return 0;
}

/* Exchanges one blob each way; the server sends first. */
static int calib_swap(struct calib_oob *oob, int server, const void *mine,
		      size_t len, void *theirs, size_t max, size_t *got)
{
	int ret;

	if (server) {
		ret = calib_oob_send_blob(oob, mine, len);
		return ret ? ret : calib_oob_recv_blob(oob, theirs, max, got);
	}
	ret = calib_oob_recv_blob(oob, theirs, max, got);
	return ret ? ret : calib_oob_send_blob(oob, mine, len);
}

static int calib_connect_fabric(struct calib_fabric *f, struct calib_oob *oob,
				const struct calib_opts *opts, int server)
{
	struct calib_setup setup = { .max_size = opts->sizes[opts->nsizes - 1],
				     .burst = opts->burst };
	char name[CALIB_NAME_MAX], peer[CALIB_NAME_MAX], prov[128];
	const char *mine;
	size_t len = sizeof(name), got;
	int ret;

	ret = server ? calib_oob_recv(oob, &setup, sizeof(setup)) :
		       calib_oob_send(oob, &setup, sizeof(setup));
	if (ret)
		return ret;
	if (setup.burst < 2 || setup.burst > CALIB_MAX_BURST ||
	    setup.max_size > CALIB_MAX_MSG) {
		calib_err("client sent an invalid setup (burst %u, size %llu)",
			  setup.burst, (unsigned long long)setup.max_size);
		return -EPROTO;
	}
	ret = calib_fabric_open(f, opts, setup.max_size,
				calib_bench_nrecv(setup.burst));
	if (ret)
		return ret;

	mine = calib_fabric_provider(f);
	ret = calib_swap(oob, server, mine, strlen(mine) + 1, prov,
			 sizeof(prov), &got);
	if (ret)
		return ret;
	if (!got || prov[got - 1] || strcmp(prov, mine)) {
		calib_err("peer uses provider '%.*s', this side '%s': pass the same -p to both",
			  (int)got, prov, mine);
		return -EPROTO;
	}
	ret = calib_fabric_getname(f, name, &len);
	if (!ret)
		ret = calib_swap(oob, server, name, len, peer, sizeof(peer), &got);
	if (!ret)
		ret = calib_fabric_set_peer(f, peer);
	return ret ? ret : calib_oob_barrier(oob);
}

int main(int argc, char **argv)
{
	struct calib_fabric fab = { 0 };
	struct calib_results res = { 0 };
	struct calib_oob oob = { .fd = -1 };
	struct calib_opts opts;
	int server, ret;

	ret = calib_parse(&opts, argc, argv);
	if (ret)
		return 2;
	server = !opts.server_host;
#ifdef CALIB_HAVE_LGP_CORE
	{
		char err[LGP_KNOB_ERRLEN];

		/* A LOGGP_* typo is refused here as the shim refuses it. */
		if (lgp_env_check(environ, err, sizeof(err))) {
			calib_err("%s", err);
			return 2;
		}
	}
	if (lgp_clock_init()) {
		calib_err("bad LOGGP_CLOCK value: expected tsc or monotonic");
		return 2;
	}
#endif
	ret = server ? calib_oob_serve(&oob, opts.bind_addr, opts.port,
				       opts.timeout_s) :
		       calib_oob_connect(&oob, opts.server_host, opts.port,
					 opts.timeout_s);
	if (ret)
		goto out;
	ret = calib_connect_fabric(&fab, &oob, &opts, server);
	if (ret)
		goto out;
	if (server) {
		ret = calib_bench_server(&fab, &oob);
		goto out;
	}
	ret = calib_bench_client(&fab, &oob, &opts, &res);
	if (ret)
		goto out;
	if (!opts.quiet)
		calib_report_table(stdout, &opts, calib_fabric_provider(&fab),
				   &res);
	if (opts.json_path)
		ret = calib_report_json(opts.json_path, &opts,
					calib_fabric_provider(&fab), &res);
out:
	calib_fabric_close(&fab);
	calib_oob_close(&oob);
	return ret ? 1 : 0;
}
