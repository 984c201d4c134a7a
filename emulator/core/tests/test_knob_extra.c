/* SPDX-License-Identifier: MIT */
/*
 * The core built with one more registry row (extra_knob.def): the new knob
 * is named, parsed, read from the environment, stored in its own param and
 * known to the environment check without a line of code for it.
 */
#include <errno.h>
#include <stdlib.h>

#include "check.h"
#include "lgp/env.h"
#include "lgp/knob.h"

int main(void)
{
	char *envp[] = { "LOGGP_RECV_GAP=5us", NULL };
	char err[LGP_KNOB_ERRLEN], buf[256];
	struct lgp_params p;
	uint64_t v;

	CHECK_EQ_INT(LGP_KNOB_RECV_GAP, LGP_KNOB_COUNT - 1);
	CHECK_EQ_INT(lgp_knob_lookup("recv_gap"), LGP_KNOB_RECV_GAP);
	CHECK_STR(lgp_knob_env(LGP_KNOB_RECV_GAP), "LOGGP_RECV_GAP");
	CHECK_STR(lgp_knob_forms(LGP_KNOB_RECV_GAP),
		  lgp_knob_forms(LGP_KNOB_GAP));
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_RECV_GAP, "2.5us", &v, err,
				    sizeof(err)), 0);
	CHECK_EQ_U64(v, 2500);
	CHECK_EQ_INT(lgp_knob_parse(LGP_KNOB_RECV_GAP, "5", &v, err,
				    sizeof(err)), -EINVAL);
	CHECK(strstr(err, "for LOGGP_RECV_GAP: expected <number>{ns|") != NULL);

	setenv("LOGGP_RECV_GAP", "5us", 1);
	setenv("LOGGP_GAP", "1us", 1);
	CHECK_EQ_INT(lgp_params_from_env(&p, err, sizeof(err)), 0);
	CHECK_EQ_U64(p.recv_gap_ns, 5000);
	CHECK_EQ_U64(p.gap_ns, 1000);
	lgp_params_format(&p, buf, sizeof(buf));
	CHECK_STR(buf, "send_overhead=0ns recv_overhead=0ns gap=1000ns "
		  "latency=0ns bulk_gap=0fs/B recv_gap=5000ns");
	memset(&p, 0, sizeof(p));
	lgp_params_set(&p, LGP_KNOB_RECV_GAP, 1);
	CHECK(lgp_params_active(&p));

	CHECK_EQ_INT(lgp_env_check(envp, err, sizeof(err)), 0);
	CHECK_STR(lgp_env_closest("LOGGP_RECV_GAPP"), "LOGGP_RECV_GAP");
	return check_done("test_knob_extra");
}
