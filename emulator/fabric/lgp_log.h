/* SPDX-License-Identifier: MIT */
/*
 * Logging through libfabric's log (FI_LOG_LEVEL), under the provider's
 * name.  lgp_prov is defined in lgp_prov.c; every file may log.
 */
#ifndef LGP_LOG_H
#define LGP_LOG_H

#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

extern struct fi_provider lgp_prov;

#define LGP_WARN(subsys, ...) FI_WARN(&lgp_prov, subsys, __VA_ARGS__)
#define LGP_INFO(subsys, ...) FI_INFO(&lgp_prov, subsys, __VA_ARGS__)

#endif /* LGP_LOG_H */
