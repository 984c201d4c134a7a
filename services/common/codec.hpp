/*
 * codec.hpp: the binary encoding of service messages.
 *
 * Integers are little-endian (the order of x86-64 and aarch64 Linux, so
 * they are copied as they are), strings a u32 length then the bytes.  A
 * Reader throws svc::Error(EPROTO) naming what is truncated or left over,
 * prefixed with the name of what is being decoded, so a corrupt frame never
 * reaches protocol code.
 */
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "error.hpp"

namespace svc {

class Writer {
public:
	void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
	void u32(uint32_t v) { raw(&v, sizeof v); }
	void u64(uint64_t v) { raw(&v, sizeof v); }
	void str(std::string_view s)
	{
		u32(static_cast<uint32_t>(s.size()));
		out_.append(s);
	}
	std::string take() { return std::move(out_); }

private:
	void raw(const void *p, size_t n) { out_.append(static_cast<const char *>(p), n); }
	std::string out_;
};

class Reader {
public:
	/* what names the message in errors ("broker message"). */
	Reader(std::string_view in, const char *what) : in_(in), what_(what) {}
	uint8_t u8() { return static_cast<uint8_t>(take(1)[0]); }
	uint32_t u32() { return num<uint32_t>(); }
	uint64_t u64() { return num<uint64_t>(); }
	std::string str() { return std::string(take(u32())); }
	/* A string without a copy: valid while the input is. */
	std::string_view view() { return take(u32()); }
	size_t left() const { return in_.size(); }
	void done() const
	{
		if (!in_.empty())
			throw Error(EPROTO, std::string(what_) + ": " +
						    std::to_string(in_.size()) + " trailing bytes");
	}

private:
	template <typename T> T num()
	{
		T v;
		std::memcpy(&v, take(sizeof v).data(), sizeof v);
		return v;
	}
	std::string_view take(size_t n)
	{
		if (n > in_.size())
			throw Error(EPROTO, std::string(what_) + " truncated: needed " +
						    std::to_string(n) + " more bytes, " +
						    std::to_string(in_.size()) + " left");
		std::string_view v = in_.substr(0, n);
		in_.remove_prefix(n);
		return v;
	}
	std::string_view in_;
	const char *what_;
};

} // namespace svc
