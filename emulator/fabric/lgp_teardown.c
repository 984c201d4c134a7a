/* SPDX-License-Identifier: MIT */
/*
 * The end of the process's use of the shim (lgp_teardown.h), apart from
 * the configuration (lgp_prov.c) that everything else depends on.
 */
#include "lgp_fabric.h"
#include "lgp_progress.h"
#include "lgp_req.h"
#include "lgp_teardown.h"

void lgp_teardown(void)
{
	lgp_progress_flush_all();
	lgp_fabric_stats_write_all();
	lgp_progress_fini();
	lgp_payload_release_kept();
}

/* Stats of fabrics the application never closed still reach the runner. */
static void __attribute__((destructor)) lgp_teardown_at_exit(void)
{
	lgp_teardown();
}
