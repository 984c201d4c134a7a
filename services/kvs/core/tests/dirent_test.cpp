// dirent_test.cpp - canonical directory encoding, strict decoding, base64.
#include "dirent.hpp"

#include "base64.hpp"
#include "blobref.hpp"
#include "expect_error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <string>

using namespace kvs;

namespace {

const std::string ref_abc = "sha1-a9993e364706816aba3e25717850c26c9cd0d89d";

Directory sample()
{
	Directory d;
	d["zeta"] = Dirent{Dirent::Type::FILEVAL, "hello"};
	d["alpha"] = Dirent{Dirent::Type::DIRREF, ref_abc};
	d["mid-1"] = Dirent{Dirent::Type::FILEREF, blobref_hash("big")};
	d["bin"] = Dirent{Dirent::Type::FILEVAL, std::string("\0\xff\x01", 3)};
	d["empty"] = Dirent{Dirent::Type::FILEVAL, ""};
	return d;
}

} // namespace

TEST(Base64, Rfc4648Vectors)
{
	EXPECT_EQ(base64_encode(""), "");
	EXPECT_EQ(base64_encode("f"), "Zg==");
	EXPECT_EQ(base64_encode("fo"), "Zm8=");
	EXPECT_EQ(base64_encode("foo"), "Zm9v");
	EXPECT_EQ(base64_encode("foob"), "Zm9vYg==");
	EXPECT_EQ(base64_encode("fooba"), "Zm9vYmE=");
	EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
	EXPECT_EQ(base64_decode("Zm9vYmE="), "fooba");
	EXPECT_EQ(base64_decode(""), "");
}

TEST(Base64, RoundTripAllBytes)
{
	std::string all;
	for (int i = 0; i < 256; i++)
		all.push_back(static_cast<char>(i));
	for (size_t n = 0; n <= all.size(); n += 37)
		EXPECT_EQ(base64_decode(base64_encode(all.substr(0, n))), all.substr(0, n));
}

TEST(Base64, StrictRejects)
{
	EXPECT_FALSE(base64_decode("Zg="));       // length not a multiple of 4
	EXPECT_FALSE(base64_decode("Zg"));        // unpadded
	EXPECT_FALSE(base64_decode("Zh=="));      // non-zero unused bits
	EXPECT_FALSE(base64_decode("Zm9="));      // non-zero unused bits
	EXPECT_FALSE(base64_decode("Z=9v"));      // padding in the middle
	EXPECT_FALSE(base64_decode("Zg==Zm9v"));  // padding before the end
	EXPECT_FALSE(base64_decode("Zm9 "));      // whitespace
	EXPECT_FALSE(base64_decode("Zm-v"));      // URL alphabet
	EXPECT_FALSE(base64_decode("===="));
}

TEST(Dirent, EmptyDirectory)
{
	EXPECT_EQ(dir_encode({}), "{}");
	EXPECT_TRUE(dir_decode("{}").empty());
	EXPECT_TRUE(dir_decode(" { } ").empty());
}

TEST(Dirent, ExactCanonicalBytes)
{
	Directory d;
	d["b"] = Dirent{Dirent::Type::FILEVAL, "foo"};
	d["a"] = Dirent{Dirent::Type::DIRREF, ref_abc};
	EXPECT_EQ(dir_encode(d), "{\"a\":{\"DIRREF\":\"" + ref_abc + "\"},\"b\":{\"FILEVAL\":\"Zm9v\"}}");
}

TEST(Dirent, RoundTrip)
{
	Directory d = sample();
	std::string text = dir_encode(d);
	EXPECT_EQ(dir_decode(text), d);
	EXPECT_EQ(dir_encode(dir_decode(text)), text);
}

TEST(Dirent, CanonicalMatchesGeneralSerialiser)
{
	// The hand-written encoder emits exactly what nlohmann's compact dump of
	// the same sorted object emits.
	std::string text = dir_encode(sample());
	EXPECT_EQ(nlohmann::json::parse(text).dump(), text);
}

TEST(Dirent, CanonicalIndependentOfInsertionOrderAndSpelling)
{
	Directory a, b;
	a["x"] = Dirent{Dirent::Type::FILEVAL, "1"};
	a["y"] = Dirent{Dirent::Type::FILEVAL, "2"};
	b["y"] = Dirent{Dirent::Type::FILEVAL, "2"};
	b["x"] = Dirent{Dirent::Type::FILEVAL, "1"};
	EXPECT_EQ(dir_encode(a), dir_encode(b));
	EXPECT_EQ(blobref_hash(dir_encode(a)), blobref_hash(dir_encode(b)));
	// A non-canonical spelling decodes to the same directory and re-encodes canonically.
	std::string spaced = "{ \"y\" : {\"FILEVAL\":\"Mg==\"},\n \"x\":{\"FILEVAL\":\"MQ==\"} }";
	EXPECT_EQ(dir_encode(dir_decode(spaced)), dir_encode(a));
}

TEST(Dirent, CanonicalAndGeneralPathsAgree)
{
	Directory d = sample();
	for (int i = 0; i < 200; i++) {
		std::string v(static_cast<size_t>(i % 50), static_cast<char>(i));
		d["k" + std::to_string(i)] = i % 3 ? Dirent{Dirent::Type::FILEVAL, v}
						   : Dirent{Dirent::Type::FILEREF, blobref_hash(v)};
	}
	std::string text = dir_encode(d);
	EXPECT_EQ(dir_decode(text), d);
	// A leading space is valid JSON but not canonical: the general parser
	// decodes it, and must agree with the canonical scanner.
	EXPECT_EQ(dir_decode(" " + text), d);
}

TEST(Dirent, NonCanonicalSpellingsDecode)
{
	Directory d = dir_decode(R"({"b":{"FILEVAL":"MQ=="},"a":{"FILEVAL":"Mg=="}})");
	EXPECT_EQ(d.size(), 2u);
	EXPECT_EQ(d.at("a").data, "2");
	EXPECT_EQ(dir_decode(R"({"\u0061":{"FILEVAL":"MQ=="}})").at("a").data, "1");
	EXPECT_EQ(dir_decode(R"({"a":{"FILEVAL":"L\u0077=="}})").at("a").data, "/");
	EXPECT_EQ(dir_decode(R"({"a":{"FILEVAL":"Lw\/9"}})").at("a").data, std::string("/\x0f\xfd", 3));
}

TEST(Dirent, MalformedInput)
{
	EXPECT_KVS_ERROR(dir_decode(""), EPROTO, "corrupt directory object: not valid JSON");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":"), EPROTO, "not valid JSON");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEVAL\":\"Zg==\"}} trailing"), EPROTO, "not valid JSON");
	EXPECT_KVS_ERROR(dir_decode("[]"), EPROTO, "expected a JSON object of entries, got array");
	EXPECT_KVS_ERROR(dir_decode("\"x\""), EPROTO, "got string");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":1}"), EPROTO, "entry 'a' must be an object with exactly one of FILEVAL, FILEREF, DIRREF");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{}}"), EPROTO, "exactly one");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEVAL\":\"Zg==\",\"DIRREF\":\"" + ref_abc + "\"}}"), EPROTO, "exactly one");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"LINKVAL\":\"b\"}}"), EPROTO, "entry 'a' has unknown type 'LINKVAL' (accepted: FILEVAL, FILEREF, DIRREF)");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEVAL\":42}}"), EPROTO, "entry 'a' FILEVAL must be a string, got number");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEVAL\":\"Zg=\"}}"), EPROTO, "FILEVAL is not canonical base64");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"DIRREF\":\"sha1-xyz\"}}"), EPROTO, "DIRREF 'sha1-xyz' is not a blobref");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEREF\":\"" + ref_abc.substr(0, 44) + "\"}}"), EPROTO, "is not a blobref");
	EXPECT_KVS_ERROR(dir_decode("{\"a.b\":{\"FILEVAL\":\"\"}}"), EPROTO, "entry name 'a.b' is not a key component");
	EXPECT_KVS_ERROR(dir_decode("{\"\":{\"FILEVAL\":\"\"}}"), EPROTO, "entry name ''");
	EXPECT_KVS_ERROR(dir_decode("{\"a\":{\"FILEVAL\":\"\"}"), EPROTO, "not valid JSON");
	EXPECT_KVS_ERROR(dir_decode(R"({"a":{"FILEVAL":"MQ=="},"a":{"FILEVAL":"Mg=="}})"), EPROTO, "name 'a' appears twice in one object");
	EXPECT_KVS_ERROR(dir_decode(R"({"a":{"FILEVAL":"MQ=="},"\u0061":{"FILEVAL":"Mg=="}})"), EPROTO, "name 'a' appears twice in one object");
	EXPECT_KVS_ERROR(dir_decode(R"({"a":{"FILEVAL":"MQ==","FILEVAL":"Mg=="}})"), EPROTO, "name 'FILEVAL' appears twice in one object");
	EXPECT_KVS_ERROR(dir_decode(std::string("{\"a\xff\":{\"FILEVAL\":\"\"}}")), EPROTO, "not valid JSON");
}

TEST(Dirent, TypeNames)
{
	EXPECT_STREQ(dirent_type_name(Dirent::Type::FILEVAL), "FILEVAL");
	EXPECT_STREQ(dirent_type_name(Dirent::Type::FILEREF), "FILEREF");
	EXPECT_STREQ(dirent_type_name(Dirent::Type::DIRREF), "DIRREF");
}
