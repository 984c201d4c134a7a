/* SPDX-License-Identifier: MIT */
/*
 * Utility providers above a hooked core provider (lgp_util.c).
 *
 * The shim delays each message once, at the core provider nearest the wire
 * (lgp_fabric.h) -- except o_r.  LogGP's receive overhead is the receiver's
 * time in the call that hands it the message, but beneath a utility
 * provider (ofi_rxm, ofi_rxd) the core's receive completion is read inside
 * the utility's progress, which also runs in calls that return nothing to
 * the application (a send, a CQ read before the message is matched).  So
 * while o_r is set, a utility's fabric, domains and CQs get thin ops
 * overrides: the utility CQ read that hands receive completions to the
 * application spins o_r for each, and the core domain the utility domain
 * opens beneath it charges none.
 *
 * o_s likewise belongs to the application's send call, once per message,
 * but the shim spun it in every send-type call into the core.  A utility
 * makes such calls of its own: ofi_rxm's rendezvous read and its
 * acknowledgement, ofi_rxd's acknowledgements and every data packet it
 * sends from its progress.  Each cost Δo_s on the wire path of the
 * application's message: a 64 KiB message over tcp;ofi_rxm carried three
 * Δo_s per half round trip and L grew by two of them.  So while o_s is set
 * a utility's endpoints get thin overrides too (lgp_util_ep.c): each
 * send-type op spins o_s once, and the core domain beneath charges none.
 * With o_s and o_r at zero the utility is not touched at all.
 */
#ifndef LGP_UTIL_H
#define LGP_UTIL_H

#include <stdbool.h>

#include <stddef.h>

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

struct lgp_domain;

/* Called for every utility fabric the application opens; 0 or -FI_ENOMEM. */
int lgp_util_hook(struct fid_fabric *fabric);

/*
 * Called by every core domain as it opens: true if a utility domain is
 * opening it on this thread, which then charges o_r in its place.
 */
bool lgp_util_claim(struct lgp_domain *core);

/* Copies a provider's ops table, no more than it declares (ours: sizeof). */
void lgp_util_copy(void *dst, const void *src, size_t ours);

/*
 * Points a utility endpoint's send-type ops at wrappers that spin the core
 * domain's o_s (lgp_util_ep.c); nothing while o_s is zero.  0 or
 * -FI_ENOMEM.
 */
int lgp_util_ep_wrap(struct lgp_domain *core, struct fid_ep *ep);

#endif /* LGP_UTIL_H */
