"""Replay search quality offline from the candidates `quality.py` kept: a fusion or a cut of
the semantic side tried on every question in seconds, without a vault or the model.

    python benchmarks/replay.py [--floor F ...] [--dir benchmarks/.cache/candidates]

For each set and each floor (the least cosine a note needs to count as a match by meaning),
prints recall@1/5/10 and MRR of semantic and hybrid search as memvault fuses them
(memvault/search/fusion.py), the mean number of hits on a page of 10 and the share of those
hits a page shows at relevance 0.00 (under 0.005: neither the query's words nor its meaning),
and the mean number of hits for the other sets' questions, which nothing in the set answers
(`noise`). `--text` prints what the run measured live: the mean characters of search_mem's
text answer and hits on its page, for the set's questions and for the others'.
The replay with no floor reproduces `quality.py`'s hybrid and semantic rows.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from statistics import fmean
from typing import Any

from memvault.search.fusion import fuse

HERE = Path(__file__).resolve().parent
PAGE = 10


def found(record: dict[str, Any], titles: list[str], k: int) -> float:
    """The share of a question's answers among the first k titles (any answer: 1 or 0)."""
    answers = set(record["answers"])
    got = len(answers & set(titles[:k]))
    return float(got > 0) if record["any_answer"] else got / len(answers)


def reciprocal_rank(record: dict[str, Any], titles: list[str]) -> float:
    answers = set(record["answers"])
    return next((1 / rank for rank, t in enumerate(titles[:PAGE], 1) if t in answers), 0.0)


def ranked(record: dict[str, Any], mode: str, floor: float) -> list[str]:
    """The question's titles in `mode`'s order, the semantic side cut at `floor`."""
    meaning = [(title, cosine) for title, cosine, _ in record["semantic"]["hits"]]
    meaning = [(title, cosine) for title, cosine in meaning if cosine >= floor]
    if mode == "semantic":
        return [title for title, _ in meaning]
    words = [(title, score) for title, score, _ in record["keyword"]["hits"]]
    held = record["keyword"]["hits"][0][2] if words else 1.0
    return [title for title, _ in fuse(words, meaning, held)]


def relevance(record: dict[str, Any]) -> dict[str, float]:
    """Each candidate's relevance as a hit shows it: its share of the query's words or its
    cosine, whichever is higher."""
    shown = {title: cosine for title, cosine, _ in record["semantic"]["hits"]}
    for title, _score, held in record["keyword"]["hits"]:
        shown[title] = max(held, shown.get(title, 0.0))
    return shown


def scores(records: list[dict[str, Any]], mode: str, floor: float) -> dict[str, float]:
    """Recall@1/5/10, MRR and page figures of `mode` over the records."""
    pairs = [(r, ranked(r, mode, floor)) for r in records if r["category"] != "offtopic"]
    noise = [ranked(r, mode, floor) for r in records if r["category"] == "offtopic"]
    shown = [relevance(r)[title] for r, titles in pairs for title in titles[:PAGE]]
    row = {f"R@{k}": fmean(found(r, t, k) for r, t in pairs) for k in (1, 5, 10)}
    row["MRR"] = fmean(reciprocal_rank(r, t) for r, t in pairs)
    row["page"] = fmean(min(PAGE, len(t)) for _, t in pairs)
    row["zero"] = fmean(value < 0.005 for value in shown) if shown else 0.0
    row["noise"] = fmean(min(PAGE, len(t)) for t in noise) if noise else 0.0
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--floor", type=float, nargs="+", default=[0.0])
    parser.add_argument("--dir", type=Path, default=HERE / ".cache" / "candidates")
    parser.add_argument("--text", action="store_true", help="the live answer sizes instead")
    args = parser.parse_args()
    if args.text:
        for path in sorted(args.dir.glob("*.jsonl")):
            records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
            for kind, chosen in (
                ("own", [r for r in records if r["category"] != "offtopic"]),
                ("offtopic", [r for r in records if r["category"] == "offtopic"]),
            ):
                if chosen:
                    chars = fmean(r["text_chars"] for r in chosen)
                    hits = fmean(r["page"] for r in chosen)
                    print(f"{path.stem:<10} {kind:<8} chars {chars:7.1f} hits {hits:5.2f}")
        return
    print(f"{'set':<10} {'mode':<8} {'floor':>5} " + " ".join(
        f"{h:>6}" for h in ("R@1", "R@5", "R@10", "MRR", "page", "zero", "noise")))  # fmt: skip
    for path in sorted(args.dir.glob("*.jsonl")):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for mode in ("semantic", "hybrid"):
            for floor in args.floor:
                row = scores(records, mode, floor)
                cells = " ".join(f"{row[key]:6.3f}" for key in ("R@1", "R@5", "R@10", "MRR"))
                page = f"{row['page']:6.2f} {row['zero']:6.3f} {row['noise']:6.2f}"
                print(f"{path.stem:<10} {mode:<8} {floor:5.2f} {cells} {page}")


if __name__ == "__main__":
    main()
