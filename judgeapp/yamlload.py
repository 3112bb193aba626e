"""The one YAML reader of the project's data: safe, and strict about duplicate keys.

PyYAML keeps the last of two equal keys in a mapping without a word, so a policy with two `penalty:` lines, or
a `_game.yaml` with two `documents:`, would load with one of them silently lost. This loader refuses them,
naming the file, the key and both lines. It is PyYAML's safe loader otherwise (the C one, libyaml, when
PyYAML was built with it: it is several times faster on the larger files).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"


class DuplicateKeyError(yaml.YAMLError):
    """A mapping repeats a key; `name`, `key` and the 1-based `line`/`first_line` say where."""

    def __init__(self, name: str, key: Any, line: int, first_line: int):
        self.name, self.key, self.line, self.first_line = name, key, line, first_line
        super().__init__(
            f"{name}: duplicate key '{key}' on line {line} (first on line {first_line}); "
            f"YAML would keep only the second"
        )


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """The safe loader, refusing a key that a mapping already has."""

    source_name = "<yaml>"


def _strict_map(loader: StrictLoader, node: MappingNode):
    seen: dict[Any, int] = {}
    for key_node, _value in node.value:
        if key_node.tag == _MERGE:
            continue  # `<<: *base` merges; its keys may be overridden on purpose
        key = loader.construct_object(key_node, deep=True)
        try:
            first = seen.get(key)
        except TypeError:  # an unhashable key: PyYAML refuses it itself
            continue
        if first is not None:
            raise DuplicateKeyError(loader.source_name, key, key_node.start_mark.line + 1, first)
        seen[key] = key_node.start_mark.line + 1
    yield from loader.construct_yaml_map(node)


StrictLoader.add_constructor("tag:yaml.org,2002:map", _strict_map)


def load_yaml(source: str | Path, name: str | None = None, line_offset: int = 0) -> Any:
    """Parse YAML text, or the file at a Path; `name` (the file, by default) is named in every error.

    `line_offset` is added to line numbers (front matter that starts below the first line of its file)."""
    if isinstance(source, Path):
        name = name or str(source)
        text = source.read_text(encoding="utf-8")
    else:
        text = source
    loader = StrictLoader(text)
    loader.source_name = name or "<yaml>"
    try:
        return loader.get_single_data()
    except DuplicateKeyError as exc:
        if line_offset:
            raise DuplicateKeyError(
                exc.name, exc.key, exc.line + line_offset, exc.first_line + line_offset
            ) from None
        raise
    finally:
        loader.dispose()
