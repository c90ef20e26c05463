"""A source's relations as links: the relations between two entries gathered into one link
both ways, each side's line saying every relation in words (`works_at Acme`, `Acme employs`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.features.importers.records import Relation, Skip


@dataclass
class Pair:
    """The relations between entries `a` and `b` (source ids): `forward` from a to b,
    `backward` from b to a, and where each is in the file."""

    a: str
    b: str
    forward: list[str] = field(default_factory=list)
    backward: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        """Where the pair's relations are, as a report names them."""
        return ", ".join(self.lines)

    def texts(self) -> tuple[str, str]:
        """The words of the link in a's list (to b) and in b's (to a)."""
        in_a = [f"{kind} {self.b}" for kind in self.forward]
        in_a += [f"{self.b} {kind}" for kind in self.backward]
        in_b = [f"{self.a} {kind}" for kind in self.forward]
        in_b += [f"{kind} {self.a}" for kind in self.backward]
        return "; ".join(in_a), "; ".join(in_b)


def pairs(relations: list[Relation | Skip], skip: Callable[[Skip], None]) -> list[Pair]:
    """The relations gathered by the two entries they join, in the order first met; each
    malformed one, or one of an entry with itself, handed to `skip`."""
    found: dict[frozenset[str], Pair] = {}
    for relation in relations:
        if isinstance(relation, Skip):
            skip(relation)
            continue
        if relation.source_id == relation.target_id:
            skip(Skip(relation.where, "it relates an entity to itself"))
            continue
        key = frozenset((relation.source_id, relation.target_id))
        pair = found.setdefault(key, Pair(relation.source_id, relation.target_id))
        kinds = pair.forward if relation.source_id == pair.a else pair.backward
        if relation.kind not in kinds:
            kinds.append(relation.kind)
        pair.lines.append(relation.where)
    return list(found.values())
