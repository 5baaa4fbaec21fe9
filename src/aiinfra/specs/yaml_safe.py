"""YAML loading for user input (scenario files, ``--set`` values): PyYAML's safe loader, plus

- duplicate keys refused (YAML says keys are unique; PyYAML silently keeps the last),
- explicit tags (``!!python/object``, ``!!binary``, ``!foo`` ...) refused with a message that says so,
- the document bounded: bytes, nodes after alias expansion, nesting depth (a few hundred bytes of nested aliases
  otherwise expand to gigabytes downstream),
- numbers longer than Python converts refused.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.events import AliasEvent

from aiinfra.errors import SpecError

MAX_YAML_BYTES = 2**20
"""A scenario or --set value: 1 MiB, hundreds of times the largest shipped scenario (examples/: a few KB)."""
MAX_YAML_NODES = 100_000
"""Nodes after expanding aliases: a scenario has a few hundred; this refuses alias bombs before they expand."""
MAX_YAML_DEPTH = 100
"""Nesting depth: scenarios nest about 5 levels."""


class _Refused(Exception):
    def __init__(self, problem: str, fix: str, line: int | None) -> None:
        super().__init__(problem)
        self.problem, self.fix, self.line = problem, fix, line


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses explicit tags, counts depth, and refuses duplicate keys."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        """Compose one node after refusing explicit tags and nesting deeper than MAX_YAML_DEPTH."""
        event = self.peek_event()  # type: ignore[no-untyped-call]
        tag = getattr(event, "tag", None)
        if not isinstance(event, AliasEvent) and tag not in (None, "!"):
            shown = str(tag).replace("tag:yaml.org,2002:", "!!")
            raise _Refused(
                f"YAML tag {shown} is not allowed",
                "remove the tag: scenarios hold plain values only",
                event.start_mark.line + 1,
            )
        self._depth += 1
        if self._depth > MAX_YAML_DEPTH:
            raise _Refused(
                f"nested deeper than {MAX_YAML_DEPTH} levels", "flatten the document", event.start_mark.line + 1
            )
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        """Build a mapping after refusing duplicate and unhashable keys (merge keys aside)."""
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    duplicate = key in seen
                    seen.add(key)
                except TypeError:
                    raise _Refused(
                        "a mapping key is not a plain value", "use plain keys", key_node.start_mark.line + 1
                    ) from None
                if duplicate:
                    raise _Refused(
                        f"duplicate key '{key}'", "keep one of the two entries", key_node.start_mark.line + 1
                    )
        return super().construct_mapping(node, deep=deep)


def _expanded_nodes(root: Any) -> int:
    """Nodes of the document with every alias expanded, counted without expanding (memoised on node identity);
    stops counting once above the limit."""
    memo: dict[int, int] = {}

    def count(node: Any) -> int:
        key = id(node)
        if key in memo:
            return memo[key]
        memo[key] = MAX_YAML_NODES + 1  # a cycle counts as over the limit
        if isinstance(node, yaml.SequenceNode):
            n = 1 + sum(count(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            n = 1 + sum(count(k) + count(v) for k, v in node.value)
        else:
            n = 1
        memo[key] = min(n, MAX_YAML_NODES + 1)
        return memo[key]

    return count(root)


def load_yaml(text: str, field: str, value: str) -> Any:
    """Parse ``text``; any problem becomes a SpecError on ``field`` with ``value`` (a path or the raw text)."""
    if len(text.encode()) > MAX_YAML_BYTES:
        raise SpecError(field, value, f"YAML above {MAX_YAML_BYTES:,} bytes", "give a smaller document")
    loader: _Loader | None = None
    try:
        loader = _Loader(text)  # the reader refuses control characters here
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node) > MAX_YAML_NODES:
            raise _Refused(
                f"expands to more than {MAX_YAML_NODES:,} values (aliases)",
                "write the values out instead of nesting aliases",
                None,
            )
        return loader.construct_document(node)
    except _Refused as exc:
        where = f" at line {exc.line}" if exc.line else ""
        raise SpecError(field, value, exc.problem + where, exc.fix) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "syntax error"
        raise SpecError(field, value, f"not valid YAML{where}: {problem}", "fix the syntax") from None
    except (ValueError, RecursionError) as exc:  # a number longer than int() converts; nesting the parser cannot
        raise SpecError(field, value, f"not loadable YAML ({str(exc)[:80]})", "fix the value") from None
    finally:
        if loader is not None:
            loader.dispose()
