// txn.cpp - transactions, fence batch merging and the batch wire format
// (see txn.hpp).
#include "txn.hpp"

#include "error.hpp"
#include "key.hpp"

#include <algorithm>
#include <cerrno>

namespace kvs {

Txn::Txn(size_t max_value) : max_value_(max_value) {}

void Txn::put(std::string_view key, std::string value)
{
	key_split(key);
	if (value.size() > max_value_)
		throw Error(EFBIG, "value for key " + key_quote(key) + " is " +
					   std::to_string(value.size()) + " bytes (the limit is " +
					   std::to_string(max_value_) + " bytes)");
	ops_.push_back(Op{std::string(key), std::move(value), false});
}

void Txn::unlink(std::string_view key)
{
	key_split(key);
	ops_.push_back(Op{std::string(key), {}, true});
}

namespace {

void batch_check(const FenceBatch& into, const FenceBatch& from)
{
	if (into.name != from.name)
		throw Error(EINVAL, "cannot merge fence " + key_quote(from.name) + " into fence " +
					    key_quote(into.name) + " (only batches of one fence merge)");
	if (into.nprocs != from.nprocs)
		throw Error(EINVAL, "fence " + key_quote(into.name) + ": nprocs " +
					    std::to_string(from.nprocs) + " does not match " +
					    std::to_string(into.nprocs) +
					    " (every participant must give the same nprocs)");
	if (uint64_t{into.count} + from.count > into.nprocs)
		throw Error(EINVAL, "fence " + key_quote(into.name) + ": " +
					    std::to_string(uint64_t{into.count} + from.count) +
					    " participants merged, more than nprocs " +
					    std::to_string(into.nprocs));
}

} // namespace

BatchMerger::BatchMerger(FenceBatch first) : batch_(std::move(first))
{
	for (size_t i = 0; i < batch_.ops.size(); i++)
		index_add(i);
}

void BatchMerger::index_add(size_t i)
{
	std::string_view key = batch_.ops[i].key;
	for (size_t dot = 0;; dot++) {
		dot = key.find('.', dot);
		std::string_view path = key.substr(0, dot);
		auto it = last_.find(path);
		if (it == last_.end())
			it = last_.emplace(std::string(path), Last{}).first;
		it->second.subtree = i + 1;
		if (dot == std::string_view::npos) {
			it->second.exact = i + 1;
			break;
		}
	}
}

// The last op touching op.key is the latest of: the last op on op.key or
// below it, and the last op on exactly each directory above it. If that op is
// identical, applying this one again changes nothing.
bool BatchMerger::redundant(const Op& op) const
{
	std::string_view key = op.key;
	size_t last = 0;
	if (auto it = last_.find(key); it != last_.end())
		last = it->second.subtree;
	for (size_t dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.', dot + 1)) {
		if (auto it = last_.find(key.substr(0, dot)); it != last_.end())
			last = std::max(last, it->second.exact);
	}
	return last != 0 && batch_.ops[last - 1] == op;
}

void BatchMerger::merge(FenceBatch&& from)
{
	batch_check(batch_, from);
	batch_.ops.reserve(batch_.ops.size() + from.ops.size());
	for (auto& op : from.ops) {
		if (redundant(op))
			continue;
		batch_.ops.push_back(std::move(op));
		index_add(batch_.ops.size() - 1);
	}
	batch_.count += from.count;
	batch_.ops_in += from.ops_in;
	from.ops.clear();
}

FenceBatch BatchMerger::take() &&
{
	last_.clear();
	return std::move(batch_);
}

void batch_merge(FenceBatch& into, FenceBatch&& from)
{
	batch_check(into, from);
	BatchMerger m(std::move(into));
	m.merge(std::move(from));
	into = std::move(m).take();
}

namespace {

constexpr std::string_view batch_magic = "KVB1";
constexpr uint8_t op_flag_unlink = 1;

void put_le(std::string& out, uint64_t v, int nbytes)
{
	for (int i = 0; i < nbytes; i++)
		out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void put_field(std::string& out, std::string_view s)
{
	put_le(out, s.size(), 4);
	out += s;
}

// Reads the wire form, bounds-checking every field.
class Reader {
public:
	explicit Reader(std::string_view b) : b_(b) {}

	uint64_t le(int nbytes, const char* what)
	{
		need(static_cast<size_t>(nbytes), what);
		uint64_t v = 0;
		for (int i = 0; i < nbytes; i++)
			v |= uint64_t{static_cast<unsigned char>(b_[pos_ + i])} << (8 * i);
		pos_ += static_cast<size_t>(nbytes);
		return v;
	}

	std::string_view bytes(size_t n, const char* what)
	{
		need(n, what);
		std::string_view s = b_.substr(pos_, n);
		pos_ += n;
		return s;
	}

	std::string_view field(const char* what)
	{
		size_t n = le(4, what);
		return bytes(n, what);
	}

	size_t left() const { return b_.size() - pos_; }

	[[noreturn]] void fail(const std::string& why) const
	{
		throw Error(EPROTO, "corrupt fence batch (" + std::to_string(b_.size()) +
					    " bytes): " + why);
	}

private:
	void need(size_t n, const char* what) const
	{
		if (n > left())
			fail(std::string("truncated in ") + what + " at byte " +
			     std::to_string(pos_) + " (needs " + std::to_string(n) + ", has " +
			     std::to_string(left()) + ")");
	}

	std::string_view b_;
	size_t pos_ = 0;
};

} // namespace

std::string batch_encode(const FenceBatch& b)
{
	size_t size = batch_magic.size() + 4 + b.name.size() + 4 + 4 + 8 + 4;
	for (const auto& op : b.ops)
		size += 1 + 4 + op.key.size() + 4 + op.value.size();

	std::string out;
	out.reserve(size);
	out += batch_magic;
	put_field(out, b.name);
	put_le(out, b.nprocs, 4);
	put_le(out, b.count, 4);
	put_le(out, b.ops_in, 8);
	put_le(out, b.ops.size(), 4);
	for (const auto& op : b.ops) {
		out.push_back(static_cast<char>(op.unlink ? op_flag_unlink : 0));
		put_field(out, op.key);
		put_field(out, op.value);
	}
	return out;
}

FenceBatch batch_decode(std::string_view bytes)
{
	Reader r(bytes);
	FenceBatch b;

	if (r.bytes(batch_magic.size(), "magic") != batch_magic)
		r.fail("bad magic (expected \"KVB1\")");
	b.name = r.field("fence name");
	b.nprocs = static_cast<uint32_t>(r.le(4, "nprocs"));
	b.count = static_cast<uint32_t>(r.le(4, "count"));
	if (b.count > b.nprocs)
		r.fail("count " + std::to_string(b.count) + " exceeds nprocs " +
		       std::to_string(b.nprocs));
	b.ops_in = r.le(8, "ops_in");
	size_t nops = r.le(4, "op count");
	constexpr size_t min_op = 1 + 4 + 4;
	if (nops > r.left() / min_op)
		r.fail(std::to_string(nops) + " ops cannot fit in the remaining " +
		       std::to_string(r.left()) + " bytes");
	b.ops.reserve(nops);
	for (size_t i = 0; i < nops; i++) {
		auto flags = static_cast<uint8_t>(r.le(1, "op flags"));
		if (flags & ~op_flag_unlink)
			r.fail("op " + std::to_string(i) + " has unknown flags " +
			       std::to_string(flags) + " (accepted: 0 put, 1 unlink)");
		Op op;
		op.unlink = flags & op_flag_unlink;
		op.key = r.field("op key");
		op.value = r.field("op value");
		if (op.unlink && !op.value.empty())
			r.fail("op " + std::to_string(i) + " is an unlink with a value");
		try {
			key_split(op.key);
		} catch (const Error& e) {
			r.fail("op " + std::to_string(i) + ": " + e.what());
		}
		b.ops.push_back(std::move(op));
	}
	if (r.left())
		r.fail(std::to_string(r.left()) + " trailing bytes after the last op");
	return b;
}

} // namespace kvs
