/* SPDX-License-Identifier: MIT */
/*
 * The end of the process's use of the shim (lgp_teardown.c): what every
 * open domain still holds is posted (bounded), the counters of every
 * fabric are written, the progress thread stops, and the payload buffers
 * kept for reuse are freed.
 */
#ifndef LGP_TEARDOWN_H
#define LGP_TEARDOWN_H

/*
 * Runs when libfabric unloads the provider (its cleanup) and at exit for
 * fabrics never closed; a second run finds nothing left to do.
 */
void lgp_teardown(void);

#endif /* LGP_TEARDOWN_H */
