// apply.cpp - copy-on-write application of ops to a root (see apply.hpp).
#include "apply.hpp"

#include "blobref.hpp"
#include "error.hpp"
#include "key.hpp"

#include <cerrno>
#include <memory>
#include <unordered_map>

namespace kvs {

Directory dir_load(ContentStore& store, const std::string& ref, const std::string& what)
{
	const Directory* dir = store.find_dir(ref);
	if (!dir)
		throw Error(ENOENT, "directory object " + ref + " of " + what +
					    " is not in the content store (a dangling reference)");
	return *dir;
}

std::string empty_root(ContentStore& store)
{
	return store.store_dir({});
}

namespace {

// One directory of the working tree: its entries as edited so far, and the
// subdirectories the ops have entered (each DIRREF entry with a node here
// gets its ref from that node when the tree is stored).
struct Node {
	Directory dir;
	std::unordered_map<std::string, std::unique_ptr<Node>> kids;
	bool dirty = false;
};

class Applier {
public:
	Applier(ContentStore& store, const std::string& root_ref, const Limits& lim)
		: store_(store), lim_(lim)
	{
		if (!blobref_valid(root_ref))
			throw Error(EINVAL, "root " + key_quote(root_ref) +
						    " is not a blobref (sha1- and 40 lower-case hex digits)");
		root_.dir = dir_load(store_, root_ref, "the root");
	}

	void put(const Op& op);
	void unlink(const Op& op);
	bool changed() const { return root_.dirty; }
	std::string commit() { return node_store(root_); }
	size_t objects_stored() const { return stored_; }

private:
	Node* kid_enter(Node& n, const std::string& name, const std::vector<std::string>& parts,
			size_t depth);
	std::string node_store(Node& n);

	ContentStore& store_;
	const Limits& lim_;
	Node root_;
	// Values to store as blobs, by ref; pointers into the caller's ops.
	std::unordered_map<std::string, const std::string*> blobs_;
	std::vector<Node*> path_;
	size_t stored_ = 0;
};

// The loaded subdirectory `name` of `n` (parts[depth]), loading it on first
// entry; nullptr if there is no such entry or it is a value.
Node* Applier::kid_enter(Node& n, const std::string& name, const std::vector<std::string>& parts,
			 size_t depth)
{
	if (auto it = n.kids.find(name); it != n.kids.end())
		return it->second.get();
	auto ent = n.dir.find(name);
	if (ent == n.dir.end() || ent->second.type != Dirent::Type::DIRREF)
		return nullptr;
	auto kid = std::make_unique<Node>();
	kid->dir = dir_load(store_, ent->second.data,
			    "directory " + key_quote(key_join(parts, depth + 1)));
	Node* raw = kid.get();
	n.kids.emplace(name, std::move(kid));
	return raw;
}

void Applier::put(const Op& op)
{
	std::vector<std::string> parts = key_split(op.key);
	if (op.value.size() > lim_.max_value)
		throw Error(EFBIG, "value for key " + key_quote(op.key) + " is " +
					   std::to_string(op.value.size()) + " bytes (the limit is " +
					   std::to_string(lim_.max_value) + " bytes)");

	path_.assign(1, &root_);
	Node* n = &root_;
	for (size_t i = 0; i + 1 < parts.size(); i++) {
		const std::string& name = parts[i];
		Node* kid = kid_enter(*n, name, parts, i);
		if (!kid) {
			if (n->dir.contains(name))
				throw Error(ENOTDIR, "cannot put " + key_quote(op.key) + ": " +
							     key_quote(key_join(parts, i + 1)) +
							     " is a value, not a directory (nothing was applied)");
			auto made = std::make_unique<Node>();
			kid = made.get();
			n->dir[name] = Dirent{Dirent::Type::DIRREF, {}}; // ref set when stored
			n->kids.emplace(name, std::move(made));
		}
		n = kid;
		path_.push_back(n);
	}

	const std::string& leaf = parts.back();
	Dirent ent;
	if (op.value.size() < lim_.inline_max) {
		ent = Dirent{Dirent::Type::FILEVAL, op.value};
	} else {
		ent = Dirent{Dirent::Type::FILEREF, blobref_hash(op.value)};
		blobs_.try_emplace(ent.data, &op.value);
	}
	auto it = n->dir.find(leaf);
	if (it != n->dir.end() && it->second == ent && !n->kids.contains(leaf))
		return; // same value already there
	n->dir[leaf] = std::move(ent);
	n->kids.erase(leaf);
	for (Node* p : path_)
		p->dirty = true;
}

void Applier::unlink(const Op& op)
{
	std::vector<std::string> parts = key_split(op.key);
	path_.assign(1, &root_);
	Node* n = &root_;
	for (size_t i = 0; i + 1 < parts.size(); i++) {
		n = kid_enter(*n, parts[i], parts, i);
		if (!n)
			return; // no such directory: nothing to unlink
		path_.push_back(n);
	}
	if (n->dir.erase(parts.back()) == 0)
		return;
	n->kids.erase(parts.back());
	for (Node* p : path_)
		p->dirty = true;
}

// Stores the dirty subtree below and including `n`, children first, and
// returns n's new ref. The store keeps each directory decoded, so the next
// fence that touches it starts from a copy instead of a JSON decode.
std::string Applier::node_store(Node& n)
{
	for (auto& [name, kid] : n.kids) {
		if (kid->dirty)
			n.dir[name] = Dirent{Dirent::Type::DIRREF, node_store(*kid)};
	}
	if (!blobs_.empty()) {
		for (const auto& [name, ent] : n.dir) {
			if (ent.type != Dirent::Type::FILEREF)
				continue;
			auto b = blobs_.find(ent.data);
			if (b == blobs_.end())
				continue;
			store_.store(*b->second);
			stored_++;
			blobs_.erase(b);
		}
	}
	stored_++;
	return store_.store_dir(std::move(n.dir));
}

} // namespace

Applied apply_ops(ContentStore& store, const std::string& root_ref, const std::vector<Op>& ops,
		  const Limits& lim)
{
	Applier a(store, root_ref, lim);
	for (const auto& op : ops) {
		if (op.unlink)
			a.unlink(op);
		else
			a.put(op);
	}
	Applied res;
	res.ops_applied = ops.size();
	if (a.changed()) {
		res.root_ref = a.commit();
		res.objects_stored = a.objects_stored();
	} else {
		res.root_ref = root_ref;
	}
	return res;
}

} // namespace kvs
