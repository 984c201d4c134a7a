/* SPDX-License-Identifier: MIT */
/*
 * The progress thread (lgp_progress.c): posts deferred operations when
 * their time comes while the application is busy elsewhere.  One thread
 * per process serves every active domain.
 */
#ifndef LGP_PROGRESS_H
#define LGP_PROGRESS_H

#include <stdint.h>

struct lgp_domain;

/* Starts serving an active domain (and the thread, on first use). */
int lgp_progress_add(struct lgp_domain *dom);
void lgp_progress_del(struct lgp_domain *dom);
/*
 * Posts what every open domain still holds, waiting (up to a bound) for
 * release times and completions: a process that exits right after sending
 * still delivers what it sent, as a host whose NIC drains its queue.
 */
void lgp_progress_flush_all(void);
/* Stops the thread; libfabric is about to unload the provider. */
void lgp_progress_fini(void);
/*
 * A send deferred at now (the caller's clock reading, so the send path reads
 * the clock once) is due at release: keeps the thread ticking while the
 * process sends, and wakes it if release comes before it would look.
 */
void lgp_progress_kick(uint64_t release, uint64_t now);

#endif /* LGP_PROGRESS_H */
