"""The plain full-text baseline memvault's keyword search is measured against.

    python benchmarks/keyword_baseline.py [--sets locomo npm-docs] [--weights 1 1] [--and-first]

The same question sets as quality.py, in one plain FTS5 table (title, body) in memory, tokenized
as memvault's index is; a question is asked as an OR of its words (memvault's stop words left
out), ranked by bm25. The options add one of memvault's own rules at a time (a title's weight,
the notes with every word first), to see what each does to recall on its own.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
from collections import defaultdict

from quality import SETS, QuestionSet, Score, _line

from memvault.search.query import STOPWORDS, TOKENIZE

_WORD = re.compile(r"\w+")


def terms(question: str) -> list[str]:
    """The question's words as quoted FTS5 strings, without stop words (all of them when
    nothing else is left)."""
    words = [w.lower() for w in _WORD.findall(question)]
    kept = [w for w in words if w not in STOPWORDS] or words
    return [f'"{w}"' for w in dict.fromkeys(kept)]


def measure(qs: QuestionSet, weights: tuple[float, float], and_first: bool) -> dict[str, Score]:
    """Recall and MRR of the plain bm25 OR query on one set, by question category."""
    db = sqlite3.connect(":memory:")
    db.execute(f"CREATE VIRTUAL TABLE t USING fts5(title, body, tokenize = '{TOKENIZE}')")
    db.executemany("INSERT INTO t (title, body) VALUES (?, ?)", qs.notes)
    rank = f"bm25(t, {weights[0]}, {weights[1]})"
    scores: dict[str, Score] = defaultdict(Score)
    for question in qs.questions:
        words = terms(question.text)
        if not words:
            continue
        first = "rowid IN (SELECT rowid FROM t WHERE t MATCH ?)" if and_first else "rowid < 0"
        rows = db.execute(
            f"SELECT title FROM t WHERE t MATCH ? ORDER BY {first} DESC, {rank} LIMIT 10",
            [" OR ".join(words), *([" AND ".join(words)] if and_first else [])],
        ).fetchall()
        titles = [str(r[0]).lower() for r in rows]
        scores["all"].add(question, titles)
        if question.category != "all":
            scores[question.category].add(question, titles)
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    parser.add_argument("--weights", nargs=2, type=float, default=(1.0, 1.0))
    parser.add_argument("--and-first", action="store_true", help="notes with every word first")
    args = parser.parse_args()
    print(_line("set", "mode", "category", "n", "R@1", "R@5", "R@10", "MRR"))
    for name in args.sets:
        scores = measure(SETS[name](), tuple(args.weights), args.and_first)
        for category in ["all", *sorted(c for c in scores if c != "all")]:
            row = scores[category].row()
            cells = [f"{row[key]:.3f}" for key in ("recall@1", "recall@5", "recall@10", "mrr")]
            print(_line(name, "plain", category, str(row["questions"]), *cells))


if __name__ == "__main__":
    main()
