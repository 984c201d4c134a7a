/*
 * fabric.hpp: a service's libfabric RDM endpoint (tagged messages), shared by
 * the KVS brokers and the PFS servers and clients.
 *
 * Every service message travels as libfabric tagged sends, so FI_HOOK=loggp
 * delays them like any other traffic of the fabric beneath.  Every send is at
 * most kCtrlMax bytes, one of the receives posted in advance: a longer
 * message goes as pieces that carry their offset and are reassembled by the
 * receiver.  kCtrlMax is ofi_rxm's eager limit, so no send takes its
 * rendezvous path, whose steps each wait for the peer's progress
 * (services/common/README.md, "The transport").  Messages between a pair of
 * peers may be delivered out of order (the protocols tolerate it).
 *
 * Bulk data moves by RMA instead, as Lustre's and Mercury's bulk transfers
 * do: one side exposes a buffer (expose(): a key and an address, handed to
 * the peer in a message), the other reads or writes it in one operation
 * (read_from(), write_to()), whose completion comes through the same CQ
 * and wait object as the messages.  The shim delays it as one message.
 *
 * Peers are numbered by this endpoint: set_peers() numbers a fixed group in
 * rank order (the KVS), add_peer() adds one at a time (a PFS server learns
 * its clients' addresses from their first message).  Each endpoint has a
 * self id that its pieces carry, so receivers keep the pieces of different
 * senders apart: it must be unique among the senders a receiver hears
 * (a rank, or an id a server handed out).
 *
 * Waiting: a thread with nothing to do calls wait().  For kSpin after the
 * loop's last turn with work (spin.hpp) it only yields, so the loop keeps
 * looking; then it blocks on the CQ's own wait object (FI_WAIT_FD, after
 * fi_trywait) and an eventfd that wake() signals, so a message or local
 * work is looked at the moment it comes.  It never sleeps on a timer: a
 * timed sleep would delay whatever arrives meanwhile by an amount no knob
 * asked for, and the delay would change with the knobs.  A provider whose
 * CQ has no wait fd is polled with sched_yield() instead (uses_wait_fd()
 * says which).
 *
 * Threading: one thread (the broker's, the server's, the client's progress
 * thread) calls everything except wake(), which any thread may call;
 * progress() never blocks.
 * Errors: the constructor, set_peers() and add_peer() throw svc::Error
 * naming the libfabric call and fi_strerror(); send errors found at
 * completion are handed to the error callback with the peer's number.
 */
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include "spin.hpp"

namespace svc {

struct FabricStats {
	uint64_t msgs_sent = 0;		/* libfabric sends (announce + payload = 2) */
	uint64_t bytes_sent = 0;
	uint64_t msgs_recvd = 0;
	uint64_t bytes_recvd = 0;
	uint64_t send_errors = 0;
	uint64_t waits = 0;		/* wait() calls that blocked on the wait fd */
	uint64_t wait_ns = 0;		/* time blocked in them */
	uint64_t spins = 0;		/* wait() calls that yielded within kSpin */
	/* Blocks that ran to their deadline although a message was there to
	 * read when they ended: the wait fd missed it (a lost wake-up). */
	uint64_t missed_wakeups = 0;
	uint64_t rma_ops = 0;		/* RMA reads and writes handed to the provider */
	uint64_t rma_bytes = 0;
};

/* What a peer needs to reach a buffer exposed for RMA (Fabric::expose). */
struct Remote {
	uint64_t addr = 0;	/* as the provider's RMA calls take it */
	uint64_t key = 0;
};

class Fabric {
public:
	static constexpr size_t kCtrlMax = 16 * 1024;
	/* The longest an idle service loop blocks before it looks at its own
	 * deadlines (calls that timed out, pieces past their ttl); messages
	 * and wake() end the wait at once whatever this is. */
	static constexpr std::chrono::milliseconds kTimerCheck{50};

	/* Opens provider ("tcp;ofi_rxm", "shm", ...) with the given self id; a
	 * message whose pieces have not all come within ttl is dropped (and
	 * reported). */
	Fabric(const std::string &provider, uint32_t self, std::chrono::milliseconds ttl);
	~Fabric();
	Fabric(const Fabric &) = delete;
	Fabric &operator=(const Fabric &) = delete;

	/* This endpoint's address, to be exchanged out of band. */
	std::string address() const;
	/* Every rank's address, in rank order: peer i is rank i. */
	void set_peers(const std::vector<std::string> &addrs);
	/* One more peer; returns its number. */
	uint32_t add_peer(const std::string &addr);
	/* The id later pieces carry (e.g. one a server handed out). */
	void set_self(uint32_t self) { self_ = self; }
	/* Drops sends and RMA ops to peer not yet handed to the provider (a
	 * peer found dead; the RMA ops' done runs with EIO); returns how many. */
	size_t drop_queued(uint32_t peer);
	const std::string &provider() const { return provider_; }

	/* Queues bytes for peer; never blocks (progress() pushes the queue).
	 * Throws only for a bad peer or an oversized message; a send that
	 * fails later is reported to progress()'s error callback. */
	void send(uint32_t peer, std::string bytes);
	/*
	 * Reaps completions, hands each received message to on_msg, retries
	 * queued sends, and reports to on_err failed sends, with the peer's
	 * number, and dropped (malformed or incomplete) messages, with
	 * UINT32_MAX and a text that names the sender's self id where known.
	 * Returns the number of completions handled.
	 */
	using MsgFn = std::function<void(std::string &&)>;
	using ErrFn = std::function<void(uint32_t peer, const std::string &what)>;
	size_t progress(const MsgFn &on_msg, const ErrFn &on_err);
	/*
	 * Blocks until a completion may be waiting, wake() was called, or
	 * `until` passed, whichever is first; returns at once (after a
	 * sched_yield) within kSpin of the loop's last turn with work, while
	 * sends are queued for the provider, or when the provider has no wait
	 * fd.  Call it once per turn of the loop (one progress() call), and
	 * only on a turn that found nothing to do: a turn that skips it, or
	 * whose progress() handled a completion, counts as work and starts the
	 * next kSpin.  A wake-up without work is harmless.
	 */
	void wait(std::chrono::steady_clock::time_point until);
	/* Ends a wait() in progress, or the next one; any thread, any time. */
	void wake();
	/* Whether wait() blocks on the provider's wait fd (else it yields). */
	bool uses_wait_fd() const { return wait_fd_ >= 0; }
	/* Sends and RMA ops not yet completed (queued or in flight). */
	size_t sends_pending() const { return queued_count_ + sends_inflight_ + rma_inflight_; }

	/* Whether the provider moves data by RMA (FI_RMA); without it the
	 * calls below throw svc::Error(ENOTSUP). */
	bool has_rma() const { return has_rma_; }
	/*
	 * Registers len bytes at buf for peers' RMA, to be written into
	 * (writable) or read; returns an id for unexpose() and what a peer
	 * needs.  buf must stay valid until unexpose().  Throws svc::Error
	 * naming fi_mr_reg's failure.
	 */
	uint64_t expose(void *buf, size_t len, bool writable, Remote *remote);
	/* Withdraws it: a peer's RMA that comes later fails at the peer. */
	void unexpose(uint64_t id);
	/* Buffers exposed now. */
	size_t exposed() const { return exposed_.size(); }
	/*
	 * One RMA op on peer's exposed buffer at r: write_to() writes bytes
	 * there, read_from() reads len bytes.  Never blocks (queued like a
	 * send); done runs once, from progress(), with err 0 (and the bytes
	 * read) or an errno and a message naming the peer: the op failed, or
	 * did not complete within the ttl (ETIMEDOUT; its buffer is kept
	 * until the provider gives it back).  Completion of a write means
	 * the bytes reached the peer's buffer: a message sent after it
	 * arrives after them.
	 */
	using RmaFn = std::function<void(int err, const std::string &what, std::string &&data)>;
	void write_to(uint32_t peer, const Remote &r, std::string bytes, RmaFn done);
	void read_from(uint32_t peer, const Remote &r, size_t len, RmaFn done);
	/* RMA ops whose done has not run. */
	size_t rma_pending() const { return rma_pending_; }
	const FabricStats &stats() const { return stats_; }

private:
	struct Op;
	void post_recv(std::unique_ptr<Op> op);
	void queue_frame(uint32_t peer, std::string frame);
	void queue_op(std::unique_ptr<Op> op);
	void queue_rma(uint32_t peer, const Remote &r, std::string buf, bool write, RmaFn done);
	void finish_rma(Op &op, int err, const std::string &what);
	void expire_rma();
	void on_piece(const Op &op, size_t len, const MsgFn &on_msg);
	void expire_partial();
	int try_send(Op &op);
	void push_queue();
	void complete(Op *op, size_t len, const MsgFn &on_msg);
	void complete_error(const MsgFn &on_msg, const ErrFn &on_err);
	size_t reap(struct fi_cq_tagged_entry *e, ssize_t n, const MsgFn &on_msg);
	void close() noexcept;
	void open_cq();

	std::string provider_;
	uint32_t self_;
	struct fi_info *info_ = nullptr;
	struct fid_fabric *fabric_ = nullptr;
	struct fid_domain *domain_ = nullptr;
	struct fid_cq *cq_ = nullptr;
	struct fid_av *av_ = nullptr;
	struct fid_ep *ep_ = nullptr;
	int wait_fd_ = -1;	/* the CQ's FI_GETWAIT fd; -1: polled */
	int wake_fd_ = -1;	/* eventfd for wake() */
	std::vector<fi_addr_t> peers_;
	std::unordered_map<Op *, std::unique_ptr<Op>> inflight_;
	std::map<uint32_t, std::deque<std::unique_ptr<Op>>> queued_;	/* by peer */
	size_t queued_count_ = 0;
	std::deque<std::unique_ptr<Op>> recv_retry_;
	size_t sends_inflight_ = 0;
	bool has_rma_ = false;
	std::unordered_map<uint64_t, struct fid_mr *> exposed_;	/* by id */
	uint64_t expose_seq_ = 0;
	size_t rma_inflight_ = 0;	/* RMA ops handed to the provider */
	size_t rma_pending_ = 0;	/* RMA ops whose done has not run */
	/* RMA ops that ended outside progress()'s reaping (refused when
	 * posted), their done run at the end of the next progress(). */
	std::vector<std::unique_ptr<Op>> rma_ended_;
	struct Partial {
		std::string buf;
		std::vector<bool> seen;		/* pieces already copied */
		size_t got = 0;
		std::chrono::steady_clock::time_point first;
	};
	/* Messages in pieces, by sender's self id << 32 | message id. */
	std::unordered_map<uint64_t, Partial> partial_;
	uint32_t frag_seq_ = 0;
	std::chrono::milliseconds ttl_;
	std::vector<std::pair<uint32_t, std::string>> errors_;	/* for on_err */
	/* Turns (progress() calls) so far; whether the loop is in an idle run
	 * (wait() on every turn since it began, no completions), the turn of
	 * its last wait() and when it began. */
	uint64_t turns_ = 0;
	bool idle_run_ = false;
	bool timed_out_ = false;	/* the last block ended by its deadline */
	uint64_t idle_turn_ = 0;
	std::chrono::steady_clock::time_point idle_since_;
	FabricStats stats_;
};

} // namespace svc
