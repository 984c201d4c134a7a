// lookup.cpp - key resolution with fault-in (see lookup.hpp).
#include "lookup.hpp"

#include "blobref.hpp"
#include "error.hpp"
#include "key.hpp"

#include <cerrno>

namespace kvs {

namespace {

// Walks parts[0 .. n) as directories from the root. Returns the directory
// reached (owned by the store), or nullptr with *missing set to the first
// absent object's ref.
const Directory* walk(ContentStore& store, const std::string& root_ref,
		      const std::vector<std::string>& parts, size_t n, std::string_view key,
		      std::string* missing)
{
	if (!blobref_valid(root_ref))
		throw Error(EINVAL, "root " + key_quote(root_ref) +
					    " is not a blobref (sha1- and 40 lower-case hex digits)");
	const Directory* dir = store.find_dir(root_ref);
	if (!dir) {
		*missing = root_ref;
		return nullptr;
	}
	for (size_t i = 0; i < n; i++) {
		auto it = dir->find(parts[i]);
		if (it == dir->end())
			throw Error(ENOENT, "key " + key_quote(key) + " not found: " +
						    key_quote(key_join(parts, i + 1)) + " does not exist");
		if (it->second.type != Dirent::Type::DIRREF)
			throw Error(ENOTDIR, "key " + key_quote(key) + ": " +
						     key_quote(key_join(parts, i + 1)) +
						     " is a value, not a directory");
		const std::string& ref = it->second.data;
		dir = store.find_dir(ref);
		if (!dir) {
			*missing = ref;
			return nullptr;
		}
	}
	return dir;
}

} // namespace

Lookup lookup(ContentStore& store, const std::string& root_ref, std::string_view key)
{
	std::vector<std::string> parts = key_split(key);
	Lookup res{Lookup::Status::MISSING_OBJECT, {}, {}};
	const Directory* dir = walk(store, root_ref, parts, parts.size() - 1, key, &res.missing_ref);
	if (!dir)
		return res;

	auto it = dir->find(parts.back());
	if (it == dir->end())
		throw Error(ENOENT, "key " + key_quote(key) + " not found");
	const Dirent& ent = it->second;
	switch (ent.type) {
	case Dirent::Type::DIRREF:
		throw Error(EISDIR, "key " + key_quote(key) +
					    " is a directory, not a value (list it with ls)");
	case Dirent::Type::FILEVAL:
		res.status = Lookup::Status::FOUND;
		res.value = ent.data;
		return res;
	case Dirent::Type::FILEREF:
		if (const std::string* blob = store.find(ent.data)) {
			res.status = Lookup::Status::FOUND;
			res.value = *blob;
		} else {
			res.missing_ref = ent.data;
		}
		return res;
	}
	throw Error(EPROTO, "key " + key_quote(key) + " has an entry of unknown type");
}

Listing lookup_dir(ContentStore& store, const std::string& root_ref, std::string_view dirkey)
{
	std::vector<std::string> parts = key_split_dir(dirkey);
	Listing res{Listing::Status::MISSING_OBJECT, {}, {}};
	const Directory* dir = walk(store, root_ref, parts, parts.size(), dirkey, &res.missing_ref);
	if (!dir)
		return res;
	res.status = Listing::Status::FOUND;
	res.dir = *dir;
	return res;
}

} // namespace kvs
