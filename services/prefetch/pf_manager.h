/*
 * pf_manager.h: the advice manager (loggp-prefetch-manager) and the
 * interposer's connection to it (README.md, "Advice manager").
 *
 * One SOCK_SEQPACKET Unix socket per process; every message is one
 * struct pf_msg.  OPEN carries the file's descriptor (SCM_RIGHTS), its
 * entry's geometry and hints and its path, and is answered by a struct
 * pf_reply (status 0, or -errno with a one-line message), after which the
 * manager's advisor for it has the id the client chose.  READ, DETACH,
 * SEQUENTIAL (the application's advice) and CLOSE are not answered; READ is sent without waiting and is dropped when
 * the socket is full.
 *
 * No call waits longer than PF_MANAGER_TIMEOUT_MS: a manager that does not
 * answer an OPEN, leaves no room for a DETACH or CLOSE within it, or is
 * gone (its socket reset), is given up for good (the socket is shut down,
 * so a manager that resumes drops this process's advisors), and the call
 * that found it so gets the one-line reason.
 */
#ifndef PF_MANAGER_H
#define PF_MANAGER_H

#include <stddef.h>
#include <stdint.h>

#include "pf_config.h"

#define PF_MAX_HINTS 32		/* hint ranges an OPEN carries */
#define PF_MANAGER_TIMEOUT_MS 1000	/* the longest any call waits for the manager */

enum pf_op { PF_OP_OPEN = 1, PF_OP_READ, PF_OP_DETACH, PF_OP_CLOSE, PF_OP_SEQUENTIAL };

struct pf_msg {
	uint32_t op;
	uint32_t nhints;
	uint64_t id;
	uint64_t off, len;		/* READ */
	uint64_t block_size;		/* OPEN: the entry */
	uint32_t cache_size, readahead;
	uint32_t adaptive, pad;
	struct pf_hint hints[PF_MAX_HINTS];
	char path[4096];
};

struct pf_reply {
	int32_t status;
	char msg[508];
};

struct pf_mclient;

/* 0 and *out, or -errno with a one-line message naming the socket. */
int pf_mclient_connect(const char *path, struct pf_mclient **out, char *err, size_t errlen);
/* Hands fd to the manager; 0 and a new *id, or -errno with a message
 * (one naming the manager's fault only the first time it is given up). */
int pf_mclient_open(struct pf_mclient *m, const struct pf_entry *e, int fd, const char *path,
		    uint64_t *id, char *err, size_t errlen);
/* 0 sent (or the manager is given up already), 1 dropped (READ, socket
 * full), -1 the manager given up now, with the reason in err. */
int pf_mclient_request(struct pf_mclient *m, uint64_t id, uint64_t off, uint64_t len,
		       char *err, size_t errlen);
int pf_mclient_detach(struct pf_mclient *m, uint64_t id, char *err, size_t errlen);
int pf_mclient_sequential(struct pf_mclient *m, uint64_t id, char *err, size_t errlen);
int pf_mclient_close(struct pf_mclient *m, uint64_t id, char *err, size_t errlen);

#endif
