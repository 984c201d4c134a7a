/* SPDX-License-Identifier: MIT */
/*
 * Translation between the shim's wrappers and the real objects beneath
 * them (lgp_fid.c), and the fi_ops entries every wrapper shares.
 *
 * Every wrapper starts with the public libfabric object, so the pointer
 * the application holds is the wrapper; the wrapped ("real") object is
 * opened with the application's context, and events that name a real fid
 * are mapped back through a table (lgp_fid_from_real()).
 */
#ifndef LGP_FID_H
#define LGP_FID_H

#include <stddef.h>

#include <rdma/fabric.h>

#define lgp_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* The real object behind one of our wrappers; other fids are returned as is. */
struct fid *lgp_fid_real(struct fid *fid);
/* Our wrapper for a real fid we opened, or the fid itself. */
struct fid *lgp_fid_from_real(struct fid *hfid);
/* Records a wrapper for lgp_fid_from_real(); unregister before freeing. */
int lgp_fid_register(struct fid *wrapper, struct fid *real);
void lgp_fid_unregister(struct fid *real);

/*
 * fi_ops shared by every wrapper: control/ops_open/tostr/ops_set forward.
 * lgp_fid_ops_open (lgp_ops.c) refuses libfabric's private "ofix_" tables.
 */
int lgp_fid_control(struct fid *fid, int command, void *arg);
int lgp_fid_ops_open(struct fid *fid, const char *name, uint64_t flags,
		     void **ops, void *context);
int lgp_fid_tostr(const struct fid *fid, char *buf, size_t len);
int lgp_fid_ops_set(struct fid *fid, const char *name, uint64_t flags,
		    void *ops, void *context);
int lgp_fid_bind(struct fid *fid, struct fid *bfid, uint64_t flags);

/*
 * An fi_info the application hands back may name objects it opened through
 * the shim: handle (a passive endpoint whose listening socket a new
 * endpoint takes over, a domain), domain_attr->domain and
 * fabric_attr->fabric.  The provider reads them as its own structures, so
 * they must be the real objects.  Returns info itself when it names no
 * wrapper, else a shallow copy in *copy with the real objects, valid while
 * copy and info are.
 */
struct lgp_info_copy {
	struct fi_info info;
	struct fi_domain_attr domain_attr;
	struct fi_fabric_attr fabric_attr;
};
struct fi_info *lgp_info_real(struct fi_info *info, struct lgp_info_copy *copy);

#endif /* LGP_FID_H */
