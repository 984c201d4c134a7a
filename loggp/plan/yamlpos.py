"""YAML loading that remembers where every key and item came from.

Validation errors must point at file:line and the key, so the document is composed into
PyYAML's node tree (which carries marks) and converted to plain Python values alongside a
map from each value's path, e.g. ("workloads", 0, "ranks"), to its 1-based line.

Merge keys (`<<: *base`, `<<: [*a, *b]`) work as YAML 1.1 defines them: the mapping's own
keys win, then the merged mappings' in the order listed; a merged value's line is where it
was written.

Hostile files get one line too: text that is not UTF-8 (the byte, its offset and line),
aliases that would expand past MAX_ALIAS_VALUES values ("billion laughs") or refer to
themselves, nesting deeper than MAX_DEPTH levels, a tag that is not one of YAML's plain
types (`!foo`, `!!binary`, `!!set`), a value its tag cannot hold (`!!int abc`, an integer of
more than 4300 digits, `!!timestamp 2001-13-45`) and a NUL byte in a text value (no
argument, path or name can hold one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from loggp.errors import LoggpError, one_line

Path_ = tuple[str | int, ...]

# Values that aliases (*name) may add to a document; an experiment needs a handful.
MAX_ALIAS_VALUES = 10_000
# Levels of nesting a document may have; an experiment has five.
MAX_DEPTH = 50
_ACCEPTED = "accepted: untagged values, or !!str, !!int, !!float, !!bool, !!null, !!seq, !!map"


class YamlError(LoggpError):
    """The file is not YAML, or not a mapping at the top."""

    exit_code = 2


@dataclass
class Located:
    """A loaded document and the line of every path in it."""

    data: Any
    lines: dict[Path_, int] = field(default_factory=dict)

    def line_of(self, path: Path_) -> int | None:
        """The line of path, or of its nearest ancestor that has one."""
        for n in range(len(path), -1, -1):
            line = self.lines.get(tuple(path[:n]))
            if line is not None:
                return line
        return None


_TAG = "tag:yaml.org,2002:"
# The tags an experiment's values may carry, written (`!!int 5`) or implied (`5`).
SCALAR_TAGS = frozenset(_TAG + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
COLLECTION_TAGS = frozenset({_TAG + "seq", _TAG + "map"})


def _tag_text(tag: str) -> str:
    return "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag


def decode_text(data: bytes, source: str) -> str:
    """UTF-8 text, or a YamlError naming the first bad byte, its offset and its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise YamlError(
            f"{source}:{line}: not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} "
            "(save the file as UTF-8)"
        ) from None


@dataclass
class _Converter:
    """Node tree to values; counts what aliases add and refuses cycles and depth."""

    source: str
    lines: dict[Path_, int] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)  # nodes converted once: anchors
    open_: set[int] = field(default_factory=set)  # nodes being converted: ancestors
    aliased: int = 0  # values made again by aliases
    in_alias: int = 0  # depth inside an alias being expanded

    def fail(self, node: yaml.Node, msg: str) -> YamlError:
        return YamlError(f"{self.source}:{node.start_mark.line + 1}: {msg}")

    def scalar(self, node: yaml.Node) -> Any:
        """A scalar node's value with YAML's safe typing (int, float, bool, null, text,
        date); YamlError for any other tag, a value its tag cannot hold, or a NUL byte."""
        if node.tag not in SCALAR_TAGS:
            raise self.fail(node, f"tag {_tag_text(node.tag)} is not accepted ({_ACCEPTED})")
        try:
            value = yaml.constructor.SafeConstructor().construct_object(node, deep=True)
        except (ValueError, OverflowError, yaml.YAMLError) as e:
            text = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            why = one_line(e).split(";")[0]  # not Python's advice on raising its digit cap
            raise self.fail(node, f"{text!r} is not a valid {_tag_text(node.tag)}: {why}") from None
        if isinstance(value, str) and "\0" in value:
            raise self.fail(
                node,
                f"a NUL byte (\\0) at character {value.index(chr(0))} of {value[:40]!r}: "
                "no argument, path or name can hold one",
            )
        return value

    def convert(self, node: yaml.Node, path: Path_) -> Any:
        if len(path) > MAX_DEPTH:
            raise self.fail(node, f"nested deeper than {MAX_DEPTH} levels")
        if id(node) in self.open_:
            raise self.fail(node, "an alias refers to the value that holds it (a cycle)")
        again = id(node) in self.seen
        self.seen.add(id(node))
        self.in_alias += again
        if self.in_alias:
            self.aliased += 1
            if self.aliased > MAX_ALIAS_VALUES:
                raise self.fail(
                    node,
                    f"aliases expand to more than {MAX_ALIAS_VALUES} values (the cap on "
                    "alias expansion): write the values out, or use fewer aliases",
                )
        self.open_.add(id(node))
        try:
            return self._value(node, path)
        finally:
            self.open_.discard(id(node))
            self.in_alias -= again

    def _merged(self, value_node: yaml.Node, path: Path_) -> dict[str, Any]:
        """What a merge key adds: its mappings' keys, the first listed winning."""
        sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
        out: dict[str, Any] = {}
        for src in sources:
            if not isinstance(src, yaml.MappingNode):
                raise self.fail(src, "a merge key (<<) takes a mapping or a list of mappings")
            for k, v in self.convert(src, path).items():
                out.setdefault(k, v)
        return out

    def _value(self, node: yaml.Node, path: Path_) -> Any:
        line = node.start_mark.line + 1
        if isinstance(node, yaml.CollectionNode) and node.tag not in COLLECTION_TAGS:
            raise self.fail(node, f"tag {_tag_text(node.tag)} is not accepted ({_ACCEPTED})")
        if isinstance(node, yaml.MappingNode):
            out: dict[str, Any] = {}
            merged: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    for k, v in self._merged(value_node, path).items():
                        merged.setdefault(k, v)
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.fail(key_node, "keys must be text, not a list or mapping")
                key = self.scalar(key_node)
                if not isinstance(key, str):
                    raise self.fail(key_node, f"keys must be text, not {key!r}")
                if key in out:
                    raise self.fail(key_node, f"duplicate key '{key}'")
                sub = (*path, key)
                out[key] = self.convert(value_node, sub)
                self.lines[sub] = key_node.start_mark.line + 1
            for k, v in merged.items():
                out.setdefault(k, v)
            self.lines[path] = line
            return out
        self.lines[path] = line
        if isinstance(node, yaml.SequenceNode):
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        return self.scalar(node)


def load_located(text: str, source: str) -> Located:
    """Parse text (named source in messages) into a Located mapping; YamlError otherwise."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except RecursionError:
        raise YamlError(f"{source}: nested deeper than {MAX_DEPTH} levels") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise YamlError(f"{where}: not valid YAML: {problem}") from None
    if node is None:
        raise YamlError(f"{source}: empty file: expected an experiment (a mapping of keys)")
    if not isinstance(node, yaml.MappingNode):
        raise YamlError(
            f"{source}:{node.start_mark.line + 1}: expected a mapping of keys at the top"
        )
    converter = _Converter(source)
    data = converter.convert(node, ())
    return Located(data, converter.lines)
