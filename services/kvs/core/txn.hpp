// txn.hpp - operations, a client's transaction, and fence batches.
//
// An Op is one put (key = value) or unlink. A Txn buffers a client's ops in
// order (write-back: nothing leaves the client until its commit or fence).
// A FenceBatch carries the ops of some participants of one fence up the
// broker tree; brokers merge their children's batches before forwarding, and
// the root applies the fully merged batch (apply.hpp).
//
// Merging drops an op that would change nothing where it lands: an op is
// dropped when the last op already in the batch that touches its key (the
// key itself, a directory above it, or anything below it) is an identical op
// (same key, value, unlink flag). So N participants putting the same key and
// value cost one op at the root, while the merged batch still applies exactly
// as the concatenation of the inputs would: different values for a key are
// all kept in order (last writer wins), and a participant's own
// a=2, a=1 after another's a=1 keeps its a=1. The index is a hash map of key
// paths, so a merge costs O(ops x key depth), never O(n^2).
//
// Errors: Txn::put/unlink throw Error(EINVAL) for a bad key, Error(EFBIG) for
// a value over the limit; merging batches of different fences Error(EINVAL);
// batch_decode Error(EPROTO). Not thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace kvs {

struct Op {
	std::string key;
	std::string value;
	bool unlink = false;
	bool operator==(const Op&) const = default;
};

class Txn {
public:
	explicit Txn(size_t max_value = 64u << 20);
	void put(std::string_view key, std::string value);
	void unlink(std::string_view key);
	const std::vector<Op>& ops() const { return ops_; }
	bool empty() const { return ops_.empty(); }
	void clear() { ops_.clear(); }
	size_t max_value() const { return max_value_; }

private:
	size_t max_value_;
	std::vector<Op> ops_;
};

struct FenceBatch {
	std::string name;
	uint32_t nprocs = 0;
	uint32_t count = 0; // participants represented by this batch
	std::vector<Op> ops;
	uint64_t ops_in = 0; // ops contributed before merging (for statistics)
};

// Merges many batches of one fence into one, keeping its index between
// merges so a broker with k children pays O(total ops), not O(k x ops).
class BatchMerger {
public:
	// Takes `first` as the batch to merge into (its ops are kept as they are).
	explicit BatchMerger(FenceBatch first);
	// Appends from's ops under the merge rule; count and ops_in add up.
	// Error(EINVAL) if name or nprocs differ or count would exceed nprocs;
	// the batch is then unchanged.
	void merge(FenceBatch&& from);
	const FenceBatch& batch() const { return batch_; }
	FenceBatch take() &&;

private:
	struct PathHash {
		using is_transparent = void;
		size_t operator()(std::string_view s) const noexcept
		{
			return std::hash<std::string_view>{}(s);
		}
	};
	struct Last {
		size_t exact = 0;   // 1 + index of the last op on exactly this key, 0 = none
		size_t subtree = 0; // 1 + index of the last op on this key or below it
	};

	void index_add(size_t i);
	bool redundant(const Op& op) const;

	FenceBatch batch_;
	std::unordered_map<std::string, Last, PathHash, std::equal_to<>> last_;
};

// One merge of `from` into `into` (see BatchMerger; builds the index of
// `into` for this call). Error(EINVAL) as BatchMerger::merge, `into` unchanged.
void batch_merge(FenceBatch& into, FenceBatch&& from);

// Compact binary form for the wire, little-endian:
//   "KVB1" u32 name_len name u32 nprocs u32 count u64 ops_in u32 nops
//   nops x (u8 flags[bit0 = unlink] u32 key_len key u32 value_len value)
std::string batch_encode(const FenceBatch& b);
// Error(EPROTO) on truncation, trailing bytes, bad magic, unknown flags, an
// unlink with a value, a bad key, or count > nprocs.
FenceBatch batch_decode(std::string_view bytes);

} // namespace kvs
