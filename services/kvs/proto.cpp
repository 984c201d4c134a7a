/*
 * proto.cpp: the broker message encoding of proto.hpp.
 */
#include "proto.hpp"

#include <cerrno>

#include "common/codec.hpp"
#include "error.hpp"

namespace kvs {

using svc::Writer;

namespace {

constexpr const char *kWhat = "broker message";

} // namespace

const char *msg_type_name(MsgType t) noexcept
{
	switch (t) {
	case MsgType::FENCE: return "fence";
	case MsgType::SETROOT: return "setroot";
	case MsgType::FENCE_ERR: return "fence-error";
	case MsgType::LOAD: return "load";
	case MsgType::LOAD_REPLY: return "load-reply";
	}
	return "unknown";
}

std::string msg_encode(const Msg &m)
{
	Writer w;
	w.u8(static_cast<uint8_t>(m.type));
	w.u32(m.src);
	switch (m.type) {
	case MsgType::FENCE:
		w.str(m.batch);
		break;
	case MsgType::SETROOT:
		w.u64(m.version);
		w.str(m.root_ref);
		w.str(m.root_obj);
		w.u32(static_cast<uint32_t>(m.names.size()));
		for (const auto &n : m.names)
			w.str(n);
		break;
	case MsgType::FENCE_ERR:
		w.str(m.names.empty() ? std::string() : m.names[0]);
		w.u32(static_cast<uint32_t>(m.errnum));
		w.str(m.error);
		break;
	case MsgType::LOAD:
		w.str(m.ref);
		break;
	case MsgType::LOAD_REPLY:
		w.str(m.ref);
		w.u32(static_cast<uint32_t>(m.errnum));
		w.str(m.error);
		w.str(m.data);
		break;
	}
	return w.take();
}

Msg msg_decode(std::string_view bytes)
{
	svc::Reader r(bytes, kWhat);
	Msg m;
	uint8_t type = r.u8();
	m.type = static_cast<MsgType>(type);
	m.src = r.u32();
	switch (m.type) {
	case MsgType::FENCE:
		m.batch = r.str();
		break;
	case MsgType::SETROOT: {
		m.version = r.u64();
		m.root_ref = r.str();
		m.root_obj = r.str();
		uint32_t n = r.u32();
		if (n > bytes.size())
			throw Error(EPROTO, "setroot message: " + std::to_string(n) +
						    " fence names cannot fit");
		for (uint32_t i = 0; i < n; i++)
			m.names.push_back(r.str());
		break;
	}
	case MsgType::FENCE_ERR:
		m.names.push_back(r.str());
		m.errnum = static_cast<int32_t>(r.u32());
		m.error = r.str();
		break;
	case MsgType::LOAD:
		m.ref = r.str();
		break;
	case MsgType::LOAD_REPLY:
		m.ref = r.str();
		m.errnum = static_cast<int32_t>(r.u32());
		m.error = r.str();
		m.data = r.str();
		break;
	default:
		throw Error(EPROTO, "broker message of unknown type " + std::to_string(type) +
					    " (expected 1-5)");
	}
	r.done();
	return m;
}

} // namespace kvs
