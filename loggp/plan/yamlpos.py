"""YAML loading that remembers where every key and item came from.

Validation errors must point at file:line and the key, so the document is composed into
PyYAML's node tree (which carries marks) and converted to plain Python values alongside a
map from each value's path, e.g. ("workloads", 0, "ranks"), to its 1-based line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from loggp.errors import LoggpError

Path_ = tuple[str | int, ...]


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


def _scalar(node: yaml.Node) -> Any:
    """A scalar node's value with YAML's safe typing (int, float, bool, null, text)."""
    return yaml.constructor.SafeConstructor().construct_object(node, deep=True)


def _convert(node: yaml.Node, path: Path_, lines: dict[Path_, int], source: str) -> Any:
    lines[path] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key = _scalar(key_node)
            if not isinstance(key, str):
                raise YamlError(
                    f"{source}:{key_node.start_mark.line + 1}: keys must be text, not {key!r}"
                )
            if key in out:
                raise YamlError(f"{source}:{key_node.start_mark.line + 1}: duplicate key '{key}'")
            sub = (*path, key)
            out[key] = _convert(value_node, sub, lines, source)
            lines[sub] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), lines, source) for i, item in enumerate(node.value)]
    return _scalar(node)


def load_located(text: str, source: str) -> Located:
    """Parse text (named source in messages) into a Located mapping; YamlError otherwise."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
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
    lines: dict[Path_, int] = {}
    data = _convert(node, (), lines, source)
    return Located(data, lines)
